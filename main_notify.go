package main

// wireNotifications adds the outbox dispatcher, beneficiary emails, the cash OTP and the
// signed merchant notifications (contract section 7).
func (w *wiring) wireNotifications() error {
	return nil
}
