package cli

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"payouts/api"
	"payouts/internal/certify"
	"payouts/rules"
	"payouts/web/notify"
)

// certifyReceiverCommand starts a receiver certification run on a sandbox server, waits for
// its report, writes it and exits non-zero when a required check failed: what a merchant's
// CI runs against its staging receiver.
var certifyReceiverCommand = &Command{
	Name:  "certify receiver",
	Usage: "--merchant ID --key K --secret S [--url URL] [flags]",
	Short: "certify a merchant's notification receiver against a sandbox server; non-zero exit when a required check fails",
	Long: "The server sends the receiver notifications of every outcome, signed with its notification key as deliveries are, " +
		"then forgeries, a duplicate, reordered outcomes, an unknown field and an unknown payout, and grades the answers. " +
		"The report is written to --out as certification.json (signed; certification.json.sig holds the signature), " +
		"certification.html and certification.junit.xml. Exit status 1 when a required check failed.",
	Flags: certifyReceiverFlags,
}

// certifyClientCommand opens a client certification session, lists what the merchant's code
// must do, waits for the report and exits non-zero when a required check failed.
var certifyClientCommand = &Command{
	Name:  "certify client",
	Usage: "--merchant ID --key K --secret S [flags]",
	Short: "certify a merchant's API client against a sandbox server: run your code through the listed steps; non-zero exit when a required check fails",
	Long: "Opens a client certification session and prints the steps your own code must do while it is open (creates of each " +
		"kind your settings allow, reads by Id, by orderId and by stage, a rejection). Meanwhile the server watches your " +
		"merchant's requests and injects faults one at a time: a create stored and its connection cut, a 503 and a 429 with " +
		"Retry-After, a 401, a 400 with several errors, a timestamp outside the window. The session ends when every step was " +
		"seen or at --duration; the report is written to --out as certification.json (signed; certification.json.sig), " +
		"certification.html and certification.junit.xml. Exit status 1 when a required check failed.",
	Flags: certifyClientFlags,
}

// certifyVerifyCommand checks a report's signature.
var certifyVerifyCommand = &Command{
	Name:  "certify verify",
	Usage: "[--signature FILE] [--public-key FILE | --base URL] REPORT",
	Short: "check that a certification report is the server's, unchanged",
	Long: "Verifies REPORT (certification.json) against its detached signature (REPORT.sig) with the notification key: the " +
		"public key in --public-key, or the one the server at --base serves at /api/v1/notifications/public-key. " +
		"Exit status 1 when the report was changed or signed by another key.",
	Args:  "REPORT",
	Flags: certifyVerifyFlags,
}

func certifyReceiverFlags(fs *flag.FlagSet) Runner {
	base := fs.String("base", "http://127.0.0.1:8080", "base URL of the server (its sandbox on)")
	merchant := fs.String("merchant", "", "the merchant's id")
	key := fs.String("key", "", "the merchant's API key")
	secret := fs.String("secret", "", "the merchant's API secret")
	target := fs.String("url", "", "the receiver to certify (default: the merchant's notificationUrl)")
	out := fs.String("out", ".", "directory the report files are written to")
	wait := fs.Duration("wait", 10*time.Minute, "how long to wait for the report")
	return func(ctx context.Context, env Env, _ []string) error {
		if *merchant == "" || *key == "" || *secret == "" {
			return usageErrorf("certify receiver: --merchant, --key and --secret are required (payouts help certify receiver)")
		}
		c := &signedClient{base: strings.TrimSuffix(*base, "/"), merchant: *merchant, key: *key, secret: *secret,
			http: &http.Client{Timeout: 30 * time.Second}}
		body, _ := json.Marshal(map[string]string{"url": *target})
		var run api.CertificationRunView
		if err := c.call(ctx, http.MethodPost, "certifications/receiver", body, http.StatusAccepted, &run); err != nil {
			return fmt.Errorf("certify receiver: %w", err)
		}
		fmt.Fprintf(env.Stdout, "certification %s of %s started\n", run.RunID, run.URL)
		ctx, cancel := context.WithTimeout(ctx, *wait)
		defer cancel()
		var done struct {
			State     string          `json:"state"`
			Report    json.RawMessage `json:"report"`
			Signature string          `json:"signature"`
		}
		for {
			// One read a second: the run takes seconds, a slow receiver the delivery timeout per notification.
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("certify receiver: no report within --wait %s (run %s)", *wait, run.RunID)
			case <-t.C:
			}
			if err := c.call(ctx, http.MethodGet, "certifications/receiver/"+run.RunID, nil, http.StatusOK, &done); err != nil {
				return fmt.Errorf("certify receiver: %w", err)
			}
			if done.State == "done" {
				break
			}
		}
		return finishReport(ctx, env, c, *out, "certify receiver", done.Report, done.Signature)
	}
}

