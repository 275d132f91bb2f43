package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"payouts/api"
	"payouts/rules"
)

// ClientObserved is what every client report says its grades come from.
const ClientObserved = "Grades come from the merchant's signed requests as the server received them during the session: " +
	"method, path, query, body, signature and arrival time, and what each was answered (the faults the session injected " +
	"are named on their exchange). What the client did inside (stored, logged, alerted) is not seen. Secrets and " +
	"destinations are masked in the evidence."

// ClientCheck is one row of the client certification: what the merchant's code must do,
// what the session does, what passes and why.
type ClientCheck struct {
	Name     string
	Required bool
	Do       string // the step, as the session lists it
	Sent     string // what the session does or watches
	Passes   string
	Why      string
	seen     func(g *grading) bool
	grade    func(g *grading) (grade, []*observed)
}

// ClientChecks is the client certification, in the order its steps are listed.
func ClientChecks() []ClientCheck { return clientChecks }

// grading is a session's log, read by the checks.
type grading struct {
	merchant *rules.Merchant
	kinds    []Kind
	log      []*observed
}

// Kind is a payout the merchant's settings let it create at /payouts: a country and a rail,
// with the example request of the API reference that makes one.
type Kind struct {
	Country string
	Channel rules.Channel
	Example string
}

func (k Kind) String() string { return k.Country + " " + string(k.Channel) }

