package web_test

// The Peru card push payment's form over the real server in process (servertest), on each
// engine, as a browser without JavaScript uses it: the card entered and paid, declined,
// wrong five times, the session restarted and expired, the card on file, and that no card
// number is ever at rest or in a log.

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"
)

// newCardServer starts a server on e with a merchant whose card payouts are on (with
// settings besides).
func newCardServer(t *testing.T, setup servertest.Setup, settings map[string]any) (*servertest.Server, *servertest.Merchant) {
	t.Helper()
	s := servertest.Start(t, setup)
	all := map[string]any{"cardPayouts": true}
	for k, v := range settings {
		all[k] = v
	}
	return s, s.NewMerchant(t, all)
}

// TestCardPayoutEndToEndEncryptedAtRest enters a card as a browser without JavaScript,
// follows the payout to SUCCESS, then reads the store and the server's logs: the card number
// is nowhere, in any encoding; the sealed card opens with the card key only.
func TestCardPayoutEndToEndEncryptedAtRest(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c := newCardServer(t, servertest.Setup{Engine: e}, nil)
		a := c.OpenCard(t, servertest.CardRequest("CARD-OK"), 200)

		code, loc, _ := s.SubmitCard(t, a.Iframe, servertest.CardValues("4111 1111 1111 1111", servertest.FutureExpiry(), "123"))
		if code != http.StatusSeeOther || loc != a.Iframe {
			t.Fatalf("submit: got %d → %q, want 303 → the form link", code, loc)
		}
		_, _, doc := s.Page(t, a.Iframe)
		if !strings.Contains(servertest.DocText(doc), "VISA •••• 1111") {
			t.Errorf("progress page does not show the card: %s", servertest.DocText(doc))
		}
		st := servertest.WaitCardStatus(t, s.Browser(), a.Iframe, 10*time.Second)
		if st.Topic != "mps-payout-finished-ok" || st.Stage != "SUCCESS" || st.Status != "PROCESSED" || st.PayoutID != a.Payout.ID || st.OrderID != "CARD-OK" {
			t.Fatalf("status: %+v", st)
		}
		c.WaitStage(t, a.Payout.ID, "SUCCESS", 5*time.Second)
		_, _, doc = s.Page(t, a.Iframe)
		var cfg struct {
			Message struct {
				Topic string `json:"topic"`
				Data  struct {
					PayoutID int64 `json:"payoutId"`
				} `json:"data"`
			} `json:"message"`
			Targets []string `json:"targets"`
		}
		json.Unmarshal([]byte(doc.Find("#card-config").Text()), &cfg)
		if cfg.Message.Topic != "mps-payout-finished-ok" || cfg.Message.Data.PayoutID != a.Payout.ID || len(cfg.Targets) != 1 || cfg.Targets[0] != "*" {
			t.Errorf("outcome page config: %+v", cfg)
		}

		token := strings.TrimPrefix(a.Iframe, s.URL+"/card?s=")
		cards := s.Cards(t) // the server stopped: the store as it is at rest
		logs := s.Log()
		raw := s.Stored(t)
		pan := "4111111111111111"
		if how, found := holdsSecret(raw, pan); found {
			t.Errorf("the store holds the card number (%s)", how)
		}
		if how, found := holdsSecret([]byte(logs), pan); found {
			t.Errorf("the logs hold the card number (%s)", how)
		}
		if strings.Contains(logs, token) {
			t.Errorf("the logs hold the session token")
		}
		if !strings.Contains(logs, `"path":"/card"`) {
			t.Errorf("no access log line of the form (the check above would prove nothing): %.2000s", logs)
		}
		if bytes.Contains(raw, []byte(token)) {
			t.Errorf("the store holds the session token itself (scs should store its hash)")
		}

		// The card on file is sealed: it opens with the card key bound to its token, and
		// holds the number but no CVV.
		var rec struct {
			Token, BIN, Last4 string
			Sealed            []byte
		}
		for _, c := range cards {
			if c.DocNumber != "" {
				rec.Token, rec.BIN, rec.Last4, rec.Sealed = c.Ref.Token, c.Ref.BIN, c.Ref.Last4, c.Sealed
			}
		}
		if rec.BIN != "411111" || rec.Last4 != "1111" || rec.Token == "" {
			t.Fatalf("card on file: %+v", rec)
		}
		sealer := s.CardSealer(t)
		plain, err := sealer.Open(rec.Sealed, []byte("card:"+rec.Token))
		if err != nil || !bytes.Contains(plain, []byte(pan)) || bytes.Contains(bytes.ToLower(plain), []byte("cvv")) || bytes.Contains(plain, []byte("123")) {
			t.Errorf("sealed card opens to %q (%v): want the number and no CVV", plain, err)
		}
		if _, err := sealer.Open(rec.Sealed, []byte("card:other")); err == nil {
			t.Errorf("the sealed card opens for another token")
		}
	})
}

