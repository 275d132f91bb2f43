// Package bolt is the default storage engine: everything in one bbolt file (merchants,
// payouts and their indexes, balances, the outbox and the card-form sessions), written by
// one group-commit writer; the lifecycle queue is an index of the payouts' states kept in
// memory and rebuilt from them at open (due.go). It implements rules.Storage and knows
// nothing of HTTP.
package bolt
