package notify_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/internal/freeport"
	"payouts/rules"
	"payouts/templates"
	"payouts/web/notify"
	"payouts/web/notify/smtptest"
)

var mailT0 = time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC)

func perPayout(status rules.Status, code string) *rules.Payout {
	p := &rules.Payout{ID: 73, MerchantID: "22", OrderID: "ORD-1", Country: "PER", Currency: "PEN", Amount: 100000,
		Channel: rules.ChannelBatch, Status: rules.StatusCreated, Stage: rules.StageInProgress}
	p.Request.Beneficiary.Name = "Ana"
	p.Request.Beneficiary.Email = "ana.quispe@gmail.com"
	p.Move(status, mailT0, code, "bank note")
	return p
}

func cashPayout() *rules.Payout {
	p := &rules.Payout{ID: 80, MerchantID: "22", OrderID: "CASH-1", Country: "COL", Currency: "COP", Amount: 5000000,
		Channel: rules.ChannelCash, Status: rules.StatusPendingBank, Stage: rules.StageInProgress,
		ClaimUntil: time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)} // end of 2026-11-28 in UTC-5
	p.Request.Beneficiary.Name = "Pedro"
	p.Request.Beneficiary.Email = "pedro.ramirez@yahoo.com"
	return p
}

var merchant = &rules.Merchant{ID: "22", Name: "Tienda Ejemplo"}

func TestOutcomeMailSuccessIsSpanishWithAmountMerchantAndOrder(t *testing.T) {
	p := perPayout(rules.StatusProcessed, "")
	m, err := notify.OutcomeMail(p, merchant, notify.Outcome{Status: p.Status, At: p.StatusChangedAt})
	if err != nil {
		t.Fatal(err)
	}
	if m.To != "ana.quispe@gmail.com" {
		t.Errorf("to %q", m.To)
	}
	if m.Subject != "Recibiste S/ 1,000.00 de Tienda Ejemplo" {
		t.Errorf("subject %q", m.Subject)
	}
	for _, want := range []string{"Hola Ana", "Tienda Ejemplo te envió S/ 1,000.00", "con éxito", "21/11/2026 a las 10:30 (hora de Lima)", "Número de orden: ORD-1"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{`lang="es"`, "S/ 1,000.00", "Tienda Ejemplo", "ORD-1", "Tu pago fue abonado"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if strings.Contains(m.Text, "Qué puedes hacer") {
		t.Errorf("a success mail gives advice for a rejection")
	}
}

func TestOutcomeMailRejectedSaysWhyAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      *rules.Payout
		reason string
		advice string
	}{
		{"bank rejection", perPayout(rules.StatusRejectedBank, rules.CodeBankRejected), "el banco de destino rechazó", "Verifica que los datos de tu cuenta"},
		{"no balance", perPayout(rules.StatusNoBalance, rules.CodeNoBalance), "el comercio no tenía saldo", "Comunícate con Tienda Ejemplo e indica el número de orden ORD-1"},
		{"cash expired", func() *rules.Payout {
			p := cashPayout()
			p.Move(rules.StatusExpired, p.ClaimUntil, rules.CodeExpired, "")
			return p
		}(), "no se retiró el efectivo", "nuevo pago en efectivo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := notify.OutcomeMail(tc.p, merchant, notify.Outcome{Status: tc.p.Status, At: tc.p.StatusChangedAt})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(m.Subject, "no pudo completarse") || !strings.Contains(m.Subject, templates.FormatAmount(tc.p.Currency, tc.p.Amount)) {
				t.Errorf("subject %q", m.Subject)
			}
			for _, want := range []string{"Motivo: " + tc.reason, "¿Qué puedes hacer?", tc.advice} {
				if !strings.Contains(m.Text, want) {
					t.Errorf("text lacks %q:\n%s", want, m.Text)
				}
			}
			if !strings.Contains(m.HTML, tc.reason) || !strings.Contains(m.HTML, "Qué puedes hacer") {
				t.Errorf("html lacks the reason or the advice")
			}
		})
	}
}