// holdsSecret looks for a secret in raw: as text, spaced in groups of four, in hex, and
// inside any quoted base64 string at any alignment (JSON writes []byte as base64).
func holdsSecret(raw []byte, secret string) (string, bool) {
	spaced := strings.TrimSpace(regexp.MustCompile(`(\d{4})`).ReplaceAllString(secret, "$1 "))
	for how, form := range map[string]string{"plain": secret, "spaced": spaced, "hex": hex.EncodeToString([]byte(secret))} {
		if bytes.Contains(raw, []byte(form)) {
			return how, true
		}
	}
	// Quoted strings, found with IndexByte: the file is mostly empty pages.
	for rest := raw; ; {
		i := bytes.IndexByte(rest, '"')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			break
		}
		str := rest[:j]
		rest = rest[j+1:]
		if len(str) < 20 || len(str) > 1<<16 {
			continue
		}
		for shift := 0; shift < 4; shift++ {
			r := bytes.TrimRight(str[shift:], "=")
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				dec := make([]byte, enc.DecodedLen(len(r)))
				n, _ := enc.Decode(dec, r)
				if bytes.Contains(dec[:n], []byte(secret)) {
					return "base64", true
				}
			}
		}
	}
	return "", false
}

func TestCardDeclinedCard(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c := newCardServer(t, servertest.Setup{Engine: e}, map[string]any{"allowedOrigins": []string{"https://shop.example"}})
		a := c.OpenCard(t, servertest.CardRequest("CARD-DECLINE"), 200)
		_, hdr, _ := s.Page(t, a.Iframe)
		if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors https://shop.example;") {
			t.Errorf("CSP %q: frame-ancestors should be the allowed origin", csp)
		}
		if code, _, doc := s.SubmitCard(t, a.Iframe, servertest.CardValues("4000000000000002", servertest.FutureExpiry(), "123")); code != 303 {
			t.Fatalf("submit: %d %s", code, servertest.DocText(doc))
		}
		st := servertest.WaitCardStatus(t, s.Browser(), a.Iframe, 10*time.Second)
		if st.Topic != "mps-payout-finished-fail" || st.Stage != "REJECTED" || st.Status != "REJECTED_BANK" {
			t.Fatalf("status: %+v", st)
		}
		_, _, doc := s.Page(t, a.Iframe)
		var cfg struct {
			Targets []string `json:"targets"`
		}
		json.Unmarshal([]byte(doc.Find("#card-config").Text()), &cfg)
		if len(cfg.Targets) != 1 || cfg.Targets[0] != "https://shop.example" {
			t.Errorf("postMessage targets = %v, want only the allowed origin", cfg.Targets)
		}
	})
}