func certifyClientFlags(fs *flag.FlagSet) Runner {
	base := fs.String("base", "http://127.0.0.1:8080", "base URL of the server (its sandbox on)")
	merchant := fs.String("merchant", "", "the merchant's id")
	key := fs.String("key", "", "the merchant's API key")
	secret := fs.String("secret", "", "the merchant's API secret")
	duration := fs.Duration("duration", api.ClientSessionDefault, "the session's deadline: it ends sooner when every step was seen")
	out := fs.String("out", ".", "directory the report files are written to")
	return func(ctx context.Context, env Env, _ []string) error {
		if *merchant == "" || *key == "" || *secret == "" {
			return usageErrorf("certify client: --merchant, --key and --secret are required (payouts help certify client)")
		}
		if *duration < 30*time.Second || *duration > api.ClientSessionMax {
			return usageErrorf("certify client: --duration must be between 30s and %s", api.ClientSessionMax)
		}
		c := &signedClient{base: strings.TrimSuffix(*base, "/"), merchant: *merchant, key: *key, secret: *secret,
			http: &http.Client{Timeout: 30 * time.Second}}
		body, _ := json.Marshal(map[string]int{"durationSeconds": int(duration.Seconds())})
		var s api.ClientSessionView
		if err := c.call(ctx, http.MethodPost, "certifications/client", body, http.StatusAccepted, &s); err != nil {
			return fmt.Errorf("certify client: %w", err)
		}
		fmt.Fprintf(env.Stdout, "client certification %s of merchant %s is open until %s.\n"+
			"Run your own code against this server now, signed as merchant %s, through these steps:\n", s.SessionID, *merchant, s.Deadline, *merchant)
		for i, st := range s.Steps {
			fmt.Fprintf(env.Stdout, "  %2d. [%s] %s\n", i+1, st.Check, st.Do)
		}
		fmt.Fprintln(env.Stdout, "Meanwhile the session injects faults into your requests, one at a time; handle each as you would in production.")
		seen := map[string]bool{}
		var done struct {
			State     string                  `json:"state"`
			Steps     []api.ClientSessionStep `json:"steps"`
			Report    json.RawMessage         `json:"report"`
			Signature string                  `json:"signature"`
		}
		wait, cancel := context.WithTimeout(ctx, *duration+time.Minute)
		defer cancel()
		for done.State != "done" {
			// One read every two seconds: the session lasts minutes, and this command's reads are not graded.
			t := time.NewTimer(2 * time.Second)
			select {
			case <-wait.Done():
				t.Stop()
				return fmt.Errorf("certify client: no report after the deadline (session %s)", s.SessionID)
			case <-t.C:
			}
			if err := c.call(wait, http.MethodGet, "certifications/client/"+s.SessionID, nil, http.StatusOK, &done); err != nil {
				return fmt.Errorf("certify client: %w", err)
			}
			for _, st := range done.Steps {
				if st.Seen && !seen[st.Check] && done.State != "done" {
					seen[st.Check] = true
					fmt.Fprintf(env.Stdout, "  seen: %s\n", st.Check)
				}
			}
		}
		return finishReport(ctx, env, c, *out, "certify client", done.Report, done.Signature)
	}
}

