package web_test

// Payout links from the dashboard, in process (servertest) on each engine, as a browser
// without JavaScript uses it: the form creates one through the same service as the API (its
// errors with their codes, at their fields), the payout's page shows the link to copy,
// resends its email within the limits, and cancels it, its reservation released; a batch's
// rows without destination become links; the link's actions take the dashboard's roles.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/server"
	"payouts/internal/servertest"
)

// dashDoc GETs a dashboard page with c and parses it; anything but 200 fails.
func dashDoc(t *testing.T, c *http.Client, u string) (*goquery.Document, http.Header) {
	t.Helper()
	code, hdr, doc := servertest.Page(t, c, u)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", u, code, servertest.DocText(doc))
	}
	return doc, hdr
}

// linkForm is a filled dashboard link form for Colombia.
func linkForm(orderID string) url.Values {
	return url.Values{"amount": {"150000"}, "currency": {"COP"}, "orderId": {orderID}, "description": {"Reembolso"},
		"beneficiary.name": {"Juan"}, "beneficiary.lastName": {"Pérez"}, "beneficiary.email": {"juan.perez@gmail.com"},
		"beneficiary.document.type": {"1"}, "beneficiary.document.number": {"1020304050"},
		"expirationTime": {"4320"}, "lang": {"es"}, "allowedDestinations": {"2", "4"}}
}

