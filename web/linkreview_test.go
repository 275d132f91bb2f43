package web_test

// A payout link's review step, as a browser without JavaScript goes through it: the holder
// the directory names, masked, for the beneficiary to confirm; the merchant's document typed,
// compared and never shown; 4041 where ownership fails.

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

// The review in Spanish: the masked holder an admin's entry names, a wrong document and a
// holder not confirmed each cost an attempt with 4041 tied to its field, then the right
// document takes the destination and the payout settles.
func TestPayoutLinkReviewHolderAndDocument(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"realTimePhoneAccount": true})
		if code := s.Admin(t, "PUT", "/admin/v1/sandbox/directory/PER/987650011", map[string]any{"holderName": "Ana Quispe Mamani",
			"entities": []map[string]any{{"entityBrand": "Yape", "status": "AVAILABLE"}}}, nil); code != 200 {
			t.Fatalf("put PER entry: %d", code)
		}
		_, _, a, raw := c.CreateLink(t, servertest.PeruCellphoneLink("LINK-REVIEW", ""))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		dest := url.Values{"kind": {"4"}, "bankCode": {"002"}, "accountNumber": {"987650011"}}
		code, _, page := s.SubmitLink(t, a.Link, dest)
		if code != 200 || page.Find("form#review-form").Length() != 1 {
			t.Fatalf("submit: %d %s", code, servertest.DocText(page))
		}
		if h := page.Find("#review-holder").Text(); h != "An* Qu**** Ma****" {
			t.Errorf("holder shown %q, want the masked An* Qu**** Ma****", h)
		}
		if lang, _ := page.Find("html").Attr("lang"); !strings.HasPrefix(lang, "es") || !strings.Contains(page.Find("label[for=f-document]").Text(), "documento") {
			t.Errorf("Spanish by default: lang %q, %s", lang, servertest.DocText(page))
		}
		if html, _ := page.Html(); strings.Contains(html, "Quispe Mamani") || strings.Contains(html, "45678912") {
			t.Errorf("the review holds the holder or the document in full")
		}
		if hint := page.Find("#f-document-hint").Text(); !strings.HasSuffix(hint, "••••••12") {
			t.Errorf("document hint %q: masked but for its last two", hint)
		}

		// A document that is not the merchant's: 422, 4041 on the document, the review again.
		code, _, page = servertest.PostPageForm(t, s.Browser(), page, "form#review-form", url.Values{"answer": {"yes"}, "document": {"45678913"}})
		fe := page.Find("#f-document-error")
		if c, _ := fe.Attr("data-code"); code != 422 || c != rules.CodeLinkOwnership || !strings.HasPrefix(fe.Text(), "no pudimos verificar") {
			t.Fatalf("wrong document: %d %q %s", code, c, servertest.DocText(page))
		}
		if inv, _ := page.Find("#f-document").Attr("aria-invalid"); inv != "true" || page.Find("#error-summary a[href='#f-document']").Length() != 1 {
			t.Errorf("the document's error is not tied to it: aria-invalid %q, %s", inv, page.Find("#error-summary").Text())
		}
		if v, _ := page.Find("#f-document").Attr("aria-describedby"); !strings.Contains(v, "f-document-error") {
			t.Errorf("aria-describedby %q", v)
		}
		if left := strings.TrimSpace(page.Find(".attempts strong").Text()); left != "4" {
			t.Errorf("%q attempts left after a wrong document", left)
		}

		// Not the beneficiary's account: back to the form, 4041 in its summary, an attempt.
		code, _, page = servertest.PostPageForm(t, s.Browser(), page, "form#review-form", url.Values{"answer": {"no"}})
		if code != 422 || page.Find("form#link-form").Length() != 1 || !strings.Contains(page.Find("#error-summary").Text(), rules.CodeLinkOwnership) {
			t.Fatalf("not mine: %d %s", code, servertest.DocText(page))
		}
		if v, _ := page.Find("#f-accountNumber").Attr("value"); v != "987650011" || strings.TrimSpace(page.Find(".attempts strong").Text()) != "3" {
			t.Errorf("the form keeps the number to correct (%q) and counts the attempt (%s)", v, page.Find(".attempts").Text())
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Channel != "LINK" {
			t.Fatalf("a refused review took the destination: %+v", d)
		}

		// The document with its dots: taken.
		code, _, page = s.SubmitLink(t, a.Link, dest)
		if code != 200 {
			t.Fatalf("submit again: %d %s", code, servertest.DocText(page))
		}
		if code, _, page = servertest.PostPageForm(t, s.Browser(), page, "form#review-form", url.Values{"answer": {"yes"}, "document": {"45.678.912"}}); code != 303 {
			t.Fatalf("confirm: %d %s", code, servertest.DocText(page))
		}
		if p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("settled %s", p.Output.Status)
		}
		// The admin's entry names the number in its path; no other line may.
		for line := range strings.Lines(s.Log()) {
			if strings.Contains(line, "/admin/v1/sandbox/directory/PER/987650011") {
				continue
			}
			if strings.Contains(line, "987650011") || strings.Contains(line, "45678912") || strings.Contains(line, "Quispe Mamani") {
				t.Errorf("the log holds the destination, the document or the holder: %s", line)
			}
		}
	})
}

