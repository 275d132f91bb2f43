// Package receivertest holds notification receivers with one deliberate flaw each, and the
// checks of a receiver certification each must fail: the certification's tests grade them in
// process and through a running server.
package receivertest

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"payouts/api"
	"payouts/web/notify"
)

// Flaw is what a deliberately broken receiver gets wrong.
type Flaw string

const (
	Sound                 Flaw = ""
	AcceptsForgeries      Flaw = "accepts forgeries: checks no signature"
	ReEncodes             Flaw = "verifies the body re-encoded from its known fields"
	Fails500OnDuplicate   Flaw = "answers 500 to a duplicate"
	SlowOnCash            Flaw = "too slow: a cash payout's outcome is answered after the delivery timeout"
	RejectsUnknownFields  Flaw = "refuses unknown fields"
	Fails5xxUnknownPayout Flaw = "answers 503 for a payout it never created"
	RedirectsCard         Flaw = "redirects card payouts' notifications to another path"
	AcceptsMissingHeader  Flaw = "accepts a notification without the verification header"
	TrustsBodyMerchant    Flaw = "verifies over the body's merchantId: accepts another merchant's signature"
	BreaksAfterForgery    Flaw = "answers 503 to the next notification after a forgery"
	LengthOnlySignature   Flaw = "checks only that the signature is 256 bytes"
	HighWaterMark         Flaw = "refuses a notification older than the newest it has seen"
	RefusesReversalFirst  Flaw = "refuses a REVERSED before the payout's SUCCESS"
	Answers204IsFine      Flaw = "sound, answering 204" // a correct variant: any 2xx
)

// Receiver is a notification receiver with at most one Flaw; Sound it is the smallest
// correct one: the signature over its own merchant id and the raw body, 2xx to a duplicate,
// unknown fields and payouts ignored.
type Receiver struct {
	pub        *rsa.PublicKey
	merchantID string
	flaw       Flaw

	mu          sync.Mutex
	seen        map[string]bool
	paid        map[string]bool
	newest      string
	lastForgery bool
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var n struct {
		Payout struct {
			ID, Country, OrderID, MerchantID, BankCode, AccountNumber string
		}
		Output struct{ Stage, Status, StatusChangeDateTime string }
	}
	json.Unmarshal(raw, &n)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.flaw == BreaksAfterForgery && rc.lastForgery {
		rc.lastForgery = false
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	if !rc.verified(r, raw, n.Payout.MerchantID) {
		rc.lastForgery = true
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if rc.flaw == RejectsUnknownFields {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		var strict api.Notification
		if err := d.Decode(&strict); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	key := r.Header.Get("Idempotency-Key")
	if rc.seen[key] {
		if rc.flaw == Fails500OnDuplicate {
			http.Error(w, "duplicate key", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	switch {
	case rc.flaw == SlowOnCash && n.Payout.Country == "COL" && n.Payout.BankCode == "":
		rc.mu.Unlock()
		<-r.Context().Done() // answers after the service gave up
		rc.mu.Lock()
		return
	case rc.flaw == Fails5xxUnknownPayout && strings.HasPrefix(n.Payout.OrderID, "never-created-"):
		http.Error(w, "order not found", http.StatusServiceUnavailable)
		return
	case rc.flaw == RedirectsCard && n.Payout.Country == "PER" && n.Payout.AccountNumber != "":
		http.Redirect(w, r, "/cards", http.StatusTemporaryRedirect)
		return
	case rc.flaw == HighWaterMark && n.Output.StatusChangeDateTime < rc.newest:
		http.Error(w, "stale", http.StatusConflict)
		return
	case rc.flaw == RefusesReversalFirst && n.Output.Status == "REVERSED" && !rc.paid[n.Payout.ID]:
		http.Error(w, "unknown payment", http.StatusConflict)
		return
	}
	rc.seen[key] = true
	if n.Output.Status == "PROCESSED" {
		rc.paid[n.Payout.ID] = true
	}
	rc.newest = max(rc.newest, n.Output.StatusChangeDateTime)
	if rc.flaw == Answers204IsFine {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *Receiver) verified(r *http.Request, raw []byte, bodyMerchant string) bool {
	sig, present := r.Header["Verification"]
	switch rc.flaw {
	case AcceptsForgeries:
		return true
	case AcceptsMissingHeader:
		if !present {
			return true
		}
	case ReEncodes:
		var n api.Notification
		json.Unmarshal(raw, &n)
		raw, _ = json.Marshal(n)
	case TrustsBodyMerchant:
		return present && notify.Verify(rc.pub, bodyMerchant, raw, sig[0]) == nil
	case LengthOnlySignature:
		b, err := base64.StdEncoding.DecodeString(r.Header.Get("verification"))
		return err == nil && len(b) == 256
	}
	return present && notify.Verify(rc.pub, rc.merchantID, raw, sig[0]) == nil
}

// New is a receiver of merchantID's notifications, checked with the service's public key pub,
// with flaw f.
func New(pub *rsa.PublicKey, merchantID string, f Flaw) *Receiver {
	return &Receiver{pub: pub, merchantID: merchantID, flaw: f, seen: map[string]bool{}, paid: map[string]bool{}}
}

// Forgeries are the checks that send a forged notification.
var Forgeries = []string{"body-changed", "forged-other-body", "forged-other-key", "forged-other-merchant", "malformed-signature", "missing-signature"}

// A Case is a receiver's flaw and the checks it fails, sorted (none for a sound one).
type Case struct {
	Flaw  Flaw
	Fails []string
}

// Name is the case's name in a test: its flaw, or "sound".
func (c Case) Name() string {
	if c.Flaw == Sound {
		return "sound"
	}
	return string(c.Flaw)
}

// Cases are two sound receivers and a dozen broken ones.
func Cases() []Case {
	return []Case{
		{Sound, nil},
		{Answers204IsFine, nil},
		{AcceptsForgeries, Forgeries},
		{ReEncodes, []string{"raw-body", "unknown-field"}},
		{Fails500OnDuplicate, []string{"duplicate"}},
		{SlowOnCash, []string{"cash-success"}},
		{RejectsUnknownFields, []string{"unknown-field"}},
		{Fails5xxUnknownPayout, []string{"unknown-payout"}},
		{RedirectsCard, []string{"card-success", "redirect"}},
		{AcceptsMissingHeader, []string{"missing-signature"}},
		{TrustsBodyMerchant, []string{"forged-other-merchant"}},
		{BreaksAfterForgery, Forgeries},
		{LengthOnlySignature, []string{"body-changed", "forged-other-body", "forged-other-key", "forged-other-merchant"}},
		{HighWaterMark, []string{"older-after-newer", "reversed-before-success"}},
		{RefusesReversalFirst, []string{"reversed-before-success"}},
	}
}