// finishReport verifies a report with the server's notification key, writes its files and
// prints its summary; an error when a required check failed.
func finishReport(ctx context.Context, env Env, c *signedClient, out, cmd string, report json.RawMessage, signature string) error {
	canon, err := certify.Canonical(report)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	pub, err := fetchPublicKey(ctx, c.http, c.base)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	rep, err := certify.Verify(pub, canon, signature)
	if err != nil {
		return fmt.Errorf("%s: the server's report does not verify with its notification key: %w", cmd, err)
	}
	if err := writeReport(out, rep, canon, signature); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	fmt.Fprint(env.Stdout, certify.Summary(rep))
	fmt.Fprintf(env.Stdout, "report: %s (signature %s.sig), %s, %s\n", filepath.Join(out, "certification.json"),
		filepath.Join(out, "certification.json"), filepath.Join(out, "certification.html"), filepath.Join(out, "certification.junit.xml"))
	if !rep.Passed {
		return fmt.Errorf("%s: %d required checks failed", cmd, rep.Summary.RequiredFailed)
	}
	return nil
}

func writeReport(dir string, rep api.CertificationReport, canon []byte, sig string) error {
	page, err := certify.HTML(rep, sig)
	if err != nil {
		return err
	}
	junit, err := certify.JUnit(rep)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"certification.json": canon, "certification.json.sig": []byte(sig + "\n"),
		"certification.html": page, "certification.junit.xml": junit} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func certifyVerifyFlags(fs *flag.FlagSet) Runner {
	base := fs.String("base", "http://127.0.0.1:8080", "base URL of the server whose public key verifies the report")
	keyFile := fs.String("public-key", "", "the notification public key (PEM) instead of the server's")
	sigFile := fs.String("signature", "", "the detached signature (default: REPORT.sig)")
	return func(ctx context.Context, env Env, rest []string) error {
		if len(rest) != 1 {
			return usageErrorf("certify verify: one REPORT file, got %d (payouts help certify verify)", len(rest))
		}
		report, err := os.ReadFile(rest[0])
		if err != nil {
			return fmt.Errorf("certify verify: %w", err)
		}
		if *sigFile == "" {
			*sigFile = rest[0] + ".sig"
		}
		sig, err := os.ReadFile(*sigFile)
		if err != nil {
			return fmt.Errorf("certify verify: the signature: %w", err)
		}
		var pub *rsa.PublicKey
		if *keyFile != "" {
			raw, err := os.ReadFile(*keyFile)
			if err == nil {
				pub, err = notify.ParsePublicKeyPEM(raw)
			}
			if err != nil {
				return fmt.Errorf("certify verify: --public-key: %w", err)
			}
		} else if pub, err = fetchPublicKey(ctx, &http.Client{Timeout: 30 * time.Second}, strings.TrimSuffix(*base, "/")); err != nil {
			return fmt.Errorf("certify verify: %w", err)
		}
		rep, err := certify.Verify(pub, report, string(sig))
		if err != nil {
			return fmt.Errorf("certify verify: %s: %w", rest[0], err)
		}
		verdict := "passed"
		if !rep.Passed {
			verdict = "failed"
		}
		what := rep.Kind
		if rep.URL != "" {
			what += " " + rep.URL
		}
		fmt.Fprintf(env.Stdout, "verified: %s is certification %s of merchant %s (%s), %s, unchanged and signed by the notification key\n",
			rest[0], rep.RunID, rep.MerchantID, what, verdict)
		return nil
	}
}

func fetchPublicKey(ctx context.Context, c *http.Client, base string) (*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/notifications/public-key", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the notification public key: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the notification public key: the server answered %s", resp.Status)
	}
	return notify.ParsePublicKeyPEM(raw)
}

// signedClient makes signed merchant requests.
type signedClient struct {
	base, merchant, key, secret string
	http                        *http.Client
}

// call sends a signed request to /api/v1/{merchant}/rel and decodes an answer of status want.
func (c *signedClient) call(ctx context.Context, method, rel string, body []byte, want int, out any) error {
	path := "/api/v1/" + url.PathEscape(c.merchant) + "/" + rel
	ts := time.Now().UnixMilli()
	u := fmt.Sprintf("%s%s?timestamp=%d&signature=%s", c.base, path, ts, rules.Signature(c.secret, method, path, ts, body))
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("monnet-api-key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the signed URL says nothing the reader needs
		}
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: the server answered %s: %s", method, path, resp.Status, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}
