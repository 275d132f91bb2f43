package web_test

// A Peru card as a payout link's kind: the card form's inputs and checks on the link's page,
// the document typed beside them, the payout going on as a card payout with the card form's
// test cards.

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

func TestPayoutLinkPeruCard(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cardPayouts": true})

		// A card needs the link's returnUrl: it is the card's timeoutUrl.
		noReturn := servertest.PeruCardLink("LINK-CARD-0")
		delete(noReturn, "returnUrl")
		if code, _, _, raw := c.CreateLink(t, noReturn); code != 400 || !strings.Contains(string(raw), rules.CodeLinkDestinations) {
			t.Errorf("a card link without returnUrl: %d %s", code, raw)
		}

		_, _, a, raw := c.CreateLink(t, servertest.PeruCardLink("LINK-CARD-1"))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		_, _, doc := s.Page(t, a.Link)
		for _, id := range []string{"#holder", "#pan", "#expiry", "#cvv", "#f-document"} {
			if doc.Find("form#link-form "+id).Length() != 1 {
				t.Errorf("no %s in the card link's form: %s", id, servertest.DocText(doc))
			}
		}
		// A card number that fails its check digit and a document that is not the merchant's.
		code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {"4111111111111112"},
			"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678913"}})
		if code != 422 || page.Find("#pan-error").Text() == "" || page.Find("#error-summary a[href='#pan']").Length() != 1 {
			t.Fatalf("bad card: %d %s", code, servertest.DocText(page))
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
		code, _, page = s.SubmitLink(t, a.Link, url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {"4111 1111 1111 1111"},
			"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678912"}})
		if code != 303 {
			t.Fatalf("card: %d %s", code, servertest.DocText(page))
		}
		if p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("settled %s", p.Output.Status)
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Channel != "CARD" || d.Link == nil || d.Link.State != "completed" {
			t.Errorf("GET: %+v", d)
		}
		if out := s.Log(); strings.Contains(out, "4111111111111111") || strings.Contains(out, "4111 1111") {
			t.Errorf("the log holds the card number")
		}

		// The card form's declined test card: REJECTED_BANK 4032, as on the card endpoint.
		_, _, b, raw := c.CreateLink(t, servertest.PeruCardLink("LINK-CARD-2"))
		if b.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		if code, _, page := s.SubmitLink(t, b.Link, url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {"4000000000000002"},
			"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678912"}}); code != 303 {
			t.Fatalf("declined card: %d %s", code, servertest.DocText(page))
		}
		if p := c.WaitStatus(t, b.Payout.ID, "REJECTED_BANK", 15*time.Second); len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCardDeclined {
			t.Errorf("declined: %+v", p.Errors)
		}
	})
}

// Two different cards typed on the same card link and sent at the same moment: the payout
// takes one, and the vault keeps that card for it (the one it pays) and nothing of the
// other, until the outcome drops it. The payout is held by a long sandbox delay so that the
// vault is read while it waits, then the sandbox clock lets it settle.
func TestPayoutLinkPeruCardDoubleSubmitPaysTheCardTaken(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox-delay", "1h"}})
		c := s.NewMerchant(t, map[string]any{"cardPayouts": true})
		_, _, a, raw := c.CreateLink(t, servertest.PeruCardLink("LINK-CARD-TWICE"))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		_, _, doc := s.Page(t, a.Link)
		action, ok := doc.Find("form#link-form").Attr("action")
		if !ok {
			t.Fatalf("no card form at the link: %s", servertest.DocText(doc))
		}
		var posts []servertest.FormPost
		for _, pan := range []string{"4111111111111111", "4012888888881881"} {
			posts = append(posts, servertest.FormPost{Action: action, Body: url.Values{"kind": {"5"}, "holder": {"ANA QUISPE"}, "pan": {pan},
				"expiry": {"12/30"}, "cvv": {"123"}, "document": {"45678912"}}})
		}
		servertest.PostAtOnce(t, s.Browser(), posts)
		cardOf := func() string {
			_, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(a.Payout.ID, 10), nil, "")
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

		var kept []string
		for _, rec := range s.Cards(t) { // read with the server stopped, then started again
			if rec.PayoutID == a.Payout.ID {
				kept = append(kept, rec.Ref.Last4)
			}
		}
		if len(kept) != 1 || kept[0] != taken {
			t.Fatalf("the vault keeps for the payout the cards ending %q; want only the one it took, %s", kept, taken)
		}

		s.Advance(t, "61m")
		if p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Fatalf("settled %s", p.Output.Status)
		}
		if got := cardOf(); got != taken {
			t.Errorf("the settled payout's card ends %s, want %s, the one it took", got, taken)
		}
		for _, rec := range s.Cards(t) {
			if rec.PayoutID == a.Payout.ID {
				t.Errorf("a card ending %s of the settled payout is kept", rec.Ref.Last4)
			}
		}
	})
}
