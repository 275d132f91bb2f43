// Package rules is the payout domain: payouts, merchants, stages and statuses, the
// error catalogue, the Colombia and Peru rule tables and the lifecycle. It imports only
// the standard library; store/, api/ and web/ depend on it, never the other way round.
package rules
