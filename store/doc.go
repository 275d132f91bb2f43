// Package store keeps everything in one bbolt file: merchants, payouts and their indexes,
// balances, the lifecycle queue, the outbox and the card-form sessions. It implements the
// interfaces declared in rules/ and knows nothing of HTTP.
package store
