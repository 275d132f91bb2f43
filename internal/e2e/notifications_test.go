package e2e

// End-to-end tests of the notifications on the real server: beneficiary emails over a
// real SMTP server, signed merchant notifications with retries, and the Colombia cash
// claim with its one-time code. The claim's expiry runs with an injected clock.

import (
	"bufio"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payouts/internal/freeport"
	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/web/notify"
	"payouts/web/notify/smtptest"
)

// mailAnswer is one mail of GET /sandbox/mail.json.
type mailAnswer = servertest.Mail

// sandboxMails reads the sandbox mailbox with the admin token.
func (s *testServer) sandboxMails(t testing.TB, query string) []mailAnswer {
	t.Helper()
	return servertest.Mailbox(t, s.client(), s.URL, s.AdminToken, query)
}

// waitMails polls the sandbox mailbox until query lists n mails.
func (s *testServer) waitMails(t testing.TB, query string, n int, within time.Duration) []mailAnswer {
	t.Helper()
	var got []mailAnswer
	if !poll(within, func() bool { got = s.sandboxMails(t, query); return len(got) >= n }) {
		t.Fatalf("mailbox %s: %d mails after %v, want %d", query, len(got), within, n)
	}
	return got
}

// metric reads one series of /metrics ("name{label=\"v\"}"); 0 when absent.
func (s *testServer) metric(t testing.TB, series string) float64 {
	t.Helper()
	resp, err := s.getMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

func (s *testServer) waitMetric(t testing.TB, series string, atLeast float64, within time.Duration) {
	t.Helper()
	if !poll(within, func() bool { return s.metric(t, series) >= atLeast }) {
		t.Fatalf("%s did not reach %v within %v", series, atLeast, within)
	}
}

// waitOutboxEmpty waits until no event waits in the outbox. An event leaves it once
// delivered, after any duplicate of it the delivery chaos sends: then a count of what a
// receiver got is final, and no duplicate can come later.
func (s *testServer) waitOutboxEmpty(t *testing.T, within time.Duration) {
	t.Helper()
	eventually(t, within, "the outbox empties", func() bool { return s.mustMetric(t, "payouts_outbox_depth") == 0 })
}

// waitFor is eventually, what first.
func waitFor(t testing.TB, what string, within time.Duration, ok func() bool) {
	t.Helper()
	eventually(t, within, what, ok)
}

// freeAddr is a 127.0.0.1 address nothing listens on (yet), not given to another of this
// run's servers.
func freeAddr(t testing.TB) string {
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// create creates a payout, or fails the test (servertest.Merchant.Create).
func (c *merchantClient) create(t testing.TB, body map[string]any) payoutAnswer {
	t.Helper()
	return c.Create(t, body)
}

func messagesWith(msgs []smtptest.Message, text string) []smtptest.Message {
	var out []smtptest.Message
	for _, m := range msgs {
		if strings.Contains(m.Text, text) {
			out = append(out, m)
		}
	}
	return out
}

func TestMailBeneficiaryEmailOverSMTPHasRecipientSubjectAndAmount(t *testing.T) {
	t.Parallel()
	smtp := smtptest.Start(t, "127.0.0.1:0")
	s := startServer(t, "", "--smtp-url", "smtp://"+smtp.Addr, "--mail-from", "Pagos <pagos@payouts.test>")
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})
	silent := s.newMerchant(t, map[string]any{}) // email notifications off

	quiet := silent.create(t, perBankRequest("MAIL-OFF"))
	ok := c.create(t, perBankRequest("MAIL-OK"))
	rej := colBankRequest("MAIL-REJ")
	rej["destination"].(map[string]any)["bankAccount"].(map[string]any)["accountNumber"] = "12345679999"
	bad := c.create(t, rej)
	silent.waitStage(t, quiet.Payout.ID, "SUCCESS", 10*time.Second)
	c.waitStage(t, ok.Payout.ID, "SUCCESS", 10*time.Second)
	c.waitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
	waitFor(t, "two emails", 10*time.Second, func() bool { return len(smtp.Messages()) >= 2 })

	merchantName := "Test " + t.Name()
	success := messagesWith(smtp.Messages(), "MAIL-OK")
	if len(success) != 1 {
		t.Fatalf("%d emails for MAIL-OK, want 1", len(success))
	}
	m := success[0]
	if len(m.To) != 1 || m.To[0] != "ana.quispe@gmail.com" || m.From != "pagos@payouts.test" {
		t.Errorf("envelope from %q to %v", m.From, m.To)
	}
	if want := "Recibiste S/ 1,000.00 de " + merchantName; m.Subject != want {
		t.Errorf("subject %q, want %q", m.Subject, want)
	}
	for _, want := range []string{"S/ 1,000.00", merchantName, "con éxito"} {
		if !strings.Contains(m.Text, want) || !strings.Contains(m.HTML, want) {
			t.Errorf("the success email lacks %q", want)
		}
	}
	rejected := messagesWith(smtp.Messages(), "MAIL-REJ")
	if len(rejected) != 1 {
		t.Fatalf("%d emails for MAIL-REJ, want 1", len(rejected))
	}
	r := rejected[0]
	if r.To[0] != "juan.perez@gmail.com" || r.Subject != "Tu pago de COP $ 50.000,00 de "+merchantName+" no pudo completarse" {
		t.Errorf("rejection email to %v subject %q", r.To, r.Subject)
	}
	if !strings.Contains(r.Text, "¿Qué puedes hacer?") || !strings.Contains(r.Text, "rechazó") {
		t.Errorf("the rejection email does not say why and what to do:\n%s", r.Text)
	}
	// The merchant without email notifications wrote no email event: none went out.
	if got := messagesWith(smtp.Messages(), "MAIL-OFF"); len(got) != 0 {
		t.Errorf("%d emails for a merchant with email notifications off", len(got))
	}
	// The metric counts a delivery once it is recorded, a moment after the server has the mail.
	s.waitMetric(t, `payouts_outbox_delivered_total{kind="beneficiary.mail"}`, 2, 10*time.Second)
	if got := s.metric(t, `payouts_outbox_delivered_total{kind="beneficiary.mail"}`); got != 2 {
		t.Errorf("delivered metric %v, want 2", got)
	}
	// SMTP mode: nothing in the sandbox mailbox.
	if got := s.sandboxMails(t, ""); len(got) != 0 {
		t.Errorf("%d mails in the sandbox mailbox with --smtp-url set", len(got))
	}
}