func TestDashboardPayoutLink(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, map[string]any{"emailNotifications": true})
		avail0, _ := m.Balance(t, "COP")
		c := s.Dashboard(t)
		newLink := s.URL + "/dashboard/merchants/" + m.MerchantID + "/new-link"

		if doc, _ := dashDoc(t, c, s.URL+"/dashboard/merchants/"+m.MerchantID); doc.Find("a#new-link").Length() != 1 {
			t.Fatal("the merchant's page has no link to the payout link form")
		}
		doc, _ := dashDoc(t, c, newLink+"?country=COL")
		var kinds []string
		doc.Find(`input[name="allowedDestinations"]`).Each(func(_ int, s *goquery.Selection) { kinds = append(kinds, s.AttrOr("value", "")) })
		if strings.Join(kinds, ",") != "2,1,4" || doc.Find(`label[for="nl-beneficiary-email"]`).Length() != 1 || doc.Find("#nl-mails").Length() != 1 {
			t.Fatalf("the COL form: kinds %v, or an unlabelled field:\n%s", kinds, servertest.DocText(doc))
		}
		if doc, _ := dashDoc(t, c, newLink+"?country=PER"); doc.Find(`input[name="allowedDestinations"]`).Length() != 3 ||
			doc.Find(`select[name="currency"] option[value="PEN"]`).Length() != 1 {
			t.Fatalf("the PER form:\n%s", servertest.DocText(doc))
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
			t.Fatalf("a refused link: %d\n%s", resp.StatusCode, servertest.DocText(page))
		}
		if code, _, raw := m.Do(t, "GET", "payouts", nil, "orderId=DLINK-BAD"); code != 200 || strings.Contains(string(raw), "DLINK-BAD") {
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
			t.Fatalf("the link on its payout's page (CSP %q):\n%s", hdr.Get("Content-Security-Policy"), servertest.DocText(doc))
		}
		if doc, hdr := dashDoc(t, c, s.URL+"/dashboard/payouts"); doc.Find("script").Length() != 0 || strings.Contains(hdr.Get("Content-Security-Policy"), "script-src") {
			t.Error("a page without a link to copy allows scripts")
		}
		// It is the API's link: the same payout, waiting, reserved, the same page.
		if d := m.LinkOf(t, id); d.Link == nil || d.Link.State != "waiting" || len(d.Link.AllowedDestinations) != 2 {
			t.Fatalf("the API's view: %+v", d)
		}
		if _, _, again, raw := m.CreateLink(t, map[string]any{"country": "COL", "amount": 15000000, "currency": "COP", "orderId": "DLINK-1", "description": "Reembolso",
			"beneficiary":    map[string]any{"name": "Juan", "lastName": "Pérez", "email": "juan.perez@gmail.com", "document": map[string]any{"type": 1, "number": "1020304050"}},
			"expirationTime": 4320, "allowedDestinations": []int{2, 4}, "lang": "es"}); again.Link != linkURL || again.Payout.ID != id {
			t.Fatalf("the same body through the API is not the same link (%s): %s", linkURL, raw)
		}
		if avail, _ := m.Balance(t, "COP"); avail != avail0-15000000 {
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
		if doc, _ := dashDoc(t, c, s.URL+"/dashboard/payouts?channel=LINK"); !strings.Contains(servertest.DocText(doc), "DLINK-1") {
			t.Fatalf("the LINK filter does not list it:\n%s", servertest.DocText(doc))
		}

		// The email, and one resend; a second within ten minutes is refused (2925); later it goes.
		query := "?kind=link.mail&payoutId=" + strconv.FormatInt(id, 10)
		if mail := s.WaitMails(t, query, 1, 10*time.Second)[0]; !strings.Contains(mail.Text, linkURL) {
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
			return servertest.DocText(doc)
		}
		if page := resend(); !strings.Contains(page, "Correo del enlace reenviado") || !strings.Contains(page, "Reenvíos: 1 de 5") {
			t.Fatalf("after a resend:\n%s", page)
		}
		if got := s.WaitMails(t, query, 2, 10*time.Second); len(got) != 2 || !strings.Contains(got[0].Text, linkURL) {
			t.Fatalf("the resent email: %+v", got)
		}
		if page := resend(); !strings.Contains(page, "2925") {
			t.Fatalf("a second resend at once was not refused with 2925:\n%s", page)
		}
		s.Advance(t, "10m")
		resend()
		s.WaitMails(t, query, 3, 10*time.Second)
		var audit struct {
			Entries []struct{ Action, Target string }
		}
		if code := s.Admin(t, "GET", "/admin/v1/audit?limit=100", nil, &audit); code != 200 {
			t.Fatalf("audit: %d", code)
		}
		actions := map[string]int{}
		for _, e := range audit.Entries {
			if e.Target == "payout:"+strconv.FormatInt(id, 10) {
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
			t.Fatalf("a cancelled link:\n%s", servertest.DocText(doc))
		}
		if d := m.LinkOf(t, id); d.Link == nil || d.Link.State != "ended" {
			t.Errorf("the API's view of the cancelled link: %+v", d)
		}
		if avail, _ := m.Balance(t, "COP"); avail != avail0 {
			t.Errorf("available %d after the cancel, want %d", avail, avail0)
		}
		if code, _, _ := servertest.PostValues(t, c, s.URL+loc+"/link-mail", url.Values{}); code != http.StatusSeeOther {
			t.Errorf("resend of a cancelled link: %d", code)
		}
		if n := len(servertest.Mailbox(t, s.HTTP, s.URL, s.AdminToken, query)); n != 3 {
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
		s.Advance(t, "61m")
		id2, _ := strconv.ParseInt(strings.TrimPrefix(loc2, "/dashboard/payouts/"), 10, 64)
		m.WaitStatus(t, id2, "EXPIRED", 10*time.Second)
		doc, _ = dashDoc(t, c, s.URL+loc2)
		if doc.Find("#link-state").AttrOr("data-state", "") != "expired" || !regexp.MustCompile(`4042`).MatchString(servertest.DocText(doc)) {
			t.Errorf("an expired link:\n%s", servertest.DocText(doc))
		}
	})
}

