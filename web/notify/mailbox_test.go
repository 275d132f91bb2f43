package notify_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/rules"
	"payouts/web/notify"
)

func fillBox(t *testing.T) *memBox {
	box := &memBox{}
	for i, m := range []notify.Mail{
		{To: "a@b.pe", Subject: "first", PayoutID: 1, Kind: rules.EventBeneficiaryMail, HTML: "<p>uno</p>", Text: "uno"},
		{To: "c@d.co", Subject: "código", PayoutID: 2, Kind: rules.EventCashOTP, HTML: `<p class="code">123456</p>`, Text: "dos"},
		{To: "a@b.pe", Subject: "third <script>", PayoutID: 3, Kind: rules.EventBeneficiaryMail, HTML: "<p>tres</p>", Text: "tres"},
	} {
		m.SentAt = mailT0.Add(time.Duration(i) * time.Minute)
		raw, _ := json.Marshal(m)
		box.PutSandboxMail(context.Background(), "", raw, m.SentAt)
	}
	return box
}

func TestMailboxJSONListsNewestFirstWithFilters(t *testing.T) {
	h := notify.MailboxHandlers{Box: fillBox(t), Sandbox: true}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"third <script>", "código", "first"}},
		{"?to=a@b.pe", []string{"third <script>", "first"}},
		{"?payoutId=2", []string{"código"}},
		{"?kind=cash.otp", []string{"código"}},
		{"?limit=1", []string{"third <script>"}},
		{"?to=nobody@x.pe", []string{}},
	} {
		rec := httptest.NewRecorder()
		h.JSON(rec, httptest.NewRequest("GET", "/sandbox/mail.json"+tc.query, nil))
		var got []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
			t.Fatalf("%s: %d %v %s", tc.query, rec.Code, err, rec.Body)
		}
		var subjects []string
		for _, m := range got {
			subjects = append(subjects, m["subject"].(string))
			for _, f := range []string{"to", "subject", "text", "html", "sentAt", "payoutId", "kind"} {
				if _, ok := m[f]; !ok {
					t.Errorf("%s: a mail lacks %q", tc.query, f)
				}
			}
		}
		if strings.Join(subjects, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: subjects %q, want %q", tc.query, subjects, tc.want)
		}
	}
	rec := httptest.NewRecorder()
	h.JSON(rec, httptest.NewRequest("GET", "/sandbox/mail.json?limit=0", nil))
	if rec.Code != 400 {
		t.Errorf("limit=0: %d, want 400", rec.Code)
	}
}

func TestMailboxPageRendersEachMailEscaped(t *testing.T) {
	h := notify.MailboxHandlers{Box: fillBox(t), Sandbox: true}
	rec := httptest.NewRecorder()
	h.Page(rec, httptest.NewRequest("GET", "/sandbox/mail", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	doc.Find("article.mail .subject").Each(func(_ int, s *goquery.Selection) { subjects = append(subjects, s.Text()) })
	if strings.Join(subjects, "|") != "third <script>|código|first" {
		t.Errorf("subjects %q, want newest first", subjects)
	}
	if doc.Find("script").Length() != 0 {
		t.Errorf("a subject became markup")
	}
	frame := doc.Find("article.mail iframe").Eq(1)
	if src, _ := frame.Attr("srcdoc"); src != `<p class="code">123456</p>` {
		t.Errorf("iframe srcdoc %q", src)
	}
	if _, sandboxed := frame.Attr("sandbox"); !sandboxed {
		t.Errorf("the mail's HTML is not in a sandboxed iframe")
	}
}

func TestMailboxRefusedWhenSandboxIsOff(t *testing.T) {
	h := notify.MailboxHandlers{Box: fillBox(t), Sandbox: false}
	for _, serve := range []func(rec *httptest.ResponseRecorder){
		func(rec *httptest.ResponseRecorder) {
			h.JSON(rec, httptest.NewRequest("GET", "/sandbox/mail.json", nil))
		},
		func(rec *httptest.ResponseRecorder) { h.Page(rec, httptest.NewRequest("GET", "/sandbox/mail", nil)) },
	} {
		rec := httptest.NewRecorder()
		serve(rec)
		var p struct{ Code string }
		json.Unmarshal(rec.Body.Bytes(), &p)
		if rec.Code != 403 || p.Code != rules.CodeSandboxOff || strings.Contains(rec.Body.String(), "123456") {
			t.Errorf("%d %s, want 403 2960 and no mail", rec.Code, rec.Body)
		}
	}
}