// The server retries a failed delivery after 100 ms instead of 2 s (fastRetries), doubling
// the wait at each failure as it does.
func TestMailRetriedWhileSMTPDownArrivesOnceTheServerIsBack(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t) // no SMTP server there yet
	s := startServerWith(t, "", fastRetries, "--smtp-url", "smtp://"+addr)
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})
	p := c.create(t, perBankRequest("DOWN-1"))
	c.waitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
	s.waitMetric(t, `payouts_outbox_failures_total{kind="beneficiary.mail"}`, 1, 10*time.Second)
	if !strings.Contains(s.Stderr.String(), "delivery failed; retrying") {
		t.Errorf("the failure is not logged")
	}

	smtp := smtptest.Start(t, addr)
	waitFor(t, "the email after the SMTP server came back", 20*time.Second, func() bool { return len(smtp.Messages()) >= 1 })
	s.waitOutboxEmpty(t, 10*time.Second)
	// Counted just after the outbox lets the event go.
	s.waitMetric(t, `payouts_outbox_delivered_total{kind="beneficiary.mail"}`, 1, 10*time.Second)
	if got := messagesWith(smtp.Messages(), "DOWN-1"); len(got) != 1 {
		t.Fatalf("%d emails, want exactly 1", len(got))
	}
	if got := s.metric(t, `payouts_outbox_delivered_total{kind="beneficiary.mail"}`); got != 1 {
		t.Errorf("delivered metric %v, want 1", got)
	}
	if got := s.metric(t, "payouts_outbox_depth"); got != 0 {
		t.Errorf("outbox depth %v, want 0", got)
	}
}