// A batch row without destination becomes a payout link once the batch is approved
// (maker-checker as any batch), emailed as a link the API creates is; the batch's page,
// its items and its result CSV show it as a link. A row without destination nor email is
// refused with 1960 at its item and column.
func TestDashboardBatchWithLinkRows(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, map[string]any{"emailNotifications": true})
		c := s.Dashboard(t)
		header := "country,currency,amount,orderId,beneficiary.name,beneficiary.lastName,beneficiary.email,beneficiary.document.type,beneficiary.document.number," +
			"destination.bankAccount.bankCode,destination.bankAccount.accountType,destination.bankAccount.accountNumber,expirationTime,allowedDestinations\n"
		payout := "PER,PEN,100000,BLD-1,Ana,Quispe,,1,45678912,002,2,19312345678012,,\n"
		link := "PER,PEN,120000,BLD-2,Rosa,Huamán,rosa.huaman@gmail.com,1,45678913,,,,4320,2;1\n"
		upload := func(batchID, csv string) (int, servertest.Batch, []byte) {
			t.Helper()
			req := m.Request("POST", "batches", []byte(csv), "batchId="+batchID)
			req.Header.Set("Content-Type", "text/csv")
			code, _, raw := servertest.Send(t, m.HTTP, req)
			return code, servertest.DecodeBatch(t, raw), raw
		}

		code, bad, raw := upload("links-bad", header+payout+link+"PER,PEN,90000,BLD-3,Luis,Rojas,,1,45678914,,,,,\n")
		if code != 201 || bad.Status != "INVALID" || !strings.Contains(string(raw), `"item":3,"code":"1960","location":"beneficiary.email"`) {
			t.Fatalf("a row without destination nor email: %d %s", code, raw)
		}

		code, b, raw := upload("links", header+payout+link)
		if code != 201 || b.Status != "DRAFT" || !strings.Contains(string(raw), `"links":1`) {
			t.Fatalf("upload: %d %s", code, raw)
		}
		href := "/dashboard/merchants/" + m.MerchantID + "/batches/" + strconv.FormatInt(b.ID, 10)
		doc, _ := dashDoc(t, c, s.URL+href)
		if rows := doc.Find("#b-links tbody tr"); rows.Length() != 1 || !strings.Contains(rows.Text(), "BLD-2") || !strings.Contains(rows.Text(), "NOT_CREATED") {
			t.Fatalf("the draft's page does not show its link row:\n%s", servertest.DocText(doc))
		}
		resp, err := c.PostForm(s.URL+href+"/approve", url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		m.WaitBatch(t, b.ID, 30*time.Second, func(b servertest.Batch) bool { return b.Status == "COMPLETED" })

		code, _, raw = m.Do(t, "GET", "batches/"+strconv.FormatInt(b.ID, 10)+"/items", nil, "")
		var page struct {
			Items []struct {
				OrderID  string `json:"orderId"`
				PayoutID int64  `json:"payoutId"`
				Kind     string `json:"kind"`
				Status   string `json:"status"`
			} `json:"items"`
		}
		json.Unmarshal(raw, &page)
		if code != 200 || len(page.Items) != 2 || page.Items[0].Kind != "payout" || page.Items[1].Kind != "link" || page.Items[1].PayoutID == 0 {
			t.Fatalf("items: %d %s", code, raw)
		}
		id := page.Items[1].PayoutID
		if d := m.LinkOf(t, id); d.Channel != "LINK" || d.Link == nil || d.Link.State != "waiting" || len(d.Link.AllowedDestinations) != 2 {
			t.Fatalf("the link row's payout: %+v", d)
		}
		mail := s.WaitMails(t, "?kind=link.mail&payoutId="+strconv.FormatInt(id, 10), 1, 10*time.Second)[0]
		doc, _ = dashDoc(t, c, s.URL+"/dashboard/payouts/"+strconv.FormatInt(id, 10))
		linkURL := doc.Find("input#link-url").AttrOr("value", "")
		if mail.To != "rosa.huaman@gmail.com" || linkURL == "" || !strings.Contains(mail.Text, linkURL) {
			t.Fatalf("the link row's email (%q): %+v", linkURL, mail)
		}
		doc, _ = dashDoc(t, c, s.URL+href)
		if a := doc.Find("#b-links tbody tr a"); a.AttrOr("href", "") != "/dashboard/payouts/"+strconv.FormatInt(id, 10) {
			t.Errorf("the batch's page does not link the link row's payout:\n%s", servertest.DocText(doc))
		}
		csv := servertest.Text(t, c, s.URL+href+"/result.csv")
		if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasSuffix(lines[0], ",kind") ||
			!strings.HasSuffix(lines[1], ",payout") || !strings.HasSuffix(lines[2], ",link") {
			t.Errorf("result CSV: %q", csv)
		}
	})
}

