// Package workers holds the background workers that drive the domain's records on: the
// lifecycle's worker, which asks the rails and records their answers as the domain
// lifecycle's steps; the dispatcher, which delivers the outbox's events with retries and
// dead letters; and the batch runner, which turns approved batches into payouts and notifies
// their end. Their queues are in the store (rules' interfaces), so a restart resumes them.
// Standard library and rules only.
package workers
