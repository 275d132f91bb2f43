// Package rules is the payout domain: payouts, merchants, stages and statuses, the error
// catalogue, the Colombia and Peru rule tables, validation and the lifecycle's transitions.
// It imports only the standard library; store/, api/ and web/ depend on it, never the other
// way round. Beside it, importing only it and the standard library: merchants/ (merchants
// and their keys), sandbox/ (what --sandbox puts in place of the outside world), workers/
// (the lifecycle's worker, the outbox's dispatcher and the batch runner) and requirements/
// (the JSON Schema of a destination, generated from the tables as Tables describes them).
package rules
