package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/cli"
	"payouts/internal/server"
	"payouts/rules"
)

// The client certification through the command: `payouts certify client` opens a session
// and prints the steps; a merchant's Go client does them while the server injects its faults;
// the command prints the summary, writes the signed report and exits 1 when a required check
// failed. A client that resends a cut create with the same body passes every check; one that
// resends it with a new orderId fails exactly idempotent-resend.

// certClient is a merchant's integration as the session sees it: it creates, reads and
// reconciles its payouts, and reacts to the faults. newOrderOnCut is the bug under test.
type certClient struct {
	t             *testing.T
	c             *merchantClient
	newOrderOnCut bool
	seq           int
	lastRead      map[string]time.Time
}

// send sends one signed request, signed anew (a fresh timestamp); err is a cut connection.
func (cc *certClient) send(method, path string, body []byte, query string) (int, http.Header, []byte, error) {
	resp, err := cc.c.HTTP.Do(cc.c.request(method, path, body, query))
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, nil
}

// waitRetryAfter waits as the answer says: the client's backoff is what is certified.
func waitRetryAfter(h http.Header) {
	n, _ := strconv.Atoi(h.Get("Retry-After"))
	time.Sleep(time.Duration(max(n, 1)) * time.Second)
}

func (cc *certClient) orderID() string {
	cc.seq++
	return fmt.Sprintf("CC-%d-%d", time.Now().UnixNano()%1_000_000, cc.seq)
}

// create creates the example's payout: the same body again after a cut or a 503/429 (or,
// with the bug, a new orderId after a cut); a 400 or 401 is final for that orderId, and the
// payout is created anew under another.
func (cc *certClient) create(example []byte) int64 {
	cc.t.Helper()
	var req map[string]any
	json.Unmarshal(example, &req)
	req["orderId"] = cc.orderID()
	body, _ := json.Marshal(req)
	for range 10 {
		code, h, raw, err := cc.send("POST", "payouts", body, "")
		switch {
		case err != nil && cc.newOrderOnCut:
			req["orderId"] = cc.orderID()
			body, _ = json.Marshal(req)
		case err != nil:
			// The answer was lost, not the payout: the same body, the same orderId.
		case code == 503 || code == 429:
			waitRetryAfter(h)
		case code == 400 || code == 401:
			req["orderId"] = cc.orderID() // final for that orderId: the payout is made under a new one
			body, _ = json.Marshal(req)
		case code == 200 || code == 201:
			return decodePayout(cc.t, raw).Payout.ID
		default:
			cc.t.Fatalf("create: %d %s", code, raw)
		}
	}
	cc.t.Fatal("create: no payout after 10 attempts")
	return 0
}

// read reads a payout (path payouts/{id}, or the list with query) at most once a second,
// waiting as a 429 says and signing anew after a 401.
func (cc *certClient) read(key, path, query string) []byte {
	cc.t.Helper()
	for range 10 {
		if wait := time.Second - time.Since(cc.lastRead[key]); wait > 0 {
			time.Sleep(wait) // the client's own polling rate, which is certified
		}
		code, h, raw, err := cc.send("GET", path, nil, query)
		// A second from the answer, not from the send: the session times each read when it
		// arrives, and a read that arrived late (a busy machine) left the next one 926 ms
		// after it though the client had waited its second.
		cc.lastRead[key] = time.Now()
		switch {
		case err != nil:
			cc.t.Fatalf("read %s: %v", path, err)
		case code == 429:
			waitRetryAfter(h)
		case code == 401:
			// The timestamp was refused: the next attempt is signed again with the clock's time.
		case code == 200:
			return raw
		default:
			cc.t.Fatalf("read %s: %d %s", path, code, raw)
		}
	}
	cc.t.Fatalf("read %s: no answer after 10 attempts", path)
	return nil
}

// run does the session's steps: a payout of each kind, reads by Id and orderId, a rejection
// read until it shows, a listing by stage.
func (cc *certClient) run(kinds []string) {
	cc.t.Helper()
	examples := map[string][]byte{}
	for _, ex := range rules.Examples() {
		examples[ex.Name] = ex.Body
	}
	var ids []int64
	for _, k := range kinds {
		id := cc.create(examples[k])
		ids = append(ids, id)
		cc.read(fmt.Sprint(id), "payouts/"+fmt.Sprint(id), "")
	}
	first := decodePayout(cc.t, cc.read(fmt.Sprint(ids[0]), "payouts/"+fmt.Sprint(ids[0]), ""))
	cc.read("order "+first.Payout.OrderID, "payouts", "orderId="+first.Payout.OrderID)
	sim := func(body string) int {
		code, _, _, err := cc.send("POST", fmt.Sprintf("payouts/%d/simulate", ids[0]), []byte(body), "")
		if err != nil {
			cc.t.Fatal(err)
		}
		return code
	}
	if code := sim(`{"stage":"REJECTED"}`); code != 200 {
		if code := sim(`{"stage":"REJECTED","status":"REVERSED"}`); code != 200 {
			cc.t.Fatalf("simulate a rejection: %d", code)
		}
	}
	for range 20 {
		if p := decodePayout(cc.t, cc.read(fmt.Sprint(ids[0]), "payouts/"+fmt.Sprint(ids[0]), "")); p.Output.Stage == "REJECTED" {
			break
		}
	}
	cc.read("stage", "payouts", "stage=REJECTED")
}

