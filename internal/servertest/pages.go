package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/apicontract"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/store"
)

// The pages a beneficiary opens (a payout link, a card form) as a browser without
// JavaScript uses them: a page read as a document, its form posted from the same origin.

// Browser is a beneficiary's browser without JavaScript on s: it keeps no cookie and shows
// a redirect instead of following it.
func (s *Server) Browser() *http.Client {
	return s.browser(nil)
}

// CookieBrowser is a Browser that keeps cookies (a dashboard's session), signed in to
// nothing yet.
func (s *Server) CookieBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return s.browser(jar)
}

func (s *Server) browser(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Transport: s.HTTP.Transport, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Text GETs the page u with client and returns its body; anything but a 200 fails the test.
func Text(t testing.TB, client *http.Client, u string) string {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, _, raw := Send(t, client, req)
	if code != 200 {
		t.Fatalf("GET %s: %d %.300s", u, code, raw)
	}
	return string(raw)
}

// Page GETs u with client and parses the answer as HTML.
func Page(t testing.TB, client *http.Client, u string) (int, http.Header, *goquery.Document) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, raw := Send(t, client, req)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", u, err)
	}
	return code, hdr, doc
}

// Page GETs u with the server's Browser.
func (s *Server) Page(t testing.TB, u string) (int, http.Header, *goquery.Document) {
	t.Helper()
	return Page(t, s.Browser(), u)
}

// DocText is a page's text, its white space collapsed: what a failure message shows of it.
func DocText(doc *goquery.Document) string {
	return strings.Join(strings.Fields(doc.Find("body").Text()), " ")
}