func TestCardFormErrorsAndLockoutAfterFiveFailures(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c := newCardServer(t, servertest.Setup{Engine: e}, nil)
		a := c.OpenCard(t, servertest.CardRequest("CARD-LOCK"), 200)
		bad := servertest.CardValues("4111111111111112", "13/30", "12") // Luhn, month, CVV
		for i := 1; i <= 4; i++ {
			code, _, doc := s.SubmitCard(t, a.Iframe, bad)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("attempt %d: got %d, want 422", i, code)
			}
			for _, f := range []string{"pan", "expiry", "cvv"} {
				in := doc.Find("#" + f)
				if v, _ := in.Attr("aria-invalid"); v != "true" {
					t.Errorf("attempt %d: #%s not aria-invalid", i, f)
				}
				if d, _ := in.Attr("aria-describedby"); !strings.Contains(d, f+"-error") || strings.TrimSpace(doc.Find("#"+f+"-error").Text()) == "" {
					t.Errorf("attempt %d: #%s has no described error (%q)", i, f, d)
				}
			}
			if v, _ := doc.Find("#pan").Attr("value"); v != "" {
				t.Errorf("the card number is echoed back: %q", v)
			}
			if got := doc.Find(".attempts strong").Text(); got != strconv.Itoa(5-i) {
				t.Errorf("attempt %d: attempts left %q, want %d", i, got, 5-i)
			}
		}
		code, _, doc := s.SubmitCard(t, a.Iframe, bad)
		if code != http.StatusGone || doc.Find(".result-locked").Length() != 1 {
			t.Fatalf("fifth failure: got %d %s, want 410 locked", code, servertest.DocText(doc))
		}
		got := c.WaitStage(t, a.Payout.ID, "REJECTED", 5*time.Second)
		if got.Output.Status != "EXPIRED" || len(got.Errors) == 0 || got.Errors[0].Code != "2932" {
			t.Errorf("payout after lockout: %+v", got)
		}
		st := servertest.WaitCardStatus(t, s.Browser(), a.Iframe, time.Second)
		if st.Topic != "mps-payout-finished-fail" {
			t.Errorf("status after lockout: %+v", st)
		}
		// A good card is no longer taken.
		_, _, doc = s.Page(t, a.Iframe)
		if doc.Find("form#card-form").Length() != 0 {
			t.Errorf("the form is still offered after the lockout")
		}
	})
}

func TestCardResendRestartsWithNewSession(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c := newCardServer(t, servertest.Setup{Engine: e}, nil)
		first := c.OpenCard(t, servertest.CardRequest("CARD-AGAIN"), 200)
		s.Advance(t, "1s") // the restarted session starts later on the service's clock
		second := c.OpenCard(t, servertest.CardRequest("CARD-AGAIN"), 200)
		if second.Payout.ID != first.Payout.ID || second.Iframe == "" || second.Iframe == first.Iframe {
			t.Fatalf("restart: first %q, second %q (payout %d, %d)", first.Iframe, second.Iframe, first.Payout.ID, second.Payout.ID)
		}
		e1, _ := time.Parse(time.RFC3339Nano, first.ExpiresAt)
		e2, _ := time.Parse(time.RFC3339Nano, second.ExpiresAt)
		if !e2.After(e1) {
			t.Errorf("the restarted session expires at %v, not after %v", e2, e1)
		}
		code, _, doc := s.Page(t, first.Iframe)
		if code != http.StatusGone || doc.Find(".result-invalid").Length() != 1 {
			t.Errorf("old link: got %d %s, want 410 invalid", code, servertest.DocText(doc))
		}
		if code, _, doc := s.SubmitCard(t, second.Iframe, servertest.CardValues("4242424242424242", servertest.FutureExpiry(), "321")); code != 303 {
			t.Fatalf("submit on the new link: %d %s", code, servertest.DocText(doc))
		}
		c.WaitStage(t, first.Payout.ID, "SUCCESS", 10*time.Second)
		// With the card entered, the same orderId opens nothing: the payout as it stands.
		third := c.OpenCard(t, servertest.CardRequest("CARD-AGAIN"), 200)
		if third.Iframe != "" || third.Output.Stage != "SUCCESS" {
			t.Errorf("re-send after the card: %+v", third)
		}
		code, _, raw := c.CreateCard(t, "payouts/card", servertest.CardRequest("CARD-AGAIN"), "text/html")
		if code != 200 || !bytes.Contains(raw, []byte("result-success")) {
			t.Errorf("HTML re-send after the card: %d %.300s", code, raw)
		}
	})
}

