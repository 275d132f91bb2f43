package e2e

// The card push payment's requests and form as the end-to-end tests of cards use them (the
// browser's, the iframe's behind a proxy, HTTPS, the dashboard's): servertest's, over this
// harness's clients. The card form's own tests run in process (web/cardform_test.go,
// api/card_endpoint_test.go).

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
)

var (
	// cardRequest is a valid card push payment for a merchant with cardPayouts on.
	cardRequest  = servertest.CardRequest
	cardValues   = servertest.CardValues
	futureExpiry = servertest.FutureExpiry
	docText      = servertest.DocText
)

type (
	cardAnswer = servertest.CardAnswer
	cardStatus = servertest.CardStatus
)

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

// getDoc reads the page u as the beneficiary's browser (servertest.Page).
func getDoc(t testing.TB, u string) (int, http.Header, *goquery.Document) {
	t.Helper()
	return servertest.Page(t, noRedirect, u)
}

// submitCard posts the card form of page u as a same-origin browser would
// (servertest.SubmitForm).
func submitCard(t testing.TB, u string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	return servertest.SubmitForm(t, noRedirect, u, "form#card-form", vals)
}

// waitCardStatus polls the form's status endpoint until it is final
// (servertest.WaitCardStatus).
func waitCardStatus(t testing.TB, formURL string, within time.Duration) cardStatus {
	t.Helper()
	return servertest.WaitCardStatus(t, nil, formURL, within)
}
