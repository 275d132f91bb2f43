// Package bolt is the default storage engine: everything in one bbolt file (merchants,
// payouts and their indexes, balances, the lifecycle queue, the outbox and the card-form
// sessions), written by one group-commit writer. It implements rules.Storage and knows
// nothing of HTTP.
package bolt