func TestOTPMailCarriesTheCodeAndItsExpiry(t *testing.T) {
	m, err := notify.OTPMail(cashPayout(), merchant, "042917")
	if err != nil {
		t.Fatal(err)
	}
	if m.To != "pedro.ramirez@yahoo.com" || m.Subject != "Tu código para retirar COP $ 50.000,00 de Tienda Ejemplo" {
		t.Errorf("to %q subject %q", m.To, m.Subject)
	}
	for _, want := range []string{"Tu código de retiro es: 042917", "Vence el 28/11/2026 a las 23:59 (hora de Colombia)", "No compartas este código"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if !strings.Contains(m.HTML, "042917") {
		t.Errorf("html lacks the code")
	}
}

// fakeSource serves one payout and the merchant.
type fakeSource struct {
	p *rules.Payout
	m *rules.Merchant
}

func (f fakeSource) Payout(ctx context.Context, merchantID string, id int64) (*rules.Payout, error) {
	if f.p == nil || f.p.MerchantID != merchantID || f.p.ID != id {
		return nil, rules.ErrNotFound
	}
	c := *f.p
	return &c, nil
}

func (f fakeSource) Merchant(ctx context.Context, id string) (*rules.Merchant, error) {
	if f.m == nil || f.m.ID != id {
		return nil, rules.ErrNotFound
	}
	return f.m, nil
}

type sentMails struct {
	mu    sync.Mutex
	mails []notify.Mail
	err   error
}

func (s *sentMails) Send(ctx context.Context, m notify.Mail) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.mails = append(s.mails, m)
	return nil
}

func identitySeal(code []byte, id string) []byte { return append([]byte(id+"|"), code...) }
func identityOpen(sealed []byte, id string) ([]byte, error) {
	rest, ok := strings.CutPrefix(string(sealed), id+"|")
	if !ok {
		return nil, errors.New("bound to another event")
	}
	return []byte(rest), nil
}

