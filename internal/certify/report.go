package certify

import (
	"bytes"
	"crypto/rsa"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"strconv"
	"time"

	"payouts/api"
	"payouts/web/notify"
)

// Canonical is the form of a report that is signed: its JSON with object keys sorted, no
// insignificant space, numbers as written and no HTML escaping. A report re-encoded on its way
// (by the API's encoder, or indented by a reader) has the same canonical form.
func Canonical(raw []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a JSON report: %w", err)
	}
	if _, err := d.Token(); err == nil {
		return nil, errors.New("not a JSON report: something follows the report")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// CanonicalReport is rep in its canonical form.
func CanonicalReport(rep api.CertificationReport) ([]byte, error) {
	raw, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	return Canonical(raw)
}

// Verify checks a report's detached signature with the notification key's public half: the
// signature is over the report's merchantId followed by its canonical form, as a
// notification's is over merchantId and its body.
func Verify(pub *rsa.PublicKey, report []byte, signature string) (api.CertificationReport, error) {
	var rep api.CertificationReport
	canon, err := Canonical(report)
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(canon, &rep); err != nil {
		return rep, fmt.Errorf("not a certification report: %w", err)
	}
	if rep.MerchantID == "" || rep.RunID == "" {
		return rep, errors.New("not a certification report: no merchantId or runId")
	}
	if err := notify.Verify(pub, rep.MerchantID, canon, string(bytes.TrimSpace([]byte(signature)))); err != nil {
		return rep, errors.New("the signature does not match the report: it was changed, or signed by another key")
	}
	return rep, nil
}

// Summary is the report in a few lines, as the CLI prints it.
func Summary(rep api.CertificationReport) string {
	var b bytes.Buffer
	verdict := "PASSED"
	if !rep.Passed {
		verdict = "FAILED"
	}
	took := ""
	from, err1 := time.Parse(time.RFC3339, rep.StartedAt)
	to, err2 := time.Parse(time.RFC3339, rep.FinishedAt)
	if err1 == nil && err2 == nil {
		took = " in " + to.Sub(from).Round(time.Millisecond).String()
	}
	what := ""
	if rep.URL != "" {
		what = ", " + rep.URL
	}
	fmt.Fprintf(&b, "%s certification %s of merchant %s%s: %s (%d checks: %d passed, %d failed, %d skipped)%s\n",
		kindOf(rep), rep.RunID, rep.MerchantID, what, verdict, rep.Summary.Checks, rep.Summary.Passed, rep.Summary.Failed, rep.Summary.Skipped, took)
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "  %-7s %-24s %s\n", c.Result, c.Name, c.Reason)
	}
	return b.String()
}

// kindOf is what a report certifies: receiver (the reports made before there was another kind) or client.
func kindOf(rep api.CertificationReport) string {
	if rep.Kind == "client" {
		return "client"
	}
	return "receiver"
}

// JUnit is the report as JUnit XML, one test case per check, for a CI's test view.
func JUnit(rep api.CertificationReport) ([]byte, error) {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		XMLName   xml.Name   `xml:"testsuite"`
		Name      string     `xml:"name,attr"`
		Tests     int        `xml:"tests,attr"`
		Failures  int        `xml:"failures,attr"`
		Skipped   int        `xml:"skipped,attr"`
		Timestamp string     `xml:"timestamp,attr"`
		Cases     []testcase `xml:"testcase"`
	}
	s := testsuite{Name: "payouts " + kindOf(rep) + " certification " + rep.RunID, Tests: rep.Summary.Checks,
		Failures: rep.Summary.Failed, Skipped: rep.Summary.Skipped, Timestamp: rep.StartedAt}
	for _, c := range rep.Checks {
		var ms int64
		for _, e := range c.Evidence {
			ms += e.Response.DurationMS
		}
		tc := testcase{Name: c.Name, Classname: "payouts.certify." + kindOf(rep), Time: strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64),
			SystemOut: "sent: " + c.Sent + "\npasses: " + c.Passes + "\nwhy: " + c.Why + "\n" + c.Reason}
		switch c.Result {
		case "fail":
			tc.Failure = &failure{Message: c.Reason, Text: c.Why}
		case "skipped":
			tc.Skipped = &skipped{Message: c.Reason}
		}
		s.Cases = append(s.Cases, tc)
	}
	out, err := xml.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// HTML is the report as one self-contained page (no script, no outside resource).
