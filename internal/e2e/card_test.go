package e2e

// The card push payment's requests and form as the end-to-end tests of cards use them (the
// browser's, the iframe's behind a proxy, HTTPS, the dashboard's): servertest's, over this
// harness's clients. The card form's own tests run in process (web/cardform_test.go,
// api/card_endpoint_test.go).

import (
	"net/http"
	"testing"
	"time"

	"payouts/internal/servertest"
)

var (
	// cardRequest is a valid card push payment for a merchant with cardPayouts on.
	cardRequest  = servertest.CardRequest
	cardValues   = servertest.CardValues
	futureExpiry = servertest.FutureExpiry
	docText      = servertest.DocText
)

type cardAnswer = servertest.CardAnswer

// createCard calls the card endpoint with an Accept header (servertest.Merchant.CreateCard).
func (c *merchantClient) createCard(t testing.TB, path string, body any, accept string) (int, http.Header, []byte) {
	t.Helper()
	return c.CreateCard(t, path, body, accept)
}

// openCard creates a card payout asking for JSON (servertest.Merchant.OpenCard).
func (c *merchantClient) openCard(t testing.TB, body map[string]any, wantStatus int) cardAnswer {
	t.Helper()
	return c.OpenCard(t, body, wantStatus)
}

// noRedirect is a client playing the beneficiary's browser without JavaScript; it shows
// the redirects instead of following them.
var noRedirect = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