// PostForm posts vals to action as a same-origin browser would, and returns the status,
// the redirect target and the page answered.
func PostForm(t testing.TB, client *http.Client, action string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	req, err := http.NewRequest("POST", action, strings.NewReader(vals.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	code, hdr, raw := Send(t, client, req)
	page, _ := goquery.NewDocumentFromReader(bytes.NewReader(raw))
	return code, hdr.Get("Location"), page
}

// SubmitForm opens the page u and posts vals to the action of its form sel.
func SubmitForm(t testing.TB, client *http.Client, u, sel string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	_, _, doc := Page(t, client, u)
	action, ok := doc.Find(sel).Attr("action")
	if !ok {
		t.Fatalf("no %s at %s: %s", sel, u, DocText(doc))
	}
	return PostForm(t, client, action, vals)
}

// PostPageForm posts the form sel of page with vals over its hidden inputs.
func PostPageForm(t testing.TB, client *http.Client, page *goquery.Document, sel string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	action, all := FormOf(t, page, sel)
	for k, v := range vals {
		all[k] = v
	}
	return PostForm(t, client, action, all)
}

// FormOf is the action and the hidden inputs of the form sel of page.
func FormOf(t testing.TB, page *goquery.Document, sel string) (string, url.Values) {
	t.Helper()
	form := page.Find(sel)
	action, ok := form.Attr("action")
	if !ok {
		t.Fatalf("no %s: %s", sel, DocText(page))
	}
	all := url.Values{}
	form.Find("input[type=hidden]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		v, _ := in.Attr("value")
		all.Set(name, v)
	})
	return action, all
}

// FormPost is one post of a form, as a browser sends it.
type FormPost struct {
	Action string
	Body   url.Values
}

// PostAtOnce sends every post at the same moment, as a double click or two tabs would, and
// fails the test unless each was answered 303.
func PostAtOnce(t testing.TB, client *http.Client, posts []FormPost) {
	t.Helper()
	codes := make([]int, len(posts))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, post := range posts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(apicontract.ForTest(context.Background(), t), "POST", post.Action, strings.NewReader(post.Body.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			<-start
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusSeeOther {
			t.Errorf("submission %d answered %d, want 303", i, code)
		}
	}
}

// answered is the payout an answer holds, its fields read as the answer's own (a.Payout.ID).
type answered = Payout

// LinkAnswer is the answer of POST …/payouts/link.
type LinkAnswer struct {
	Link      string `json:"link"`
	ExpiresAt string `json:"expiresAt"`
	answered
}

// LinkDetail is what GET …/payouts/{id} shows of a payout link.
type LinkDetail struct {
	Channel string `json:"channel"`
	Link    *struct {
		State               string `json:"state"`
		ExpiresAt           string `json:"expiresAt"`
		AllowedDestinations []int  `json:"allowedDestinations"`
	} `json:"link"`
}

// CreateLink creates a payout link; the answer is decoded when it is a 200.
func (c *Merchant) CreateLink(t testing.TB, body map[string]any) (int, http.Header, LinkAnswer, []byte) {
	t.Helper()
	code, hdr, raw := c.Do(t, "POST", "payouts/link", body, "")
	var a LinkAnswer
	if code == 200 {
		json.Unmarshal(raw, &a)
		a.answered = DecodePayout(t, raw)
	}
	return code, hdr, a, raw
}

// LinkOf reads the payout id as a link's.
func (c *Merchant) LinkOf(t testing.TB, id int64) LinkDetail {
	t.Helper()
	_, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
	var d LinkDetail
	json.Unmarshal(raw, &d)
	return d
}

// SubmitLink posts the destination form of the link page u.
func (s *Server) SubmitLink(t testing.TB, u string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	return SubmitForm(t, s.Browser(), u, "form#link-form", vals)
}

// GiveDestination submits the link's form, then confirms its review with the document
// typed: the answer is the review's (303 when the payout took the destination).
func (s *Server) GiveDestination(t testing.TB, link string, vals url.Values, document string) (int, string, *goquery.Document) {
	t.Helper()
	return GiveDestination(t, s.Browser(), link, vals, document)
}

// GiveDestination is Server.GiveDestination with client, a Browser.
func GiveDestination(t testing.TB, client *http.Client, link string, vals url.Values, document string) (int, string, *goquery.Document) {
	t.Helper()
	code, loc, page := SubmitForm(t, client, link, "form#link-form", vals)
	if code != 200 || page.Find("form#review-form").Length() == 0 {
		return code, loc, page
	}
	return PostPageForm(t, client, page, "form#review-form", url.Values{"answer": {"yes"}, "document": {document}})
}

// CardAnswer is the JSON answer of the card endpoint.
type CardAnswer struct {
	Iframe    string `json:"iframe"`
	ExpiresAt string `json:"expiresAt"`
	answered
}

// CreateCard calls the card endpoint (path relative to /api/v1/{id}, or absolute) with an
// Accept header ("" sends none).
func (c *Merchant) CreateCard(t testing.TB, path string, body any, accept string) (int, http.Header, []byte) {
	t.Helper()
	req := c.Request("POST", path, bodyBytes(body), "")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return Send(t, c.HTTP, req)
}

// OpenCard creates a card payout asking for JSON, or fails the test unless it answers
// wantStatus.
func (c *Merchant) OpenCard(t testing.TB, body map[string]any, wantStatus int) CardAnswer {
	t.Helper()
	code, _, raw := c.CreateCard(t, "payouts/card", body, "application/json")
	if code != wantStatus {
		t.Fatalf("card payout: got %d %s, want %d", code, raw, wantStatus)
	}
	var a CardAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("decode: %v: %s", err, raw)
	}
	a.answered = DecodePayout(t, raw)
	return a
}

// SubmitCard posts the card form of page u.
func (s *Server) SubmitCard(t testing.TB, u string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	return SubmitForm(t, s.Browser(), u, "form#card-form", vals)
}

// CardValues are the card form's inputs for a new card.
func CardValues(pan, expiry, cvv string) url.Values {
	return url.Values{"card": {"new"}, "holder": {"ANA QUISPE"}, "pan": {pan}, "expiry": {expiry}, "cvv": {cvv}}
}

// FutureExpiry is a card expiry three years ahead (MM/YY).
func FutureExpiry() string {
	return time.Now().AddDate(3, 0, 0).Format("01/06")
}

// CardStatus is the card form's status endpoint's answer (what card.js polls).
type CardStatus struct {
	PayoutID int64  `json:"payoutId"`
	OrderID  string `json:"orderId"`
	Stage    string `json:"stage"`
	Status   string `json:"status"`
	State    string `json:"state"`
	Final    bool   `json:"final"`
	Topic    string `json:"topic"`
}

// WaitCardStatus polls the status endpoint of the card form at formURL, as card.js does,
// with client until it is final, or fails the test.
func WaitCardStatus(t testing.TB, client *http.Client, formURL string, within time.Duration) CardStatus {
	t.Helper()
	u := strings.Replace(formURL, "/card?", "/card/status?", 1)
	var last CardStatus
	if Poll(within, func() bool {
		req, _ := http.NewRequest("GET", u, nil)
		_, _, raw := Send(t, client, req)
		last = CardStatus{}
		json.Unmarshal(raw, &last)
		return last.Final
	}) {
		return last
	}
	t.Fatalf("status not final within %v: %+v", within, last)
	return last
}

// StoredCards are the cards a store holds, as stored (sealed).
func StoredCards(t testing.TB, db rules.Storage) []rules.DumpedCard {
	t.Helper()
	var out []rules.DumpedCard
	err := db.Dump(context.Background(), func(r rules.DumpRecord) error {
		if r.Kind != rules.DumpCard {
			return nil
		}
		var c rules.DumpedCard
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return err
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Cards stops the server, reads the cards its store holds and starts it again.
func (s *Server) Cards(t testing.TB) []rules.DumpedCard {
	t.Helper()
	var out []rules.DumpedCard
	s.Restart(t, func(db rules.Storage, _ *store.Sealer) { out = StoredCards(t, db) })
	return out
}

// CardSealer is the sealer of the server's card key (--card-key-file, else the data
// directory's card.key).
func (s *Server) CardSealer(t testing.TB) *store.Sealer {
	t.Helper()
	var key []byte
	var err error
	if s.cfg.Keys.Card != "" {
		key, err = store.ParseKey(s.cfg.Keys.Card)
	} else {
		key, err = store.LoadOrCreateKey(filepath.Join(s.Data, server.CardKeyFile))
	}
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return sealer
}

// LinkRequest is a Colombia payout link offering a savings account.
func LinkRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "COL", "amount": 15000000, "currency": "COP", "orderId": orderID, "description": "Reembolso",
		"beneficiary": map[string]any{"name": "Juan", "lastName": "Pérez", "email": "juan.perez@gmail.com",
			"document": map[string]any{"type": 1, "number": "1020304050"}},
		"expirationTime": 60, "allowedDestinations": []int{2}, "returnUrl": "https://merchant.example/back",
	}
}

// PeruCellphoneLink is a Peru link to a cellphone wallet with the beneficiary's document,
// in lang ("": the page's default).
func PeruCellphoneLink(orderID, lang string) map[string]any {
	req := map[string]any{
		"country": "PER", "amount": 10000, "currency": "PEN", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"allowedDestinations": []int{4}, "returnUrl": "https://merchant.example/back",
	}
	if lang != "" {
		req["lang"] = lang
	}
	return req
}

// PeruCardLink is a Peru link that offers a card only.
func PeruCardLink(orderID string) map[string]any {
	req := PeruCellphoneLink(orderID, "")
	req["allowedDestinations"] = []int{rules.LinkCardKind}
	return req
}