func TestCardSessionExpires(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c := newCardServer(t, servertest.Setup{Engine: e, Options: server.Options{CardSessionLength: 1500 * time.Millisecond}}, nil)
		a := c.OpenCard(t, servertest.CardRequest("CARD-LATE"), 200)
		if exp, _ := time.Parse(time.RFC3339Nano, a.ExpiresAt); time.Until(exp) > 2*time.Second {
			t.Fatalf("the test hook did not shorten the session: %s", a.ExpiresAt)
		}
		code, _, doc := s.Page(t, a.Iframe)
		if code != 200 || doc.Find("form#card-form").Length() != 1 {
			t.Fatalf("form before expiry: %d", code)
		}
		got := c.WaitStage(t, a.Payout.ID, "REJECTED", 10*time.Second)
		if got.Output.Status != "EXPIRED" {
			t.Errorf("payout after expiry: %+v", got)
		}
		code, _, doc = s.Page(t, a.Iframe)
		back, _ := doc.Find("a.button").Attr("href")
		target, _ := doc.Find("a.button").Attr("target")
		if code != http.StatusGone || back != "https://merchant.example/timeout" || target != "_top" {
			t.Errorf("expiry page: %d link %q target %q: %s", code, back, target, servertest.DocText(doc))
		}
		st := servertest.WaitCardStatus(t, s.Browser(), a.Iframe, time.Second)
		if st.Topic != "mps-payout-finished-timeout" || st.Status != "EXPIRED" {
			t.Errorf("status: %+v", st)
		}
		// A card posted now is not taken.
		req, _ := http.NewRequest("POST", a.Iframe, strings.NewReader(servertest.CardValues("4111111111111111", servertest.FutureExpiry(), "123").Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if code, _, _ := servertest.Send(t, s.Browser(), req); code != http.StatusSeeOther {
			t.Errorf("post after expiry: %d, want 303 to the expiry page", code)
		}
		// Re-sending the orderId after the expiry opens nothing.
		if again := c.OpenCard(t, servertest.CardRequest("CARD-LATE"), 200); again.Iframe != "" || again.Output.Status != "EXPIRED" {
			t.Errorf("re-send after expiry: %+v", again)
		}
	})
}

// storedCards counts the cards on file and the cards kept for one payout of s's store.
func storedCards(t *testing.T, s *servertest.Server) (onFile, perPayout int) {
	t.Helper()
	for _, c := range s.Cards(t) {
		if c.DocNumber != "" {
			onFile++
		} else {
			perPayout++
		}
	}
	return onFile, perPayout
}

