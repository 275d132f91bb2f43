package rules

import (
	"strconv"
	"time"
)

// OutcomeEvents are the events a payout's outcome causes (spec 6, contract section 7): an
// email to the beneficiary when the merchant has email notifications on and the payout
// has beneficiary.email, and a merchant notification when the merchant has a
// notificationUrl. Their ids name the payout and the outcome, so that one outcome can
// never be delivered twice.
func OutcomeEvents(p *Payout, m *Merchant, now time.Time) []Event {
	var evs []Event
	id := strconv.FormatInt(p.ID, 10) + ":" + string(p.Status)
	if m.Settings.EmailNotifications && p.Request.Beneficiary.Email != "" {
		evs = append(evs, Event{ID: EventBeneficiaryMail + ":" + id, Kind: EventBeneficiaryMail,
			MerchantID: p.MerchantID, PayoutID: p.ID, CreatedAt: now, NextAt: now})
	}
	if m.Settings.NotificationURL != "" {
		evs = append(evs, Event{ID: EventMerchantNotification + ":" + id, Kind: EventMerchantNotification,
			MerchantID: p.MerchantID, PayoutID: p.ID, CreatedAt: now, NextAt: now})
	}
	return evs
}