// Kinds are the payouts m may create, found by running each example request of the API
// reference through m's rules: what its settings allow, never a list of our own.
func Kinds(m *rules.Merchant) []Kind {
	seen := map[string]bool{}
	var out []Kind
	for _, ex := range rules.Examples() {
		if ex.Card {
			continue // a card payout is a form the beneficiary fills: not the API client's to certify
		}
		req, route, err := rules.Validate(ex.Body, m, time.Now(), rules.EndpointPayouts)
		if err != nil {
			continue
		}
		k := Kind{Country: req.Country, Channel: route.Channel, Example: ex.Name}
		if !seen[k.String()] {
			seen[k.String()] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// kindOf is the kind a create's body makes for m ("" when the rules refuse it).
func (g *grading) kindOf(body []byte) string {
	req, route, err := rules.Validate(body, g.merchant, time.Now(), rules.EndpointPayouts)
	if err != nil {
		return ""
	}
	return req.Country + " " + string(route.Channel)
}

// Polling: two reads of one payout closer than this are too close (one a second, less the
// jitter of a client's timer and the network).
const minReadGap = 950 * time.Millisecond

// retrySlack is how much sooner than Retry-After a retry may arrive (clock and network jitter).
const retrySlack = 100 * time.Millisecond

var clientChecks = []ClientCheck{
	{Name: "each-kind", Required: true,
		Do:     "Create a payout of each kind listed below through your code's own create path, each with a new orderId",
		Sent:   "nothing: the session watches the creates",
		Passes: "a create answered 201 (or 200 replayed) of each kind the merchant's settings allow",
		Why:    "each kind has its own fields and rules (a Bre-B key, a cash claim's date, a CCI): code that only ever sent one kind fails on the others in production",
		seen:   func(g *grading) bool { return len(g.missingKinds()) == 0 },
		grade: func(g *grading) (grade, []*observed) {
			missing := g.missingKinds()
			var ev []*observed
			for _, o := range g.log {
				if o.isCreate() && (o.status == http.StatusCreated || o.status == http.StatusOK) && len(ev) < len(g.kinds) {
					ev = append(ev, o)
				}
			}
			if len(missing) > 0 {
				return grade{reason: "no payout created of " + strings.Join(missing, ", ")}, ev
			}
			names := make([]string, len(g.kinds))
			for i, k := range g.kinds {
				names[i] = k.String()
			}
			return grade{ok: true, reason: "created " + strings.Join(names, ", ")}, ev
		}},
	{Name: "read-by-id", Required: true,
		Do:     "Read a payout by its Id: GET /api/v1/{merchantId}/payouts/{Id}",
		Sent:   "nothing: the session watches the reads",
		Passes: "a read by Id answered 200",
		Why:    "the Id the create answered is how a payout is read back; a client that cannot read it cannot follow it",
		seen: func(g *grading) bool {
			return g.first(func(o *observed) bool { return o.readByID() != "" && o.status == 200 }) != nil
		},
		grade: func(g *grading) (grade, []*observed) {
			return g.found("read by Id", func(o *observed) bool { return o.readByID() != "" && o.status == 200 })
		}},
	{Name: "read-by-order-id", Required: true,
		Do:     "Read a payout by its orderId: GET /api/v1/{merchantId}/payouts?orderId=…",
		Sent:   "nothing: the session watches the reads",
		Passes: "a read by orderId answered 200",
		Why:    "after a create whose answer was lost, the orderId is all the client has: it finds the payout by it",
		seen: func(g *grading) bool {
			return g.first(func(o *observed) bool { return o.query.Get("orderId") != "" && o.isRead() && o.status == 200 }) != nil
		},
		grade: func(g *grading) (grade, []*observed) {
			return g.found("read by orderId", func(o *observed) bool { return o.query.Get("orderId") != "" && o.isRead() && o.status == 200 })
		}},
	{Name: "rejection-read", Required: true,
		Do:     `Reject one of your payouts with the sandbox (POST /api/v1/{merchantId}/payouts/{Id}/simulate {"stage":"REJECTED"}) and read it until your code sees its stage REJECTED`,
		Sent:   "nothing: the session watches the reads' answers",
		Passes: "a read answered 200 with a payout whose stage is REJECTED",
		Why:    "a rejection returns the money: the order must not stay paid, and code that only waits for SUCCESS waits forever",
		seen:   func(g *grading) bool { return g.first(rejectedRead) != nil },
		grade:  func(g *grading) (grade, []*observed) { return g.found("read of a REJECTED payout", rejectedRead) }},
	{Name: "read-by-stage", Required: true,
		Do:     "List your payouts by stage as your reconciliation does: GET /api/v1/{merchantId}/payouts?stage=IN_PROGRESS (or PENDING, SUCCESS, REJECTED)",
		Sent:   "nothing: the session watches the reads",
		Passes: "a listing with a stage filter answered 200",
		Why:    "the stage (IN_PROGRESS, PENDING, SUCCESS, REJECTED) is what a payout's outcome is read by; reading every payout one by one to find the open ones costs a request each",
		seen:   func(g *grading) bool { return g.first(stageList) != nil },
		grade:  func(g *grading) (grade, []*observed) { return g.found("listing by stage", stageList) }},
	{Name: "idempotent-resend", Required: true,
		Do:     "When a create gets no answer (the connection is cut), send the same body with the same orderId again: the answer is the same payout, 200 with Idempotent-Replayed: true",
		Sent:   "the first create is served and its payout stored, then its connection cut before the answer",
		Passes: "the next create has the same orderId and body, and is answered 200 with Idempotent-Replayed and the same payout Id",
		Why:    "a create whose answer was lost may have been done: a resend with a new orderId makes a second payout, and the beneficiary is paid twice",
		seen:   func(g *grading) bool { _, next := g.faultAndNext(FaultCut); return next != nil },
		grade:  gradeResend},
	retryCheck("backoff-503", FaultUnavailable, "the next create",
		"When a create is answered 503 with Retry-After, wait that many seconds, then send the same create (same orderId) again"),
	retryCheck("backoff-429", FaultRateLimited, "the next read",
		"When a read is answered 429 with Retry-After, wait that many seconds before reading again"),
	noResendCheck("no-retry-401", FaultBadSignature,
		"When a create is answered 401, do not send it again unchanged: log it, alert, and go on with your next payout (a new orderId)",
		"a 401 does not go away by itself: a client that resends it unchanged retries forever, and counts as failed authentications against its own key"),
	noResendCheck("no-retry-400", FaultSeveralErrors,
		"When a create is answered 400, do not send it again unchanged: every error is listed at once; record them and go on with your next payout (a new orderId)",
		"a 400 names what is wrong with the request: the same request gets the same answer, forever"),
	{Name: "fresh-timestamp", Required: true,
		Do:     "When a request is answered 401 for its timestamp, sign it again with your clock's time if you send it again; never resend the same signed URL",
		Sent:   "a read is answered 401 (code 1001) as if its timestamp were outside the ±5 minute window",
		Passes: "no later request carries the same timestamp and signature",
		Why:    "a signature is over its timestamp: resending the same signed URL is refused the same way until the client signs again (and keeps its clock synchronised)",
		seen:   func(g *grading) bool { o, _ := g.faultAndNext(FaultStaleTimestamp); return o != nil },
		grade: func(g *grading) (grade, []*observed) {
			o, _ := g.faultAndNext(FaultStaleTimestamp)
			if o == nil {
				return grade{reason: "the fault never came: no read after the previous faults were answered"}, nil
			}
			for _, later := range g.after(o) {
				if later.timestamp == o.timestamp && later.signature == o.signature {
					return grade{reason: fmt.Sprintf("the same signed URL (timestamp %s) was sent again %s later", o.timestamp, later.at.Sub(o.at).Round(time.Millisecond))}, []*observed{o, later}
				}
			}
			return grade{ok: true, reason: "the refused signed URL was not sent again"}, []*observed{o}
		}},
	{Name: "signatures", Required: true,
		Do:     "Sign every request: header monnet-api-key, query timestamp and signature (HMAC-SHA256 over method, path, timestamp and the body's hash)",
		Sent:   "nothing: the session watches the server's own signature check",
		Passes: "every request of the session passed the signature check (the injected 401s aside)",
		Why:    "a request the server cannot verify is refused: a payout not created, an outcome not read",
		seen:   func(g *grading) bool { return g.first(func(o *observed) bool { return o.authenticated }) != nil },
		grade: func(g *grading) (grade, []*observed) {
			var bad []*observed
			n := 0
			for _, o := range g.log {
				if !o.authenticated {
					n++
					if len(bad) < 3 {
						bad = append(bad, o)
					}
				}
			}
			if len(g.log) == 0 {
				return grade{reason: "no request was received during the session"}, nil
			}
			if n > 0 {
				return grade{reason: fmt.Sprintf("%d of %d requests failed the signature check (the first ones are below, with the server's reason)", n, len(g.log))}, bad
			}
			return grade{ok: true, reason: fmt.Sprintf("all %d requests were signed correctly", len(g.log))}, nil
		}},
	{Name: "polling-rate", Required: true,
		Do:     "Read each payout no more than once a second (by Id or by orderId); a notification tells you of its outcome sooner",
		Sent:   "nothing: the session times the reads of each payout",
		Passes: "no two reads of one payout less than a second apart (a prompt resend after an injected fault aside)",
		Why:    "polling faster does not make a payout faster: it spends the merchant's rate limit and is answered 429",
		seen:   func(g *grading) bool { return g.first((*observed).isRead) != nil },
		grade:  gradePolling},
}

func retryCheck(name, faultName, next, do string) ClientCheck {
	return ClientCheck{Name: name, Required: true, Do: do,
		Sent:   "a request is answered " + faultName + " without being served",
		Passes: next + " comes no sooner than Retry-After says",
		Why:    "a service that says when to come back is overloaded or recovering: a client that retries at once makes it worse, and is refused again",
		seen:   func(g *grading) bool { _, n := g.faultAndNext(faultName); return n != nil },
		grade: func(g *grading) (grade, []*observed) {
			o, n := g.faultAndNext(faultName)
			switch {
			case o == nil:
				return grade{reason: "the fault never came: no such request after the previous faults were answered"}, nil
			case n == nil:
				return grade{reason: "not retried: " + next + " never came"}, []*observed{o}
			}
			wait := time.Duration(o.fault.retryAfter) * time.Second
			gap := n.at.Sub(o.at)
			if gap < wait-retrySlack {
				return grade{reason: fmt.Sprintf("retried %s after, sooner than Retry-After: %d", gap.Round(time.Millisecond), o.fault.retryAfter)}, []*observed{o, n}
			}
			return grade{ok: true, reason: fmt.Sprintf("waited %s (Retry-After: %d)", gap.Round(time.Millisecond), o.fault.retryAfter)}, []*observed{o, n}
		}}
}

func noResendCheck(name, faultName, do, why string) ClientCheck {
	return ClientCheck{Name: name, Required: true, Do: do,
		Sent:   "a create is answered " + faultName + " without being served",
		Passes: "the same request (method, path and body) is not sent again in the session",
		Why:    why,
		seen:   func(g *grading) bool { o, _ := g.faultAndNext(faultName); return o != nil },
		grade: func(g *grading) (grade, []*observed) {
			o, _ := g.faultAndNext(faultName)
			if o == nil {
				return grade{reason: "the fault never came: no create after the previous faults were answered"}, nil
			}
			var again []*observed
			for _, later := range g.after(o) {
				if later.method == o.method && later.rest == o.rest && bytes.Equal(later.body, o.body) {
					again = append(again, later)
				}
			}
			if len(again) > 0 {
				return grade{reason: fmt.Sprintf("sent again unchanged %d times, first %s after", len(again), again[0].at.Sub(o.at).Round(time.Millisecond))}, append([]*observed{o}, again[:min(len(again), 2)]...)
			}
			return grade{ok: true, reason: "not sent again unchanged"}, []*observed{o}
		}}
}

func gradeResend(g *grading) (grade, []*observed) {
	o, n := g.faultAndNext(FaultCut)
	switch {
	case o == nil:
		return grade{reason: "the fault never came: no create was stored during the session"}, nil
	case n == nil:
		return grade{reason: "the cut create was never sent again: the client does not know whether its payout exists"}, []*observed{o}
	}
	first, again := orderIDOf(o.body), orderIDOf(n.body)
	if again != first {
		id := payoutIDOf(n.answer)
		return grade{reason: fmt.Sprintf("resent with a new orderId (%q, was %q): answered %d, a second payout (Id %d) besides Id %d", again, first, n.status, id, payoutIDOf(o.answer))}, []*observed{o, n}
	}
	if n.status != http.StatusOK || n.headers.Get("Idempotent-Replayed") != "true" || payoutIDOf(n.answer) != payoutIDOf(o.answer) {
		return grade{reason: fmt.Sprintf("resent with orderId %q but answered %d, not 200 with Idempotent-Replayed and payout Id %d: the body was not the same", first, n.status, payoutIDOf(o.answer))}, []*observed{o, n}
	}
	return grade{ok: true, reason: fmt.Sprintf("resent the same body with orderId %q %s after the cut: 200, Idempotent-Replayed, the same payout Id %d", first, n.at.Sub(o.at).Round(time.Millisecond), payoutIDOf(n.answer))}, []*observed{o, n}
}

func gradePolling(g *grading) (grade, []*observed) {
	last := map[string]*observed{}
	reads := 0
	for _, o := range g.log {
		key := o.payoutRead()
		if key == "" {
			continue
		}
		reads++
		if prev := last[key]; prev != nil && prev.fault == nil && o.at.Sub(prev.at) < minReadGap {
			return grade{reason: fmt.Sprintf("%s read twice %s apart", key, o.at.Sub(prev.at).Round(time.Millisecond))}, []*observed{prev, o}
		}
		last[key] = o
	}
	if reads == 0 {
		return grade{reason: "no payout was read during the session"}, nil
	}
	return grade{ok: true, reason: fmt.Sprintf("%d reads of %d payouts, none of one payout less than a second apart", reads, len(last))}, nil
}

func rejectedRead(o *observed) bool {
	return o.isRead() && o.status == http.StatusOK && bytes.Contains(o.answer, []byte(`"stage":"REJECTED"`))
}

func stageList(o *observed) bool {
	return o.method == http.MethodGet && o.rest == "payouts" && o.query.Get("stage") != "" && o.status == http.StatusOK
}

// readByID is the Id of a read by Id ("" for another request).
func (o *observed) readByID() string {
	if o.isRead() && strings.HasPrefix(o.rest, "payouts/") {
		return o.rest[len("payouts/"):]
	}
	return ""
}

// payoutRead names the payout a read is of: its Id, or its orderId ("" for another request).
func (o *observed) payoutRead() string {
	if id := o.readByID(); id != "" {
		return "payout " + id
	}
	if o.isRead() && o.query.Get("orderId") != "" {
		return "orderId " + o.query.Get("orderId")
	}
	return ""
}

func (g *grading) first(pred func(*observed) bool) *observed {
	for _, o := range g.log {
		if pred(o) {
			return o
		}
	}
	return nil
}

func (g *grading) found(what string, pred func(*observed) bool) (grade, []*observed) {
	if o := g.first(pred); o != nil {
		return grade{ok: true, reason: what + " seen"}, []*observed{o}
	}
	return grade{reason: "no " + what + " during the session"}, nil
}

func (g *grading) after(o *observed) []*observed {
	for i, x := range g.log {
		if x == o {
			return g.log[i+1:]
		}
	}
	return nil
}

// faultAndNext finds the request the fault was injected into and the client's next request
// of the same kind (a create after a create's fault, a read after a read's).
func (g *grading) faultAndNext(name string) (*observed, *observed) {
	for i, o := range g.log {
		if o.fault == nil || o.fault.Name != name {
			continue
		}
		for _, n := range g.log[i+1:] {
			if o.fault.fits(n) {
				return o, n
			}
		}
		return o, nil
	}
	return nil, nil
}

func (g *grading) missingKinds() []string {
	made := map[string]bool{}
	for _, o := range g.log {
		if o.isCreate() && (o.status == http.StatusCreated || o.status == http.StatusOK) {
			made[g.kindOf(o.body)] = true
		}
	}
	var missing []string
	for _, k := range g.kinds {
		if !made[k.String()] {
			missing = append(missing, k.String())
		}
	}
	return missing
}

func orderIDOf(body []byte) string {
	var v struct {
		OrderID string `json:"orderId"`
	}
	json.Unmarshal(body, &v)
	return v.OrderID
}

func payoutIDOf(answer []byte) int64 {
	var v struct {
		Payout struct {
			ID int64 `json:"Id"`
		} `json:"payout"`
	}
	json.Unmarshal(answer, &v)
	return v.Payout.ID
}

// progress lists the steps of a session and whether each was seen in log.
func progress(m *rules.Merchant, kinds []Kind, log []*observed) []api.ClientSessionStep {
	g := &grading{merchant: m, kinds: kinds, log: log}
	out := make([]api.ClientSessionStep, 0, len(clientChecks))
	for _, c := range clientChecks {
		do := c.Do
		if c.Name == "each-kind" {
			var ks []string
			for _, k := range kinds {
				ks = append(ks, fmt.Sprintf("%s (like the API reference's example %s)", k, k.Example))
			}
			do += ": " + strings.Join(ks, "; ")
		}
		out = append(out, api.ClientSessionStep{Check: c.Name, Do: do, Seen: c.seen(g)})
	}
	return out
}

// gradeClient grades a session's log into its report, unsigned.
func gradeClient(id string, m *rules.Merchant, kinds []Kind, started, finished time.Time, log []*observed) api.CertificationReport {
	g := &grading{merchant: m, kinds: kinds, log: log}
	rep := api.CertificationReport{Kind: "client", RunID: id, MerchantID: m.ID, StartedAt: wireTime(started),
		FinishedAt: wireTime(finished), Observed: ClientObserved}
	for _, c := range clientChecks {
		gr, ev := c.grade(g)
		cr := api.CertificationCheck{Name: c.Name, Required: c.Required, Sent: c.Sent, Passes: c.Passes, Why: c.Why,
			Reason: gr.reason, Evidence: []api.CertificationExchange{}}
		for _, o := range ev {
			cr.Evidence = append(cr.Evidence, exchangeOf(m.ID, o))
		}
		if gr.ok {
			cr.Result = "pass"
			rep.Summary.Passed++
		} else {
			cr.Result = "fail"
			rep.Summary.Failed++
			if c.Required {
				rep.Summary.RequiredFailed++
			}
		}
		rep.Checks = append(rep.Checks, cr)
	}
	rep.Summary.Checks = len(rep.Checks)
	rep.Passed = rep.Summary.RequiredFailed == 0
	return rep
}

// exchangeOf is a request of the session as the report shows it: the API key, the
// signature and the destinations masked.
func exchangeOf(merchant string, o *observed) api.CertificationExchange {
	q := url.Values{}
	for k, v := range o.query {
		q[k] = v
	}
	q.Set("timestamp", o.timestamp)
	if o.signature != "" {
		q.Set("signature", Mask(o.signature))
	}
	e := api.CertificationExchange{Step: o.at.UTC().Format("15:04:05.000"),
		Request: api.CertificationRequest{Method: o.method, URL: "/api/v1/" + merchant + "/" + o.rest + "?" + q.Encode(),
			Headers: map[string]string{"monnet-api-key": Mask(o.apiKey)}, Body: MaskJSON(o.body)},
		Response: api.CertificationResponse{Status: o.status, DurationMS: o.durationMS, Body: truncateText(MaskJSON(o.answer), 512)}}
	e.Response.Headers = map[string]string{}
	for _, h := range []string{"Content-Type", "Retry-After", "Idempotent-Replayed"} {
		if v := o.headers.Get(h); v != "" {
			e.Response.Headers[h] = v
		}
	}
	if o.fault != nil {
		e.Injected = o.fault.Name + ": " + o.fault.Said
		if o.fault.Name == FaultCut {
			e.Response = api.CertificationResponse{DurationMS: o.durationMS,
				Error: fmt.Sprintf("connection cut (injected): the answer, %d with payout Id %d, was never sent", o.status, payoutIDOf(o.answer))}
		}
	}
	return e
}

func truncateText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Mask keeps the last four characters of a secret or an account.
func Mask(s string) string { return api.Mask(s) }

// maskedKeys are the JSON fields whose values the evidence masks: destinations and what
// identifies the beneficiary.
var maskedKeys = map[string]bool{"accountnumber": true, "cci": true, "clabe": true, "cbu": true, "alias": true,
	"adittionalaccountinfo": true, "number": true, "email": true, "phonenumber": true, "name": true, "lastname": true,
	"key": true, "cardnumber": true, "pan": true, "cvv": true, "paymentcode": true, "street": true, "housenumber": true}

// MaskJSON is a JSON body with the values of maskedKeys masked; a body that is not JSON is
// shown by its length only.
func MaskJSON(raw []byte) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Sprintf("(not JSON, %d bytes)", len(raw))
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if maskedKeys[strings.ToLower(k)] {
					switch s := val.(type) {
					case string:
						x[k] = Mask(s)
						continue
					case json.Number:
						x[k] = Mask(s.String())
						continue
					}
				}
				x[k] = walk(val)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.Encode(walk(v))
	return strings.TrimSpace(out.String())
}
