package e2e

// The payout link's requests and pages as the end-to-end tests of links use them (the
// browser's, a link paid once under a kill, its mails): servertest's, over this harness's
// clients. The link's own request/answer tests run in process (api/link_test.go,
// web/link*_test.go).

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
)

var (
	linkRequest       = servertest.LinkRequest
	peruCellphoneLink = servertest.PeruCellphoneLink
	peruCardLink      = servertest.PeruCardLink
)

type (
	linkAnswer = servertest.LinkAnswer
	linkDetail = servertest.LinkDetail
)

// createLink creates a payout link (servertest.Merchant.CreateLink).
func (c *merchantClient) createLink(t testing.TB, body map[string]any) (int, http.Header, linkAnswer, []byte) {
	t.Helper()
	return c.CreateLink(t, body)
}

// linkOf reads a payout as a link's (servertest.Merchant.LinkOf).
func (c *merchantClient) linkOf(t testing.TB, id int64) linkDetail {
	t.Helper()
	return c.LinkOf(t, id)
}

// submitLink posts the destination form of the link page u as a same-origin browser would.
func submitLink(t testing.TB, u string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	return servertest.SubmitForm(t, noRedirect, u, "form#link-form", vals)
}

// giveDestination submits the link's form and confirms its review
// (servertest.GiveDestination).
func giveDestination(t testing.TB, link string, vals url.Values, document string) (int, string, *goquery.Document) {
	t.Helper()
	return servertest.GiveDestination(t, noRedirect, link, vals, document)
}
