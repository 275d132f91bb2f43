package certify_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/api"
	"payouts/internal/certify"
	"payouts/internal/certify/receivertest"
	"payouts/rules"
	"payouts/web/notify"
)

const merchantID = "m-cert"

// newReceiver is a receiver of merchantID's notifications with flaw f.
func newReceiver(pub *rsa.PublicKey, f receivertest.Flaw) *receivertest.Receiver {
	return receivertest.New(pub, merchantID, f)
}

var (
	keyOnce    sync.Once
	serviceKey *rsa.PrivateKey
)

func key(t *testing.T) *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, notify.KeyBits)
		if err != nil {
			panic(err)
		}
		serviceKey = k
	})
	return serviceKey
}

// engine is a run's engine as the server assembles it, with a short delivery timeout so that
// the slow receiver costs a test seconds.
func engine(t *testing.T, client *http.Client) *certify.Receiver {
	k := key(t)
	n := &notify.Notifier{Key: k}
	if client == nil {
		client = notify.NewHTTPClient(true)
	}
	return &certify.Receiver{Headers: n.Headers, Body: api.NotificationJSON, Client: client, Timeout: 5 * time.Second,
		Sign: func(m string, b []byte) (string, error) { return notify.Sign(k, m, b) }}
}

func failed(rep api.CertificationReport) []string {
	var out []string
	for _, c := range rep.Checks {
		if c.Result == "fail" {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestBrokenReceiversFailExactlyTheirChecks runs the certification against a sound receiver
// and a dozen broken ones: each fails the checks meant for its flaw and no other.
func TestBrokenReceiversFailExactlyTheirChecks(t *testing.T) {
	cases := receivertest.Cases()
	for _, tc := range cases {
		t.Run(tc.Name(), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(newReceiver(&key(t).PublicKey, tc.Flaw))
			defer srv.Close()
			e := engine(t, nil)
			if tc.Flaw == receivertest.SlowOnCash {
				// Its run waits out the timeout once, for the cash payout's outcome; its other
				// answers come in milliseconds, in process, with room for a busy machine.
				e.Timeout = 3 * time.Second
			}
			rep, err := e.Run(context.Background(), "cr_test", merchantID, srv.URL+"/notifications?token=s3cret")
			if err != nil {
				t.Fatal(err)
			}
			if got := failed(rep); !slices.Equal(got, tc.Fails) {
				t.Errorf("failed checks %v, want %v\n%s", got, tc.Fails, certify.Summary(rep))
			}
			if rep.Passed != (len(tc.Fails) == 0) {
				t.Errorf("passed = %v with %d failed checks", rep.Passed, len(tc.Fails))
			}
			if raw, _ := json.Marshal(rep); bytes.Contains(raw, []byte("s3cret")) {
				t.Error("the report shows the URL's query")
			}
			if tc.Flaw == receivertest.Sound {
				requests := 0
				for _, c := range rep.Checks {
					requests += len(c.Evidence)
				}
				guide, _ := os.ReadFile("../../docs/guides/certification.md")
				if want := fmt.Sprintf("A run is %d requests", requests); !bytes.Contains(guide, []byte(want)) {
					t.Errorf("the certification guide does not say %q", want)
				}
			}
			if got := len(rep.Checks); got != len(certify.ReceiverChecks()) {
				t.Errorf("%d checks graded, want %d", got, len(certify.ReceiverChecks()))
			}
			for _, c := range rep.Checks {
				if c.Name == "tls" && c.Result != "skipped" {
					t.Errorf("tls on an http URL: %s, want skipped", c.Result)
				}
				if c.Name != "tls" && c.Name != "redirect" && len(c.Evidence) == 0 { // those two grade the whole run
					t.Errorf("check %s has no evidence", c.Name)
				}
			}
		})
	}
}

// TestHTTPSReceiver grades TLS: a trusted certificate passes, one the service does not trust
// fails the tls check (and every delivery, as the service's would).
func TestHTTPSReceiver(t *testing.T) {
	srv := httptest.NewUnstartedServer(newReceiver(&key(t).PublicKey, receivertest.Sound))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusting client's handshakes fail
	srv.StartTLS()
	defer srv.Close()
	trusting := notify.NewHTTPClient(true)
	trusting.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	rep, err := engine(t, trusting).Run(context.Background(), "cr_tls", merchantID, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := failed(rep); len(got) != 0 || rep.Summary.Skipped != 0 {
		t.Fatalf("trusted https receiver: failed %v, %d skipped\n%s", got, rep.Summary.Skipped, certify.Summary(rep))
	}
	tlsCheck := rep.Checks[slices.IndexFunc(rep.Checks, func(c api.CertificationCheck) bool { return c.Name == "tls" })]
	if !strings.Contains(tlsCheck.Reason, "TLS 1.3") {
		t.Errorf("tls reason %q names no version", tlsCheck.Reason)
	}

	rep, err = engine(t, nil).Run(context.Background(), "cr_tls2", merchantID, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got := failed(rep)
	if !slices.Contains(got, "tls") || !slices.Contains(got, "success-bank") || slices.Contains(got, "redirect") {
		t.Errorf("untrusted certificate: failed %v, want tls and the deliveries", got)
	}
}

// TestReportSignature signs a report as the server does; Verify accepts it, re-encoded too,
// and refuses it with any byte of a value changed.
func TestReportSignature(t *testing.T) {
	srv := httptest.NewServer(newReceiver(&key(t).PublicKey, receivertest.Fails500OnDuplicate))
	defer srv.Close()
	rep, err := engine(t, nil).Run(context.Background(), "cr_sig", merchantID, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := certify.CanonicalReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := notify.Sign(key(t), merchantID, canon)
	if err != nil {
		t.Fatal(err)
	}
	pub := &key(t).PublicKey
	if _, err := certify.Verify(pub, canon, sig); err != nil {
		t.Fatalf("the report as signed: %v", err)
	}
	var indented bytes.Buffer
	json.Indent(&indented, canon, "", "  ")
	if _, err := certify.Verify(pub, indented.Bytes(), sig+"\n"); err != nil {
		t.Errorf("the report indented: %v", err)
	}
	changed := bytes.Replace(canon, []byte(`"result":"fail"`), []byte(`"result":"pass"`), 1)
	if bytes.Equal(changed, canon) {
		t.Fatal("no failed check to change")
	}
	if _, err := certify.Verify(pub, changed, sig); err == nil {
		t.Error("a report with a result changed verifies")
	}
	for _, i := range []int{10, len(canon) / 2, len(canon) - 3} {
		b := bytes.Clone(canon)
		b[i] ^= 0x01
		if _, err := certify.Verify(pub, b, sig); err == nil {
			t.Errorf("a report with byte %d changed (%q) verifies", i, b[max(0, i-10):i+5])
		}
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	if _, err := certify.Verify(&other.PublicKey, canon, sig); err == nil {
		t.Error("verified with another key")
	}

	junit, err := certify.JUnit(rep)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(junit, &suite); err != nil {
		t.Fatal(err)
	}
	if suite.Tests != len(rep.Checks) || suite.Failures != 1 {
		t.Errorf("JUnit: %d tests, %d failures; want %d and 1", suite.Tests, suite.Failures, len(rep.Checks))
	}
	page, err := certify.HTML(rep, sig)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAILED", "duplicate", "answered 500", strings.ReplaceAll(template.HTMLEscapeString(sig), "+", "&#43;")} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "src=", "href=\"http"} {
		if bytes.Contains(page, []byte(banned)) {
			t.Errorf("the HTML report is not self-contained: %q", banned)
		}
	}
}

// TestTLSOlderThan12Fails: a receiver that speaks only TLS 1.1 fails the tls check (the
// service's client does not go below TLS 1.2, so no delivery reaches it either).
func TestTLSOlderThan12Fails(t *testing.T) {
	srv := httptest.NewUnstartedServer(newReceiver(&key(t).PublicKey, receivertest.Sound))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{MaxVersion: tls.VersionTLS11}
	srv.StartTLS()
	defer srv.Close()
	trusting := notify.NewHTTPClient(true)
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.MaxVersion = 0
	trusting.Transport.(*http.Transport).TLSClientConfig = cfg
	rep, err := engine(t, trusting).Run(context.Background(), "cr_tls11", merchantID, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Checks[slices.IndexFunc(rep.Checks, func(c api.CertificationCheck) bool { return c.Name == "tls" })]
	if c.Result != "fail" || !strings.Contains(c.Reason, "TLS") {
		t.Errorf("tls check against TLS 1.1: %s, %q", c.Result, c.Reason)
	}
}

// TestRuns: a run is started, answered running while it goes (a second start answers the same
// run), then done with a report whose signature verifies; another merchant cannot read it.
func TestRuns(t *testing.T) {
	srv := httptest.NewServer(newReceiver(&key(t).PublicKey, receivertest.Sound))
	defer srv.Close()
	rs := &certify.Runs{Receiver: engine(t, nil)}
	m := &rules.Merchant{ID: merchantID}
	v, err := rs.Start(context.Background(), m, srv.URL)
	if err != nil || v.State != "running" || !strings.HasPrefix(v.RunID, "cr_") {
		t.Fatalf("start: %+v, %v", v, err)
	}
	again, _ := rs.Start(context.Background(), m, srv.URL)
	if again.RunID != v.RunID {
		t.Errorf("a second start while one runs made run %s besides %s", again.RunID, v.RunID)
	}
	if _, err := rs.Run("another", v.RunID); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("another merchant read the run: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for v.State != "done" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the run, as a client does
		if v, err = rs.Run(merchantID, v.RunID); err != nil {
			t.Fatal(err)
		}
	}
	if v.Report == nil || !v.Report.Passed {
		t.Fatalf("the run: %+v", v)
	}
	canon, _ := certify.CanonicalReport(*v.Report)
	if _, err := certify.Verify(&key(t).PublicKey, canon, v.Signature); err != nil {
		t.Errorf("the run's signature: %v", err)
	}
	next, _ := rs.Start(context.Background(), m, srv.URL)
	if next.RunID == v.RunID {
		t.Error("a start after the run ended answered the ended run")
	}
}
