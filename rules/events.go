package rules

import (
	"time"
)

// OutcomeEvents are the events a payout's outcome causes: an
// email to the beneficiary when the merchant has email notifications on and the payout
// has beneficiary.email, and a merchant notification when the merchant has a
// notificationUrl. Their ids name the payout and the outcome, so that one outcome can
// never be delivered twice.
func OutcomeEvents(p *Payout, m *Merchant, now time.Time) []Event {
	var evs []Event
	if m.Settings.EmailNotifications && p.Request.Beneficiary.Email != "" {
		evs = append(evs, Event{ID: OutcomeEventID(EventBeneficiaryMail, p.ID, p.Status), Kind: EventBeneficiaryMail,
			MerchantID: p.MerchantID, PayoutID: p.ID, CreatedAt: now, NextAt: now, Traceparent: p.Traceparent})
	}
	if m.Settings.NotificationURL != "" {
		evs = append(evs, Event{ID: OutcomeEventID(EventMerchantNotification, p.ID, p.Status), Kind: EventMerchantNotification,
			MerchantID: p.MerchantID, PayoutID: p.ID, CreatedAt: now, NextAt: now, Traceparent: p.Traceparent})
	}
	return evs
}