// certifyClient runs `payouts certify client` beside the client and returns its output, exit
// status and report. The command runs in process (cli.Main, all that the binary's main calls):
// it is a client of the server's API, and nothing about it needs a process of its own.
func certifyClient(t *testing.T, s *testServer, c *merchantClient, newOrderOnCut bool) (string, int, certReport) {
	t.Helper()
	out := t.TempDir()
	pr, pw := io.Pipe()
	ran := make(chan int, 1)
	go func() {
		code := cli.Main(context.Background(), []string{"certify", "client", "--base", s.URL, "--merchant", c.MerchantID, "--key", c.Key,
			"--secret", c.Secret, "--out", out, "--duration", "2m"}, func(string) string { return "" }, pw, pw)
		pw.Close()
		ran <- code
	}()
	said := &syncBuffer{}
	open := make(chan []string, 1)
	read := make(chan struct{}) // closed once the output is read to its end
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		var kinds []string
		for sc.Scan() {
			said.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "[each-kind]") {
				for _, part := range strings.Split(sc.Text(), "example ")[1:] {
					kinds = append(kinds, strings.TrimRight(strings.Fields(part)[0], ");"))
				}
			}
			if strings.HasPrefix(sc.Text(), "Meanwhile") {
				open <- kinds
			}
		}
		io.Copy(io.Discard, pr)
		close(open)
	}()
	kinds, ok := <-open
	if !ok || len(kinds) == 0 {
		<-ran
		t.Fatalf("certify client did not list the steps:\n%s", said.String())
	}
	cc := &certClient{t: t, c: c, newOrderOnCut: newOrderOnCut, lastRead: map[string]time.Time{}}
	cc.run(kinds)
	<-read
	code := <-ran
	var rep certReport
	raw, err := os.ReadFile(filepath.Join(out, "certification.json"))
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, said.String())
	}
	json.Unmarshal(raw, &rep)
	if v, err := runCLI(t, nil, "certify", "verify", "--base", s.URL, filepath.Join(out, "certification.json")); err != nil {
		t.Errorf("certify verify: exit %d\n%s%v", cli.ExitCode(err), v, err)
	}
	return said.String(), code, rep
}

type certReport struct {
	Kind   string
	Passed bool
	Checks []struct {
		Name, Result, Reason string
		Evidence             []struct {
			Injected string
			Request  struct{ Body string }
		}
	}
}

func (r certReport) failed() string {
	var out []string
	for _, c := range r.Checks {
		if c.Result != "pass" {
			out = append(out, c.Name)
		}
	}
	return strings.Join(out, " ")
}

// The two sessions, of two merchants, run side by side: each is mostly the client's own
// waits (Retry-After, its polling rate), which the grades time in real seconds. A session
// closes half a second after its last step instead of 3 s: the test's client sends nothing
// after its last step.
func TestCertifyClientThroughTheCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two client certification sessions, timed in real seconds")
	}
	s := startServerWith(t, "", server.Options{ClientSessionQuiet: 500 * time.Millisecond})

	t.Run("a client that resends the same body passes", func(t *testing.T) {
		t.Parallel()
		good := s.newMerchant(t, nil)
		said, code, rep := certifyClient(t, s, good, false)
		t.Logf("a passing session:\n%s", said)
		if code != 0 || !rep.Passed || rep.Kind != "client" || rep.failed() != "" {
			t.Fatalf("a client that resends the same body: exit %d, failed %q\n%s", code, rep.failed(), said)
		}
		injected := 0
		for _, c := range rep.Checks {
			for _, e := range c.Evidence {
				if e.Injected != "" {
					injected++
				}
				// The destination is masked in the evidence: the example's account number never shows whole.
				if strings.Contains(e.Request.Body, "19312345678012") {
					t.Errorf("%s: an account number in the evidence: %s", c.Name, e.Request.Body)
				}
			}
		}
		if injected < 6 {
			t.Errorf("the report names %d injected faults, want at least 6 (one per fault)", injected)
		}
	})

	t.Run("a client that resends a cut create with a new orderId fails", func(t *testing.T) {
		t.Parallel()
		bad := s.newMerchant(t, nil)
		said, code, rep := certifyClient(t, s, bad, true)
		t.Logf("a failing session:\n%s", said)
		if code != 1 || rep.Passed || rep.failed() != "idempotent-resend" {
			t.Fatalf("a client that resends a cut create with a new orderId: exit %d, failed %q, want idempotent-resend\n%s", code, rep.failed(), said)
		}
		if !strings.Contains(said, "resent with a new orderId") {
			t.Errorf("the summary does not say why:\n%s", said)
		}
	})
}
