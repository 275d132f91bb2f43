package rules

import (
	"context"
	"time"
)

// Rail moves money to a destination. A real connector (an ACH file, a Bre-B or CCE
// gateway, VISA Direct) implements it; this binary ships only the sandbox's simulated rail (rules/sandbox) and UnconnectedRail. Both calls are
// made outside any database transaction, and the payout either is given is the lifecycle
// round's for the call only: the round hands it to its step next (RoundReads), so a rail
// keeps no reference to it.
type Rail interface {
	// Submit hands a payout to the rail and says when to ask for its outcome.
	Submit(ctx context.Context, p *Payout) (Submission, error)
	// Outcome asks what became of a submitted payout.
	Outcome(ctx context.Context, p *Payout, now time.Time) (Outcome, error)
}

// Submission is the rail's receipt.
type Submission struct {
	Reference string
	CheckAt   time.Time
}

// Outcome is what the rail says of a submitted payout. Until Settled, CheckAt says when to
// ask again; a zero CheckAt waits for an outside event (a cash claim, a sandbox simulate).
type Outcome struct {
	Settled bool
	Status  Status // PROCESSED, or a REJECTED status
	Code    string
	Note    string
	CheckAt time.Time
	// Then, on a settled outcome, says the rail has a later word on the payout this long
	// after it (a scripted return after the money was paid, for one); zero: none. The
	// lifecycle asks Outcome again then, with the payout in its settled status.
	Then time.Duration
}

// UnconnectedRail is the rail of a server run with --sandbox=false: this binary ships no
// real connector, so every submission fails and the payout waits in WAITING_ROUTING,
// retried, until one is plugged in.
type UnconnectedRail struct{}

var errNoConnector = errorString("no rail connector is configured: run with --sandbox or plug a connector in")

type errorString string

func (e errorString) Error() string { return string(e) }

// Submit always fails.
func (UnconnectedRail) Submit(context.Context, *Payout) (Submission, error) {
	return Submission{}, errNoConnector
}

// Outcome always fails.
func (UnconnectedRail) Outcome(context.Context, *Payout, time.Time) (Outcome, error) {
	return Outcome{}, errNoConnector
}