// The server retries a failed delivery after 100 ms instead of 2 s (fastRetries): the
// failed email is due again soon after the restart.
func TestMailExactlyOnePerOutcomeAcrossServerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	smtp := smtptest.Start(t, "127.0.0.1:0")
	addr := smtp.Addr
	s := startServerWith(t, dir, fastRetries, "--smtp-url", "smtp://"+addr)
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})

	first := c.create(t, perBankRequest("RST-1"))
	c.waitStage(t, first.Payout.ID, "SUCCESS", 10*time.Second)
	waitFor(t, "the first email", 10*time.Second, func() bool { return len(messagesWith(smtp.Messages(), "RST-1")) == 1 })
	// The mail server has the message; the server has yet to hear that it was taken and mark
	// it sent. Closing the mail server before then is a failed delivery, which is tried again:
	// mail is delivered at least once.
	s.waitOutboxEmpty(t, 10*time.Second)
	before := smtp.Messages()
	smtp.Close()

	// The second outcome's email fails while the SMTP server is down; the server stops.
	rej := perBankRequest("RST-2")
	rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
	second := c.create(t, rej)
	c.waitStage(t, second.Payout.ID, "REJECTED", 10*time.Second)
	s.waitMetric(t, `payouts_outbox_failures_total{kind="beneficiary.mail"}`, 1, 10*time.Second)
	s.Stop(t)

	smtp = smtptest.Start(t, addr)
	s = startServerWith(t, dir, fastRetries, "--smtp-url", "smtp://"+addr)
	// With tries every 100 ms or so, the stop often comes during one: the stopped server
	// gave up its claims as it closed its store, so the restarted one (on PostgreSQL another
	// instance to the database) tries the event at once, not after the claim's lease.
	waitFor(t, "the second email after the restart", 20*time.Second, func() bool { return len(messagesWith(smtp.Messages(), "RST-2")) >= 1 })
	s.Stop(t)
	s = startServerWith(t, dir, fastRetries, "--smtp-url", "smtp://"+addr) // and once more: nothing is sent again
	s.waitOutboxEmpty(t, 10*time.Second)

	all := append(before, smtp.Messages()...)
	if n := len(messagesWith(all, "RST-1")); n != 1 {
		t.Errorf("%d emails for RST-1's outcome, want 1", n)
	}
	if n := len(messagesWith(all, "RST-2")); n != 1 {
		t.Errorf("%d emails for RST-2's outcome, want 1", n)
	}
	if len(all) != 2 {
		t.Errorf("%d emails in all, want 2", len(all))
	}
	if got := s.metric(t, "payouts_outbox_depth"); got != 0 {
		t.Errorf("outbox depth %v after the restarts, want 0", got)
	}
}

// hookReceiver is a merchant's notification endpoint: it verifies every signature with the
// key served by the server, fails the first tries of each event with 503, then accepts.
// startWithSignedHook starts a server allowed to notify a local address, a receiver serving
// hook (whose failures the caller may set first), and a merchant with settings whose
// notifications go to path on the receiver; hook checks each one's signature against the
// server's published key. The receiver closes after the server stops.
func startWithSignedHook(t *testing.T, dir string, hook *hookReceiver, path string, settings map[string]any) (*testServer, *merchantClient) {
	t.Helper()
	return startWithSignedHookWith(t, dir, server.Options{}, hook, path, settings)
}

// fastRetries are the options of a server whose outbox retries a failed delivery after
// 100 ms (then 200 ms, 400 ms…) instead of 2 s: a test of retries waits for the tries, not
// for the backoff between them.
var fastRetries = server.Options{DeliveryRetryDelay: 100 * time.Millisecond}

// startWithSignedHookWith is startWithSignedHook with what the test injects into the server.
func startWithSignedHookWith(t *testing.T, dir string, opts server.Options, hook *hookReceiver, path string, settings map[string]any) (*testServer, *merchantClient) {
	t.Helper()
	if hook.tries == nil {
		hook.tries = map[string]int{}
	}
	if hook.accepted == nil {
		hook.accepted = map[string][][]byte{}
	}
	recv := httptest.NewServer(hook)
	t.Cleanup(recv.Close)
	s := startServerWith(t, dir, opts, "--allow-private-notification-urls")
	pub, err := notify.ParsePublicKeyPEM(fetchPublicKey(t, s.URL))
	if err != nil {
		t.Fatal(err)
	}
	settings = maps.Clone(settings)
	if settings == nil {
		settings = map[string]any{}
	}
	settings["notificationUrl"] = recv.URL + path
	c := s.newMerchant(t, settings)
	hook.mu.Lock()
	hook.verify = func(body []byte, sig string) error { return notify.Verify(pub, c.MerchantID, body, sig) }
	hook.mu.Unlock()
	return s, c
}