func HTML(rep api.CertificationReport, signature string) ([]byte, error) {
	var b bytes.Buffer
	err := page.Execute(&b, struct {
		api.CertificationReport
		Signature string
	}{rep, signature})
	return b.Bytes(), err
}

var page = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if eq .Kind "client"}}Client{{else}}Receiver{{end}} certification {{.RunID}}: {{if .Passed}}passed{{else}}failed{{end}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem} .pass{color:#0a7a32} .fail{color:#b4231b} .skipped{color:#6b7280}
table{border-collapse:collapse;width:100%} td,th{border-bottom:1px solid #d6dae0;padding:.4rem;vertical-align:top;text-align:left}
details{margin:.3rem 0} pre{white-space:pre-wrap;word-break:break-all;background:#f4f5f7;padding:.5rem;font-size:12px}
@media (prefers-color-scheme:dark){body{background:#15181c;color:#e4e6ea}pre{background:#22262c}td,th{border-color:#394049}}
</style></head><body>
<h1>{{if eq .Kind "client"}}Client{{else}}Receiver{{end}} certification <code>{{.RunID}}</code>: <span class="{{if .Passed}}pass{{else}}fail{{end}}">{{if .Passed}}PASSED{{else}}FAILED{{end}}</span></h1>
<p>Merchant <code>{{.MerchantID}}</code>{{if .URL}}, receiver <code>{{.URL}}</code>{{end}}, {{.StartedAt}} to {{.FinishedAt}}{{if .DeliveryTimeoutMS}}; delivery timeout {{.DeliveryTimeoutMS}} ms{{end}}.
{{.Summary.Checks}} checks: {{.Summary.Passed}} passed, {{.Summary.Failed}} failed ({{.Summary.RequiredFailed}} required), {{.Summary.Skipped}} skipped.</p>
<p>{{.Observed}}</p>
<table><thead><tr><th>check</th><th>result</th><th>what was sent, what passes, why</th></tr></thead><tbody>
{{range .Checks}}<tr><td><code>{{.Name}}</code>{{if .Required}}<br><small>required</small>{{end}}</td>
<td class="{{.Result}}"><strong>{{.Result}}</strong></td>
<td><p>{{.Reason}}</p><p><small>Sent: {{.Sent}}. Passes: {{.Passes}}. Why: {{.Why}}.</small></p>
{{range .Evidence}}<details><summary>{{.Step}}: {{if .Injected}}<strong>injected</strong> {{end}}{{if .Response.Status}}{{.Response.Status}}{{else}}{{.Response.Error}}{{end}} in {{.Response.DurationMS}} ms</summary>
{{if .Injected}}<p><small>Injected: {{.Injected}}</small></p>{{end}}<pre>{{.Request.Method}} {{.Request.URL}}
{{range $k, $v := .Request.Headers}}{{$k}}: {{$v}}
{{end}}
{{.Request.Body}}</pre><pre>{{if .Response.Status}}HTTP {{.Response.Status}}{{if .Response.TLSVersion}} over {{.Response.TLSVersion}}, {{.Response.Certificate}}{{end}}
{{range $k, $v := .Response.Headers}}{{$k}}: {{$v}}
{{end}}
{{.Response.Body}}{{else}}{{.Response.Error}}{{end}}</pre></details>{{end}}</td></tr>
{{end}}</tbody></table>
<p>Signed by the service's notification key (RSA PKCS#1 v1.5 SHA-256 over merchantId and the report's canonical JSON):</p>
<pre>{{.Signature}}</pre>
</body></html>
`))