// In English, a Peru cellphone the directory lists as Plin only (ending in 3), given with
// Yape's bank: the payout ends REJECTED_BANK with 4041, and the page says why.
func TestPayoutLinkReviewOtherBankEnds4041(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c, a := newLink(t, e, map[string]any{"realTimePhoneAccount": true}, servertest.PeruCellphoneLink("LINK-4041", "en"))
		code, loc, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"002"}, "accountNumber": {"987654323"}})
		if code != 303 || !strings.Contains(loc, "lang=en") {
			t.Fatalf("submit: %d %q %s", code, loc, servertest.DocText(page))
		}
		p := c.WaitStatus(t, a.Payout.ID, "REJECTED_BANK", 5*time.Second)
		if len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeLinkOwnership || !strings.HasPrefix(p.Errors[0].Message, rules.Published(rules.CodeLinkOwnership)) {
			t.Errorf("errors %+v", p.Errors)
		}
		_, _, doc := s.Page(t, a.Link) // the link is already &lang=en
		if st, _ := doc.Find("#result").Attr("class"); !strings.Contains(st, "result-failed") ||
			!strings.Contains(doc.Find("#result-detail").Text(), "We couldn't verify the account ownership") {
			t.Errorf("page after 4041: %s", servertest.DocText(doc))
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Channel != "LINK" {
			t.Errorf("the payout took a destination the directory refused: %+v", d)
		}
	})
}

// A Colombia Bre-B key: the directory's holder masked; a key it does not know is a failed
// attempt with 4027 on the key; a review whose destination was altered is refused.
func TestPayoutLinkReviewBreBKey(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		req := servertest.LinkRequest("LINK-KEY")
		req["allowedDestinations"] = []int{5}
		s, c, a := newLink(t, e, map[string]any{"realTimeKey": true}, req)
		code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"5"}, "accountNumber": {"3001234027"}})
		if c, _ := page.Find("#f-accountNumber-error").Attr("data-code"); code != 422 || c != rules.CodeDirectoryUnavailable {
			t.Fatalf("unknown key: %d %q %s", code, c, servertest.DocText(page))
		}
		code, _, page = s.SubmitLink(t, a.Link, url.Values{"kind": {"5"}, "accountNumber": {"@andreamartinez"}})
		if code != 200 || !regexp.MustCompile(`^\p{Lu}\p{Ll}\*+( \p{Lu}\p{Ll}\*+)+$`).MatchString(page.Find("#review-holder").Text()) {
			t.Fatalf("review: %d holder %q %s", code, page.Find("#review-holder").Text(), servertest.DocText(page))
		}
		// Another key under the signature of the one reviewed: refused, nothing taken.
		if code, _, _ := servertest.PostPageForm(t, s.Browser(), page, "form#review-form", url.Values{"answer": {"yes"}, "document": {"1020304050"}, "accountNumber": {"@someoneelse"}}); code != 400 {
			t.Errorf("an altered review answered %d, want 400", code)
		}
		if code, _, page = servertest.PostPageForm(t, s.Browser(), page, "form#review-form", url.Values{"answer": {"yes"}, "document": {"1020304050"}}); code != 303 {
			t.Fatalf("confirm: %d %s", code, servertest.DocText(page))
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Channel != "REAL_TIME_KEY" && d.Channel == "LINK" {
			t.Errorf("after the review: %+v", d)
		}
		c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
	})
}

// The review is no way to read the directory: five holders' names are shown, the sixth
// destination locks the link and ends the payout as five failed attempts do.
func TestPayoutLinkReviewShowsFiveHoldersAtMost(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		req := servertest.LinkRequest("LINK-LOOKS")
		req["allowedDestinations"] = []int{5}
		s, c, a := newLink(t, e, map[string]any{"realTimeKey": true}, req)
		for i := 1; i <= 5; i++ {
			code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"5"}, "accountNumber": {"@persona" + strconv.Itoa(i)}})
			if code != 200 || page.Find("#review-holder").Length() != 1 {
				t.Fatalf("look %d: %d %s", i, code, servertest.DocText(page))
			}
		}
		code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"5"}, "accountNumber": {"@persona6"}})
		if st, _ := page.Find("#result").Attr("class"); code != 410 || !strings.Contains(st, "result-locked") || page.Find("#review-holder").Length() != 0 {
			t.Fatalf("sixth look: %d %s", code, servertest.DocText(page))
		}
		if p := c.WaitStatus(t, a.Payout.ID, "EXPIRED", 5*time.Second); len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCardAttemptsExceded {
			t.Errorf("errors %+v", p.Errors)
		}
	})
}