// The link's actions take the roles of the dashboard's other payout actions: a maker creates,
// sees the link, resends and cancels; a viewer sees the link's state only, and every post
// is refused.
//
// Serial: its sign-in codes are those of one 30-second window of real time from its start,
// which the other tests running at once could make it overrun (serial tests run before the
// parallel ones start).
func TestDashboardPayoutLinkRoles(t *testing.T) {
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		clock := servertest.StepStartClock()
		now := clock.Now().Unix() / 30
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		m := s.NewMerchant(t, map[string]any{"emailNotifications": true})
		user := func(name, email, role string) servertest.User {
			t.Helper()
			var c struct{ ID, SetupLink string }
			if code := s.Admin(t, "POST", "/admin/v1/users", map[string]any{"name": name, "email": email, "role": role, "merchantId": m.MerchantID}, &c); code != 201 {
				t.Fatalf("create %s: %d", role, code)
			}
			u := servertest.User{ID: c.ID, Email: email, Password: "correct horse " + role}
			s.SetUpUser(t, c.SetupLink, &u, now-1)
			return u
		}
		makerU, viewerU := user("Marta Maker", "marta@tienda.co", "maker"), user("Víctor Viewer", "victor@tienda.co", "viewer")
		maker, code := s.UserSignIn(t, makerU, now)
		if maker == nil {
			t.Fatalf("maker sign-in: %d", code)
		}
		viewer, code := s.UserSignIn(t, viewerU, now)
		if viewer == nil {
			t.Fatalf("viewer sign-in: %d", code)
		}
		newLink := s.URL + "/dashboard/merchants/" + m.MerchantID + "/new-link"

		if _, body, _ := servertest.GetPage(t, viewer, s.URL+"/dashboard/merchants/"+m.MerchantID); strings.Contains(body, "new-link") {
			t.Error("the viewer's merchant page offers a new payout link")
		}
		if code, _, _ := servertest.GetPage(t, viewer, newLink); code != 403 {
			t.Errorf("viewer GET new-link: %d, want 403", code)
		}
		if code, _, _ := servertest.PostValues(t, viewer, newLink+"?country=COL", linkForm("ROLE-V")); code != 403 {
			t.Errorf("viewer POST new-link: %d, want 403", code)
		}
		code, _, loc := servertest.PostValues(t, maker, newLink+"?country=COL", linkForm("ROLE-1"))
		if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/payouts/") {
			t.Fatalf("maker creates: %d to %q", code, loc)
		}
		doc, _ := dashDoc(t, maker, s.URL+loc)
		if doc.Find("#link-url").Length() != 1 || doc.Find("#link-resend").Length() != 1 || doc.Find("#cancel").Length() != 1 {
			t.Fatalf("the maker's link panel:\n%s", servertest.DocText(doc))
		}
		doc, hdr := dashDoc(t, viewer, s.URL+loc)
		if doc.Find("#link-state").AttrOr("data-state", "") != "waiting" || doc.Find("#link-url").Length() != 0 || doc.Find("#link-resend").Length() != 0 ||
			doc.Find("#cancel").Length() != 0 || strings.Contains(hdr.Get("Content-Security-Policy"), "script-src") {
			t.Fatalf("the viewer's link panel shows the link or an action:\n%s", servertest.DocText(doc))
		}
		for _, action := range []string{"/link-mail", "/cancel"} {
			if code, _, _ := servertest.PostValues(t, viewer, s.URL+loc+action, url.Values{}); code != 403 {
				t.Errorf("viewer POST %s: %d, want 403", action, code)
			}
		}
		if code, _, _ := servertest.PostValues(t, maker, s.URL+loc+"/link-mail", url.Values{}); code != http.StatusSeeOther {
			t.Errorf("maker resends: %d", code)
		}
		var audit struct {
			Entries []struct{ Action, Target, Actor string }
		}
		s.Admin(t, "GET", "/admin/v1/audit?limit=100", nil, &audit)
		who := map[string]string{}
		for _, e := range audit.Entries {
			if e.Target == "payout:"+strings.TrimPrefix(loc, "/dashboard/payouts/") {
				who[e.Action] = e.Actor
			}
		}
		if who["payout.link.create"] != "Marta Maker" || who["payout.link.resend"] != "Marta Maker" {
			t.Errorf("the audit log names %v, want the maker", who)
		}
	})
}
