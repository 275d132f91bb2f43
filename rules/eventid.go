package rules

import (
	"strconv"
	"strings"
)

// Event ids name what an event announces: its kind, then the payout (or b and the batch)
// and the status, as in merchant.notification.1042.PROCESSED. They are made only of
// characters a URL path carries unencoded (RFC 3986's unreserved: letters, digits, "-",
// ".", "_", "~"), so that a merchant's client reads and resends an event at
// /events/{eventId} whether or not it percent-encodes the path, and signs what it sends.
// Ids written before joined their parts with ":" (merchant.notification:1042:PROCESSED);
// they stay what they are, readable and resendable, and are read by the same functions.

// eventIDSeparator joins an id's parts; legacyEventIDSeparator joined them before.
const (
	eventIDSeparator       = "."
	legacyEventIDSeparator = ":"
)

// eventKinds are the kinds an id may start with.
var eventKinds = []string{EventMerchantNotification, EventBatchNotification, EventBeneficiaryMail, EventCashOTP, EventLinkMail, EventLinkNotification}

// newEventID is the id of an event of kind named by parts.
func newEventID(kind string, parts ...string) string {
	return kind + eventIDSeparator + strings.Join(parts, eventIDSeparator)
}

// OutcomeEventID is the id of the event of kind that announces payout's status.
func OutcomeEventID(kind string, payout int64, status Status) string {
	return newEventID(kind, strconv.FormatInt(payout, 10), string(status))
}

// splitEventID reads an id of either form: its kind and the parts after it. ok is false for
// an id of no known kind.
func splitEventID(id string) (kind string, parts []string, ok bool) {
	for _, k := range eventKinds {
		rest, found := strings.CutPrefix(id, k)
		if !found || rest == "" {
			continue
		}
		sep := rest[:1]
		if sep != eventIDSeparator && sep != legacyEventIDSeparator {
			continue
		}
		return k, strings.Split(rest[1:], sep), true
	}
	return "", nil, false
}

// EventBatchNotification is the merchant notification of a batch whose every item reached a
// final stage; it travels the notify lane and is signed as the payouts' are. Its id is
// batch.notification.b<id>.COMPLETED (the b keeps it from being read as a payout id).
const EventBatchNotification = "batch.notification"

// BatchEventID is the id of batch id's notification.
func BatchEventID(id int64) string {
	return newEventID(EventBatchNotification, "b"+strconv.FormatInt(id, 10), string(BatchCompleted))
}