type hookReceiver struct {
	mu       sync.Mutex
	failures int
	tries    map[string]int // by Idempotency-Key (event id)
	accepted map[string][][]byte
	sigs     map[string]string // the verification header last accepted, by event id
	badSigs  int
	requests int
	verify   func(body []byte, sig string) error
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
	if h.verify == nil || h.verify(body, r.Header.Get("verification")) != nil || r.Method != "POST" {
		h.badSigs++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	contract.checkNotification(body) // the body the document's webhook declares (contract_test.go)
	id := r.Header.Get("Idempotency-Key")
	h.tries[id]++
	if h.tries[id] <= h.failures {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.accepted[id] = append(h.accepted[id], body)
	if h.sigs == nil {
		h.sigs = map[string]string{}
	}
	h.sigs[id] = r.Header.Get("verification")
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) lastSig(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sigs[id]
}

func (h *hookReceiver) snapshot() (map[string][][]byte, map[string]int, int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	acc := map[string][][]byte{}
	for k, v := range h.accepted {
		acc[k] = append([][]byte(nil), v...)
	}
	tries := map[string]int{}
	for k, v := range h.tries {
		tries[k] = v
	}
	return acc, tries, h.badSigs, h.requests
}

func fetchPublicKey(t testing.TB, base string) []byte {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/notifications/public-key") // no auth
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	pem, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(pem), "-----BEGIN PUBLIC KEY-----") {
		t.Fatalf("public key: %d %s", resp.StatusCode, pem)
	}
	return pem
}

// fetchCertificate reads the notification certificate (no auth) and checks that it is
// self-signed, long-lived and holds the key of the public-key endpoint.
func fetchCertificate(t testing.TB, base string) *x509.Certificate {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/notifications/certificate")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	block, _ := pem.Decode(raw)
	if resp.StatusCode != 200 || block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("certificate: %d %s", resp.StatusCode, raw)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(cert); err != nil {
		t.Errorf("the certificate is not self-signed: %v", err)
	}
	if cert.NotAfter.Before(time.Now().AddDate(10, 0, 0)) {
		t.Errorf("the certificate ends %v: not long-lived", cert.NotAfter)
	}
	pub, err := notify.ParsePublicKeyPEM(fetchPublicKey(t, base))
	if err != nil || !pub.Equal(cert.PublicKey) {
		t.Errorf("the certificate's key is not the served public key (%v)", err)
	}
	return cert
}

// The server retries a failed delivery after 100 ms instead of 2 s (fastRetries).
func TestNotificationSignedRetriedUntil2xxDeliveredOncePerEvent(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{failures: 2}
	dir := t.TempDir()
	s, c := startWithSignedHookWith(t, dir, fastRetries, hook, "/payouts/hook", nil)

	ok := c.create(t, perBankRequest("HOOK-OK"))
	rej := perBankRequest("HOOK-REJ")
	rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
	bad := c.create(t, rej)
	c.waitStage(t, ok.Payout.ID, "SUCCESS", 10*time.Second)
	c.waitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
	okID := fmt.Sprintf("merchant.notification.%d.PROCESSED", ok.Payout.ID)
	badID := fmt.Sprintf("merchant.notification.%d.REJECTED_BANK", bad.Payout.ID)
	waitFor(t, "both notifications accepted", 30*time.Second, func() bool {
		acc, _, _, _ := hook.snapshot()
		return len(acc[okID]) > 0 && len(acc[badID]) > 0
	})
	s.waitOutboxEmpty(t, 10*time.Second)

	acc, tries, badSigs, requests := hook.snapshot()
	if badSigs != 0 {
		t.Errorf("%d of %d requests had a signature that does not verify with the served key", badSigs, requests)
	}
	for _, id := range []string{okID, badID} {
		if len(acc[id]) != 1 || tries[id] != 3 {
			t.Errorf("%s: %d accepted after %d tries; want exactly 1 after 2 failures", id, len(acc[id]), tries[id])
		}
	}
	if len(acc) != 2 {
		t.Errorf("notifications for %d events, want 2: %v", len(acc), tries)
	}
	// The original's body, field by field.
	var got struct {
		Payout map[string]any                   `json:"payout"`
		Output map[string]any                   `json:"output"`
		Errors []struct{ Code, Message string } `json:"errors"`
	}
	if err := json.Unmarshal(acc[okID][0], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": strconv.FormatInt(ok.Payout.ID, 10), "merchantId": c.MerchantID, "orderId": "HOOK-OK",
		"amount": "100000", "currency": "PEN", "country": "PER", "bankCode": "002", "accountNumber": "**********8012",
		"name": "Ana Quispe", "customerEmail": "ana.quispe@gmail.com"}
	// paymentCode, the original's field: on a success, the rail's reference, as authorizationCode.
	want["paymentCode"] = got.Output["authorizationCode"]
	for k, v := range want {
		if got.Payout[k] != v {
			t.Errorf("success notification payout.%s = %#v, want %#v", k, got.Payout[k], v)
		}
	}
	if len(got.Payout) != len(want) {
		t.Errorf("success notification payout has fields %v, want exactly %v", got.Payout, want)
	}
	if got.Output["stage"] != "SUCCESS" || got.Output["status"] != "PROCESSED" || got.Output["statusChangeDateTime"] == nil ||
		got.Output["authorizationCode"] == nil || got.Output["authorizationDate"] == nil || got.Errors != nil {
		t.Errorf("success notification %s", acc[okID][0])
	}
	got.Errors, got.Output = nil, nil
	if err := json.Unmarshal(acc[badID][0], &got); err != nil {
		t.Fatal(err)
	}
	if got.Output["stage"] != "REJECTED" || got.Output["authorizationCode"] != nil || len(got.Errors) != 1 || got.Errors[0].Code != rules.CodeBankRejected {
		t.Errorf("rejection notification %s", acc[badID][0])
	}
	// The certificate carries the same key as the PEM public key, and verifies the signature.
	cert := fetchCertificate(t, s.URL)
	if err := notify.Verify(cert.PublicKey.(*rsa.PublicKey), c.MerchantID, acc[badID][0], hook.lastSig(badID)); err != nil {
		t.Errorf("the certificate's key does not verify a notification: %v", err)
	}
	// The metrics count a delivery once it is recorded, a moment after the receiver has it.
	s.waitMetric(t, `payouts_outbox_delivered_total{kind="merchant.notification"}`, 2, 10*time.Second)
	if got := s.metric(t, `payouts_outbox_failures_total{kind="merchant.notification"}`); got != 4 {
		t.Errorf("failures metric %v, want 4", got)
	}
	if got := s.metric(t, `payouts_outbox_delivered_total{kind="merchant.notification"}`); got != 2 {
		t.Errorf("delivered metric %v, want 2", got)
	}

	// The key pair lives in the data dir (0600; on PostgreSQL in the shared key files) and
	// survives a restart.
	keyFile := filepath.Join(dir, server.NotificationKeyFile)
	if onPostgresTests() {
		keyFile = filepath.Join(databaseDirKeys(t, dir), server.NotificationKeyFile)
	}
	st, err := os.Stat(keyFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", st, err)
	}
	before, beforeCert := fetchPublicKey(t, s.URL), fetchCertificate(t, s.URL)
	s.Stop(t)
	s = startServer(t, dir)
	if after := fetchPublicKey(t, s.URL); string(after) != string(before) {
		t.Errorf("the public key changed across a restart")
	}
	if after := fetchCertificate(t, s.URL); !after.Equal(beforeCert) {
		t.Errorf("the certificate changed across a restart")
	}
}

func TestNotificationToLoopbackRefusedWithoutTheAllowFlag(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{tries: map[string]int{}, accepted: map[string][][]byte{}}
	recv := httptest.NewServer(hook)
	defer recv.Close()
	s := startServer(t, "")
	// https (as a server without the flag requires), to a loopback address: refused at dial.
	c := s.newMerchant(t, map[string]any{"notificationUrl": strings.Replace(recv.URL, "http://", "https://", 1) + "/hook?token=s3cr3t"})
	p := c.create(t, perBankRequest("HOOK-LOOP"))
	c.waitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
	s.waitMetric(t, `payouts_outbox_failures_total{kind="merchant.notification"}`, 1, 10*time.Second)
	if _, _, _, requests := hook.snapshot(); requests != 0 {
		t.Errorf("the loopback receiver got %d requests", requests)
	}
	logs := s.Stderr.String()
	if !strings.Contains(logs, "private, loopback") {
		t.Errorf("the refusal is not logged")
	}
	if strings.Contains(logs, "s3cr3t") {
		t.Errorf("the log shows the notification URL's token")
	}
}

// A merchant endpoint that hangs does not hold up the beneficiary's email: notifications
// and emails travel in separate lanes of the outbox.
func TestMailNotHeldUpByAHangingMerchantEndpoint(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var hanging atomic.Int32
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hanging.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	s := startServer(t, "", "--allow-private-notification-urls")
	c := s.newMerchant(t, map[string]any{"emailNotifications": true, "notificationUrl": hang.URL + "/hook"})
	// wave creates the payouts from..to-1, then waits for each to succeed: they go through the
	// sandbox's rail side by side, not one after the other.
	wave := func(from, to int) {
		var ids []int64
		for i := from; i < to; i++ {
			ids = append(ids, c.create(t, perBankRequest("HANG-"+strconv.Itoa(i))).Payout.ID)
		}
		for _, id := range ids {
			c.waitStage(t, id, "SUCCESS", 10*time.Second)
		}
	}
	// First wave: its notifications hang in the merchant's endpoint.
	wave(0, 4)
	s.waitMails(t, "?kind="+rules.EventBeneficiaryMail, 4, 5*time.Second)
	waitFor(t, "the notifications in flight, hanging", 5*time.Second, func() bool { return hanging.Load() >= 4 })
	// Second wave: its emails must not wait for the hanging notifications (15 s each).
	wave(4, 6)
	s.waitMails(t, "?kind="+rules.EventBeneficiaryMail, 6, 3*time.Second)
}