func TestCardOnFile(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		t.Run("on: the next payout offers the saved card", func(t *testing.T) {
			s, c := newCardServer(t, servertest.Setup{Engine: e}, nil)
			a := c.OpenCard(t, servertest.CardRequest("COF-1"), 200)
			_, _, doc := s.Page(t, a.Iframe)
			if doc.Find("input[name=card][value=saved]").Length() != 0 {
				t.Fatalf("a saved card is offered before any was entered")
			}
			s.SubmitCard(t, a.Iframe, servertest.CardValues("4242424242424242", servertest.FutureExpiry(), "123"))
			c.WaitStage(t, a.Payout.ID, "SUCCESS", 10*time.Second)

			b := c.OpenCard(t, servertest.CardRequest("COF-2"), 200)
			_, _, doc = s.Page(t, b.Iframe)
			label := strings.Join(strings.Fields(doc.Find("label.option").First().Text()), " ")
			if _, checked := doc.Find("input[name=card][value=saved]").Attr("checked"); !checked || !strings.Contains(label, "VISA •••• 4242") {
				t.Fatalf("saved card not offered: %q", label)
			}
			if doc.Find("input[name=card][value=new]").Length() != 1 {
				t.Errorf("no choice of a new card")
			}
			code, _, doc := s.SubmitCard(t, b.Iframe, url.Values{"card": {"saved"}})
			if code != 303 {
				t.Fatalf("pay to the saved card: %d %s", code, servertest.DocText(doc))
			}
			c.WaitStage(t, b.Payout.ID, "SUCCESS", 10*time.Second)
			_, _, doc = s.Page(t, b.Iframe)
			if !strings.Contains(servertest.DocText(doc), "VISA •••• 4242") {
				t.Errorf("outcome does not show the saved card: %s", servertest.DocText(doc))
			}
			// Another beneficiary is not offered that card.
			other := servertest.CardRequest("COF-3")
			other["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "87654321"}
			o := c.OpenCard(t, other, 200)
			if _, _, doc := s.Page(t, o.Iframe); doc.Find("input[name=card][value=saved]").Length() != 0 {
				t.Errorf("another beneficiary is offered the saved card")
			}
			if onFile, perPayout := storedCards(t, s); onFile != 1 || perPayout != 0 {
				t.Errorf("card buckets: %d on file, %d per payout; want 1 and 0", onFile, perPayout)
			}
		})
		t.Run("off: the card is for one payout and is deleted after it", func(t *testing.T) {
			s, c := newCardServer(t, servertest.Setup{Engine: e}, map[string]any{"cardOnFile": false})
			a := c.OpenCard(t, servertest.CardRequest("NOF-1"), 200)
			s.SubmitCard(t, a.Iframe, servertest.CardValues("4242424242424242", servertest.FutureExpiry(), "123"))
			c.WaitStage(t, a.Payout.ID, "SUCCESS", 10*time.Second)
			b := c.OpenCard(t, servertest.CardRequest("NOF-2"), 200)
			if _, _, doc := s.Page(t, b.Iframe); doc.Find("input[name=card][value=saved]").Length() != 0 || strings.Contains(servertest.DocText(doc), "4242") {
				t.Errorf("a card is offered with card on file off")
			}
			if onFile, perPayout := storedCards(t, s); onFile != 0 || perPayout != 0 {
				t.Errorf("card buckets: %d on file, %d per payout; want none", onFile, perPayout)
			}
		})
	})
}

// Two different cards sent at the same moment on one card form: the payout takes one, pays
// it, and that card, not the other, is the one the beneficiary's next card form offers.
func TestCardFormDoubleSubmitKeepsTheCardTakenOnFile(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c := newCardServer(t, servertest.Setup{Engine: e}, nil)
		a := c.OpenCard(t, servertest.CardRequest("COF-TWICE-1"), 200)
		_, _, doc := s.Page(t, a.Iframe)
		action, ok := doc.Find("form#card-form").Attr("action")
		if !ok {
			t.Fatalf("no card form: %s", servertest.DocText(doc))
		}
		var posts []servertest.FormPost
		for _, pan := range []string{"4111111111111111", "4012888888881881"} {
			posts = append(posts, servertest.FormPost{Action: action, Body: servertest.CardValues(pan, servertest.FutureExpiry(), "123")})
		}
		servertest.PostAtOnce(t, s.Browser(), posts)
		c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
		_, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(a.Payout.ID, 10), nil, "")
		var d struct {
			Card *struct {
				Last4 string `json:"last4"`
			} `json:"card"`
		}
		json.Unmarshal(raw, &d)
		if d.Card == nil || d.Card.Last4 != "1111" && d.Card.Last4 != "1881" {
			t.Fatalf("the settled payout's card: %s", raw)
		}
		b := c.OpenCard(t, servertest.CardRequest("COF-TWICE-2"), 200)
		_, _, doc = s.Page(t, b.Iframe)
		label := strings.Join(strings.Fields(doc.Find("label.option").First().Text()), " ")
		if !strings.Contains(label, "VISA •••• "+d.Card.Last4) {
			t.Errorf("the next form offers %q, want the card the first payout took, ending %s", label, d.Card.Last4)
		}
	})
}