func TestMailerDeliversTheOutcomeTheEventRemembers(t *testing.T) {
	p := perPayout(rules.StatusProcessed, "")
	data := notify.OutcomeData(p)
	p.Move(rules.StatusReversed, mailT0.Add(time.Hour), rules.CodeReversed, "returned") // later than the event
	sent := &sentMails{}
	mr := &notify.Mailer{Source: fakeSource{p, merchant}, Sender: sent, Now: func() time.Time { return mailT0 }}
	ev := rules.Event{ID: "beneficiary.mail:73:PROCESSED", Kind: rules.EventBeneficiaryMail, MerchantID: "22", PayoutID: 73, Data: data}
	if err := mr.Deliver(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(sent.mails) != 1 || !strings.HasPrefix(sent.mails[0].Subject, "Recibiste") {
		t.Fatalf("sent %+v; want the success mail", sent.mails)
	}
	got := sent.mails[0]
	if got.EventID != ev.ID || got.Kind != ev.Kind || got.PayoutID != 73 || got.MerchantID != "22" {
		t.Errorf("mail metadata %+v", got)
	}
}

func TestMailerOTPOpensTheSealedCodeAndDropsEndedClaims(t *testing.T) {
	p := cashPayout()
	ev, err := rules.CashOTPEvent(p, rand.Reader, identitySeal, mailT0)
	if err != nil {
		t.Fatal(err)
	}
	ev.PayoutID = p.ID
	code, _ := rules.OpenClaimCode(ev, identityOpen)
	sent := &sentMails{}
	now := mailT0
	mr := &notify.Mailer{Source: fakeSource{p, merchant}, Sender: sent, OpenCode: identityOpen, Now: func() time.Time { return now }}
	if err := mr.Deliver(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(sent.mails) != 1 || !strings.Contains(sent.mails[0].Text, "Tu código de retiro es: "+code) {
		t.Fatalf("sent %+v; want the code %s", sent.mails, code)
	}

	now = p.ClaimUntil
	if err := mr.Deliver(context.Background(), ev); !rules.IsPermanent(err) {
		t.Errorf("OTP after the claim ended: %v, want a permanent failure", err)
	}
	other := ev
	other.ID = "cash.otp:elsewhere"
	now = mailT0
	if err := mr.Deliver(context.Background(), other); !rules.IsPermanent(err) {
		t.Errorf("OTP whose seal does not open: %v, want a permanent failure", err)
	}
	if len(sent.mails) != 1 {
		t.Errorf("%d mails sent, want only the first", len(sent.mails))
	}
}

func TestMailerFailuresAreRetriableUnlessThePayoutIsGone(t *testing.T) {
	p := perPayout(rules.StatusProcessed, "")
	ev := rules.Event{ID: "e", Kind: rules.EventBeneficiaryMail, MerchantID: "22", PayoutID: 73}
	mr := &notify.Mailer{Source: fakeSource{p, merchant}, Sender: &sentMails{err: errors.New("connection refused")}, Now: time.Now}
	if err := mr.Deliver(context.Background(), ev); err == nil || rules.IsPermanent(err) {
		t.Errorf("SMTP down: %v, want a retriable error", err)
	}
	ev.PayoutID = 999
	if err := mr.Deliver(context.Background(), ev); !rules.IsPermanent(err) {
		t.Errorf("unknown payout: %v, want a permanent failure", err)
	}
}

func TestSMTPSenderDeliversToARealSMTPServer(t *testing.T) {
	srv := smtptest.Start(t, "127.0.0.1:0")
	s, err := notify.NewSMTP("smtp://"+srv.Addr, "Pagos <pagos@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	p := perPayout(rules.StatusProcessed, "")
	m, _ := notify.OutcomeMail(p, merchant, notify.Outcome{Status: p.Status, At: p.StatusChangedAt})
	m.EventID = "beneficiary.mail:73:PROCESSED"
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1", len(got))
	}
	g := got[0]
	if len(g.To) != 1 || g.To[0] != "ana.quispe@gmail.com" || g.From != "pagos@example.com" {
		t.Errorf("envelope from %q to %v", g.From, g.To)
	}
	if g.Subject != "Recibiste S/ 1,000.00 de Tienda Ejemplo" {
		t.Errorf("subject %q", g.Subject)
	}
	if !strings.Contains(g.Text, "S/ 1,000.00") || !strings.Contains(g.HTML, "S/ 1,000.00") {
		t.Errorf("the amount is missing from the text or HTML part:\n%s", g.Raw)
	}
	if !strings.HasSuffix(g.MessageID, "@example.com>") {
		t.Errorf("Message-ID %q", g.MessageID)
	}
	// The same event has the same Message-ID.
	s.Send(context.Background(), m)
	if got := srv.Messages(); len(got) != 2 || got[1].MessageID != g.MessageID {
		t.Errorf("the Message-ID does not follow the event id")
	}
}

func TestSMTPSenderFailsWhileTheServerIsDown(t *testing.T) {
	addr, release, err := freeport.Refusing()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	s, _ := notify.NewSMTP("smtp://"+addr, "pagos@example.com")
	err = s.Send(context.Background(), notify.Mail{To: "a@b.pe", Subject: "x", Text: "y", HTML: "<p>y</p>"})
	if err == nil || rules.IsPermanent(err) {
		t.Errorf("send to a closed port: %v, want a retriable error", err)
	}
	// The merchant's users read the class in the dashboard; the log gets the address.
	if got := rules.PublicDeliveryError(err); got != "the mail server could not be reached: connection refused" {
		t.Errorf("public form %q, want the class without the server's address", got)
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("the error %q lost the address the log needs", err)
	}
}

func TestNewSMTPReadsTheURL(t *testing.T) {
	for _, tc := range []struct {
		url, from string
		addr      string
		wantErr   bool
	}{
		{"smtp://mail.example.com", "a@example.com", "mail.example.com:587", false},
		{"smtp://user:p%40ss@mail.example.com:2525", "a@example.com", "mail.example.com:2525", false},
		{"smtps://mail.example.com", "a@example.com", "mail.example.com:465", false},
		{"smtp://mail.example.com?starttls=mandatory", "a@example.com", "mail.example.com:587", false},
		{"smtp://mail.example.com?starttls=maybe", "a@example.com", "", true},
		{"http://mail.example.com", "a@example.com", "", true},
		{"smtp://", "a@example.com", "", true},
		{"smtp://mail.example.com:99999", "a@example.com", "", true},
		{"smtp://mail.example.com", "not an address", "", true},
	} {
		s, err := notify.NewSMTP(tc.url, tc.from)
		if (err != nil) != tc.wantErr {
			t.Errorf("NewSMTP(%q, %q) error %v, want error %v", tc.url, tc.from, err, tc.wantErr)
			continue
		}
		if err == nil && s.Addr() != tc.addr {
			t.Errorf("NewSMTP(%q).Addr() = %q, want %q", tc.url, s.Addr(), tc.addr)
		}
		if err != nil && strings.Contains(err.Error(), "p@ss") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// A mailbox in memory for the sandbox sender and the handlers.
type memBox struct {
	mu   sync.Mutex
	raws [][]byte
	sent map[string]bool
}

func (b *memBox) PutSandboxMail(ctx context.Context, eventID string, raw []byte, at time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if eventID != "" {
		if b.sent == nil {
			b.sent = map[string]bool{}
		}
		if b.sent[eventID] {
			return nil
		}
		b.sent[eventID] = true
	}
	b.raws = append(b.raws, raw)
	return nil
}

func (b *memBox) SandboxMails(ctx context.Context, limit int) ([][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out [][]byte
	for i := len(b.raws) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, b.raws[i])
	}
	return out, nil
}

func TestSandboxSenderKeepsTheMailWithItsTime(t *testing.T) {
	box := &memBox{}
	s := &notify.SandboxSender{Box: box, Now: func() time.Time { return mailT0 }}
	if err := s.Send(context.Background(), notify.Mail{To: "a@b.pe", Subject: "s", PayoutID: 5, Kind: rules.EventBeneficiaryMail}); err != nil {
		t.Fatal(err)
	}
	raw := string(box.raws[0])
	for _, want := range []string{`"to":"a@b.pe"`, `"sentAt":"2026-11-21T15:30:00Z"`, `"payoutId":5`, `"kind":"beneficiary.mail"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("stored mail %s lacks %s", raw, want)
		}
	}
}

func TestLinkMailIsSpanishByDefaultWithMerchantAmountAndExpiry(t *testing.T) {
	p := &rules.Payout{ID: 9, Country: "COL", Currency: "COP", Amount: 15000000, OrderID: "R-1", Channel: rules.ChannelLink,
		Link: &rules.Link{Kinds: []int{2}}, SessionExpiresAt: time.Date(2026, 12, 2, 17, 30, 0, 0, time.UTC)}
	p.Request.Beneficiary.Name, p.Request.Beneficiary.Email = "Juan", "juan@b.co"
	m := &rules.Merchant{ID: "22", Name: "Tienda <Uno>"}
	ml, err := notify.LinkMail(p, m, "https://pay.example/link?s=abc&lang=en", false)
	if err != nil {
		t.Fatal(err)
	}
	if ml.To != "juan@b.co" || !strings.Contains(ml.Subject, "Tienda <Uno> te envía COP $ 150.000,00") ||
		!strings.Contains(ml.Text, "El enlace vence el 02/12/2026 a las 12:30 (hora de Colombia)") ||
		!strings.Contains(ml.HTML, `lang="es"`) || !strings.Contains(ml.HTML, "Tienda &lt;Uno&gt;") ||
		!strings.Contains(ml.HTML, `href="https://pay.example/link?s=abc&amp;lang=en"`) {
		t.Errorf("mail: %+v", ml)
	}
	p.Link.Lang = "en"
	if r, _ := notify.LinkMail(p, m, "https://pay.example/link?s=abc", true); !strings.HasPrefix(r.Subject, "Reminder: COP $ 150.000,00 from Tienda <Uno>") ||
		!strings.Contains(r.Text, "Dec 2, 2026 at 12:30 (Colombia time)") {
		t.Errorf("English reminder: %+v", r)
	}
}
