package e2e

// Payout links from the dashboard, as a browser without JavaScript uses it: the form
// creates one through the same service as the API (its errors with their codes, at their
// fields), the payout's page shows the link to copy, resends its email within the limits,
// and cancels it, its reservation released.

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// dashDoc GETs a dashboard page with c and parses it; anything but 200 fails.
func dashDoc(t *testing.T, c *http.Client, u string) (*goquery.Document, http.Header) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, docText(doc))
	}
	return doc, resp.Header
}

// linkForm is a filled dashboard link form for Colombia.
func linkForm(orderID string) url.Values {
	return url.Values{"amount": {"150000"}, "currency": {"COP"}, "orderId": {orderID}, "description": {"Reembolso"},
		"beneficiary.name": {"Juan"}, "beneficiary.lastName": {"Pérez"}, "beneficiary.email": {"juan.perez@gmail.com"},
		"beneficiary.document.type": {"1"}, "beneficiary.document.number": {"1020304050"},
		"expirationTime": {"4320"}, "lang": {"es"}, "allowedDestinations": {"2", "4"}}
}

func TestDashboardPayoutLink(t *testing.T) {
	s := startServer(t, "")
	m := s.newMerchant(t, map[string]any{"emailNotifications": true})
	avail0, _ := m.balanceOf(t, "COP")
	c := dashboardSignIn(t, s)
	newLink := s.URL + "/dashboard/merchants/" + m.MerchantID + "/new-link"

	if doc, _ := dashDoc(t, c, s.URL+"/dashboard/merchants/"+m.MerchantID); doc.Find("a#new-link").Length() != 1 {
		t.Fatal("the merchant's page has no link to the payout link form")
	}
	doc, _ := dashDoc(t, c, newLink+"?country=COL")
	var kinds []string
	doc.Find(`input[name="allowedDestinations"]`).Each(func(_ int, s *goquery.Selection) { kinds = append(kinds, s.AttrOr("value", "")) })
	if strings.Join(kinds, ",") != "2,1,4" || doc.Find(`label[for="nl-beneficiary-email"]`).Length() != 1 || doc.Find("#nl-mails").Length() != 1 {
		t.Fatalf("the COL form: kinds %v, or an unlabelled field:\n%s", kinds, docText(doc))
	}
	if doc, _ := dashDoc(t, c, newLink+"?country=PER"); doc.Find(`input[name="allowedDestinations"]`).Length() != 3 ||
		doc.Find(`select[name="currency"] option[value="PEN"]`).Length() != 1 {
		t.Fatalf("the PER form:\n%s", docText(doc))
	}

	// The merchant has no Bre-B: its kinds are those the country offers it.

	// Refused: every error at once, with its code, in the summary and at its field; nothing
	// created.
	bad := linkForm("DLINK-BAD")
	bad.Del("beneficiary.email")
	bad.Set("amount", "12.345")
	bad.Set("expirationTime", "3")
	bad["allowedDestinations"] = []string{"9"}
	resp, err := c.PostForm(newLink+"?country=COL", bad)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	summary := page.Find("#nl-errors").Text()
	if resp.StatusCode != 400 || !strings.Contains(summary, "amount") || !strings.Contains(summary, "1955") || !strings.Contains(summary, "1956") ||
		page.Find("#nl-expirationTime-error").Length() != 1 || page.Find("#nl-kinds-error").Length() != 1 ||
		page.Find(`#nl-amount[aria-invalid]`).Length() != 1 || page.Find(`#nl-orderId`).AttrOr("value", "") != "DLINK-BAD" {
		t.Fatalf("a refused link: %d\n%s", resp.StatusCode, docText(page))
	}
	if code, _, raw := m.do(t, "GET", "payouts", nil, "orderId=DLINK-BAD"); code != 200 || strings.Contains(string(raw), "DLINK-BAD") {
		t.Fatalf("a refused link was stored: %s", raw)
	}

	// Created: 303 to the payout's page, which shows the link to copy.
	resp, err = c.PostForm(newLink+"?country=COL", linkForm("DLINK-1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/dashboard/payouts/"), 10, 64)
	if resp.StatusCode != http.StatusSeeOther || id == 0 {
		t.Fatalf("create: %d to %q", resp.StatusCode, loc)
	}
	doc, hdr := dashDoc(t, c, s.URL+loc)
	linkURL := doc.Find("input#link-url").AttrOr("value", "")
	if doc.Find("#link-state").AttrOr("data-state", "") != "waiting" || !strings.Contains(linkURL, "/link?s=") ||
		doc.Find("input#link-url[readonly]").Length() != 1 || doc.Find("button#link-copy[hidden]").Length() != 1 ||
		doc.Find(`script[src^="/static/dashcopy.js?v="]`).Length() != 1 || !strings.Contains(hdr.Get("Content-Security-Policy"), "script-src 'self'") ||
		doc.Find("#link-kinds").Text() != "Cuenta de ahorros (2), Billetera celular (4)" || doc.Find("#link-expires").Text() == "" {
		t.Fatalf("the link on its payout's page (CSP %q):\n%s", hdr.Get("Content-Security-Policy"), docText(doc))
	}
	if doc, hdr := dashDoc(t, c, s.URL+"/dashboard/payouts"); doc.Find("script").Length() != 0 || strings.Contains(hdr.Get("Content-Security-Policy"), "script-src") {
		t.Error("a page without a link to copy allows scripts")
	}
	// It is the API's link: the same payout, waiting, reserved, the same page.
	if d := m.linkOf(t, id); d.Link == nil || d.Link.State != "waiting" || len(d.Link.AllowedDestinations) != 2 {
		t.Fatalf("the API's view: %+v", d)
	}
	if _, _, again, raw := m.createLink(t, map[string]any{"country": "COL", "amount": 15000000, "currency": "COP", "orderId": "DLINK-1", "description": "Reembolso",
		"beneficiary":    map[string]any{"name": "Juan", "lastName": "Pérez", "email": "juan.perez@gmail.com", "document": map[string]any{"type": 1, "number": "1020304050"}},
		"expirationTime": 4320, "allowedDestinations": []int{2, 4}, "lang": "es"}); again.Link != linkURL || again.Payout.ID != id {
		t.Fatalf("the same body through the API is not the same link (%s): %s", linkURL, raw)
	}
	if avail, _ := m.balanceOf(t, "COP"); avail != avail0-15000000 {
		t.Fatalf("available %d, want %d reserved", avail, avail0-15000000)
	}
	// The same form again is the same link.
	resp, err = c.PostForm(newLink+"?country=COL", linkForm("DLINK-1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Location") != loc {
		t.Fatalf("the same form again: %q, want %q", resp.Header.Get("Location"), loc)
	}
	// Listed as a link.
	if doc, _ := dashDoc(t, c, s.URL+"/dashboard/payouts?channel=LINK"); !strings.Contains(docText(doc), "DLINK-1") {
		t.Fatalf("the LINK filter does not list it:\n%s", docText(doc))
	}

	// The email, and one resend; a second within ten minutes is refused (2925); later it goes.
	query := "?kind=link.mail&payoutId=" + itoa(id)
	if mail := s.waitMails(t, query, 1, 10*time.Second)[0]; !strings.Contains(mail.Text, linkURL) {
		t.Fatalf("the link's email: %+v", mail)
	}
	resend := func() string {
		t.Helper()
		resp, err := c.PostForm(s.URL+loc+"/link-mail", url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != loc {
			t.Fatalf("resend: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		doc, _ := dashDoc(t, c, s.URL+loc)
		return docText(doc)
	}
	if page := resend(); !strings.Contains(page, "Correo del enlace reenviado") || !strings.Contains(page, "Reenvíos: 1 de 5") {
		t.Fatalf("after a resend:\n%s", page)
	}
	if got := s.waitMails(t, query, 2, 10*time.Second); len(got) != 2 || !strings.Contains(got[0].Text, linkURL) {
		t.Fatalf("the resent email: %+v", got)
	}
	if page := resend(); !strings.Contains(page, "2925") {
		t.Fatalf("a second resend at once was not refused with 2925:\n%s", page)
	}
	s.advance(t, "10m")
	resend()
	s.waitMails(t, query, 3, 10*time.Second)
	var audit struct {
		Entries []struct{ Action, Target string }
	}
	if code := s.admin(t, "GET", "/admin/v1/audit?limit=100", nil, &audit); code != 200 {
		t.Fatalf("audit: %d", code)
	}
	actions := map[string]int{}
	for _, e := range audit.Entries {
		if e.Target == "payout:"+itoa(id) {
			actions[e.Action]++
		}
	}
	if actions["payout.link.create"] != 1 || actions["payout.link.resend"] != 2 {
		t.Errorf("audit of the link: %v", actions)
	}

	// Cancelled from its page: the link ends, the reservation is released, no more resend.
	resp, err = c.PostForm(s.URL+loc+"/cancel", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	doc, _ = dashDoc(t, c, s.URL+loc)
	if doc.Find("#link-state").AttrOr("data-state", "") != "cancelled" || doc.Find("#link-url").Length() != 0 || doc.Find("#link-resend").Length() != 0 {
		t.Fatalf("a cancelled link:\n%s", docText(doc))
	}
	if d := m.linkOf(t, id); d.Link == nil || d.Link.State != "ended" {
		t.Errorf("the API's view of the cancelled link: %+v", d)
	}
	if avail, _ := m.balanceOf(t, "COP"); avail != avail0 {
		t.Errorf("available %d after the cancel, want %d", avail, avail0)
	}
	if code, _, _ := postForm(t, c, s.URL+loc+"/link-mail", url.Values{}); code != http.StatusSeeOther {
		t.Errorf("resend of a cancelled link: %d", code)
	}
	if n := len(s.sandboxMails(t, query)); n != 3 {
		t.Errorf("%d link mails, want the link's and two resends", n)
	}

	// An expired link says so.
	exp := linkForm("DLINK-2")
	exp.Set("expirationTime", "60")
	resp, err = c.PostForm(newLink+"?country=COL", exp)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc2 := resp.Header.Get("Location")
	s.advance(t, "61m")
	id2, _ := strconv.ParseInt(strings.TrimPrefix(loc2, "/dashboard/payouts/"), 10, 64)
	m.waitStatus(t, id2, "EXPIRED", 10*time.Second)
	doc, _ = dashDoc(t, c, s.URL+loc2)
	if doc.Find("#link-state").AttrOr("data-state", "") != "expired" || !regexp.MustCompile(`4042`).MatchString(docText(doc)) {
		t.Errorf("an expired link:\n%s", docText(doc))
	}
}
