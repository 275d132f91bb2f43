package e2e

// End-to-end tests of a Peru card as a payout link's kind: the card form's inputs and checks
// on the link's page, the document typed beside them, the payout going on as a card payout
// with the card form's test cards.

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

func peruCardLink(orderID string) map[string]any {
	req := peruCellphoneLink(orderID, "")
	req["allowedDestinations"] = []int{rules.LinkCardKind}
	return req
}

func TestPayoutLinkPeruCard(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})

	// A card needs the link's returnUrl: it is the card's timeoutUrl.
	noReturn := peruCardLink("LINK-CARD-0")
	delete(noReturn, "returnUrl")
	if code, _, _, raw := c.createLink(t, noReturn); code != 400 || !strings.Contains(string(raw), rules.CodeLinkDestinations) {
		t.Errorf("a card link without returnUrl: %d %s", code, raw)
	}

	_, _, a, raw := c.createLink(t, peruCardLink("LINK-CARD-1"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	_, _, doc := getDoc(t, a.Link)
	for _, id := range []string{"#holder", "#pan", "#expiry", "#cvv", "#f-document"} {
		if doc.Find("form#link-form "+id).Length() != 1 {
			t.Errorf("no %s in the card link's form: %s", id, docText(doc))
		}
	}
	// A card number that fails its check digit and a document that is not the merchant's.
	code, _, page := submitLink(t, a.Link, url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {"4111111111111112"},
		"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678913"}})
	if code != 422 || page.Find("#pan-error").Text() == "" || page.Find("#error-summary a[href='#pan']").Length() != 1 {
		t.Fatalf("bad card: %d %s", code, docText(page))
	}
	if c, _ := page.Find("#f-document-error").Attr("data-code"); c != rules.CodeLinkOwnership {
		t.Errorf("document error code %q", c)
	}
	if html, _ := page.Html(); strings.Contains(html, "4111111111111112") || strings.Contains(html, `value="123"`) {
		t.Errorf("the card number or the CVV is shown again")
	}
	if v, _ := page.Find("#holder").Attr("value"); v != "ANA QUISPE" || strings.TrimSpace(page.Find(".attempts strong").Text()) != "4" {
		t.Errorf("holder kept %q, attempts %q", v, page.Find(".attempts").Text())
	}
	code, _, page = submitLink(t, a.Link, url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {"4111 1111 1111 1111"},
		"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678912"}})
	if code != 303 {
		t.Fatalf("card: %d %s", code, docText(page))
	}
	if p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
		t.Errorf("settled %s", p.Output.Status)
	}
	if d := c.linkOf(t, a.Payout.ID); d.Channel != "CARD" || d.Link == nil || d.Link.State != "completed" {
		t.Errorf("GET: %+v", d)
	}
	if out := s.Stdout.String() + s.Stderr.String(); strings.Contains(out, "4111111111111111") || strings.Contains(out, "4111 1111") {
		t.Errorf("the log holds the card number")
	}

	// The card form's declined test card: REJECTED_BANK 4032, as on the card endpoint.
	_, _, b, raw := c.createLink(t, peruCardLink("LINK-CARD-2"))
	if b.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	if code, _, page := submitLink(t, b.Link, url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {"4000000000000002"},
		"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678912"}}); code != 303 {
		t.Fatalf("declined card: %d %s", code, docText(page))
	}
	if p := c.waitStatus(t, b.Payout.ID, "REJECTED_BANK", 15*time.Second); len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCardDeclined {
		t.Errorf("declined: %+v", p.Errors)
	}
}

// Two different cards typed on the same card link and sent at the same moment: the payout
// takes one, and the vault keeps that card for it (the one it pays) and nothing of the
// other, until the outcome drops it. The payout is held by a long sandbox delay so that the
// vault is read while it waits, then the sandbox clock lets it settle.
func TestPayoutLinkPeruCardDoubleSubmitPaysTheCardTaken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, "--sandbox-delay", "1h")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})
	_, _, a, raw := c.createLink(t, peruCardLink("LINK-CARD-TWICE"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	_, _, doc := getDoc(t, a.Link)
	action, ok := doc.Find("form#link-form").Attr("action")
	if !ok {
		t.Fatalf("no card form at the link: %s", docText(doc))
	}
	var posts []linkConfirm
	for _, pan := range []string{"4111111111111111", "4012888888881881"} {
		posts = append(posts, linkConfirm{action: action, body: url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {pan},
			"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678912"}}})
	}
	postAtOnce(t, s.URL, posts)
	cardOf := func() string {
		_, _, raw := c.do(t, "GET", "payouts/"+itoa(a.Payout.ID), nil, "")
		var d struct {
			Card *struct {
				Last4 string `json:"last4"`
			} `json:"card"`
		}
		json.Unmarshal(raw, &d)
		if d.Card == nil {
			t.Fatalf("the payout has no card after both submissions: %s", raw)
		}
		return d.Card.Last4
	}
	taken := cardOf()
	if taken != "1111" && taken != "1881" {
		t.Fatalf("the payout took the card ending %q, neither of those sent", taken)
	}

	s.Stop(t)
	var kept []string
	for _, rec := range storedCardRecords(t, dir) {
		if rec.PayoutID == a.Payout.ID {
			kept = append(kept, rec.Ref.Last4)
		}
	}
	if len(kept) != 1 || kept[0] != taken {
		t.Fatalf("the vault keeps for the payout the cards ending %q; want only the one it took, %s", kept, taken)
	}

	old := s.URL
	s = startServer(t, dir)
	c.Base = strings.Replace(c.Base, old, s.URL, 1)
	if code := s.admin(t, "POST", "/admin/v1/sandbox/clock", map[string]string{"advance": "61m"}, nil); code != 200 {
		t.Fatalf("advance: %d", code)
	}
	if p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
		t.Fatalf("settled %s", p.Output.Status)
	}
	if got := cardOf(); got != taken {
		t.Errorf("the settled payout's card ends %s, want %s, the one it took", got, taken)
	}
	s.Stop(t)
	for _, rec := range storedCardRecords(t, dir) {
		if rec.PayoutID == a.Payout.ID {
			t.Errorf("a card ending %s of the settled payout is kept", rec.Ref.Last4)
		}
	}
}
