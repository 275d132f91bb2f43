// Package certify certifies a merchant's notification receiver: it sends the receiver the
// notifications the service sends, and forgeries of them, and grades what it answers.
package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"payouts/rules"
)

// Check is one row of the receiver certification: what is sent, what answer passes, why it
// matters, and how it is run.
type Check struct {
	Name     string
	Required bool
	Sent     string
	Passes   string
	Why      string
	run      func(x *exchanger) grade
}

// grade is a check's result: ok, or why not, and skipped when it does not apply.
type grade struct {
	ok, skipped bool
	reason      string
}

// ReceiverChecks is the receiver certification, in the order a run makes them. The tls and
// redirect rows grade the whole run's exchanges, so they come last.
func ReceiverChecks() []Check { return receiverChecks }

var receiverChecks = []Check{
	outcome("success-bank", "a bank payout's SUCCESS (stage SUCCESS, status PROCESSED) with paymentCode and authorizationCode",
		"the outcome a merchant most needs: the payout was paid", bankSuccess),
	outcome("rejected-bank", "a REJECTED_BANK outcome with its errors (code 4025: the account does not exist)",
		"the money is back on the merchant's balance and the beneficiary was not paid", rejectedBank),
	outcome("denied", "a DENIED outcome (anti-fraud) with its error",
		"a denial is final: the order must not stay pending", denied),
	{Name: "reversed", Required: true,
		Sent:   "a payout's SUCCESS, then its REVERSED (returned by the beneficiary's bank, code 4901)",
		Passes: "2xx to both within the delivery timeout",
		Why:    "a paid payout can come back days later: the receiver must accept a second outcome of the same payout",
		run: func(x *exchanger) grade {
			p := bankSuccess(x)
			return x.allAccepted(x.genuine("success", p), x.genuine("reversal", reversal(x, p)))
		}},
	outcome("expired", "an EXPIRED outcome (a card payout whose form the beneficiary never filled)",
		"the beneficiary did not act in time: the merchant decides what to do next", expired),
	outcome("card-success", "a VISA card payout's SUCCESS (Peru; the account is the card's last four digits)",
		"card payouts carry other fields: a receiver written for bank accounts must not choke on them", cardSuccess),
	outcome("cash-success", "a cash payout's SUCCESS (Colombia; paymentCode is the code the beneficiary collected the cash with)",
		"cash is claimed days later, so its outcome comes long after the create", cashSuccess),

	forgery("forged-other-body", "a notification signed over another body: the signature is the service's, of a different notification",
		func(x *exchanger) (body []byte, headers map[string]string) {
			body = x.body(bankSuccess(x))
			return body, x.headers(x.merchant, x.eventID(bankSuccess(x)), x.body(bankSuccess(x)))
		}),
	forgery("forged-other-merchant", "another merchant's genuine notification (merchantId changed, signed by the service for that merchant)",
		func(x *exchanger) ([]byte, map[string]string) {
			p := bankSuccess(x)
			p.MerchantID = "another-merchant"
			body := x.body(p)
			return body, x.headers("another-merchant", x.eventID(p), body)
		}),
	forgery("forged-other-key", "a notification signed over merchantId and the body by another RSA key than the service's",
		func(x *exchanger) ([]byte, map[string]string) {
			p := bankSuccess(x)
			body := x.body(p)
			return body, x.otherKeyHeaders(x.merchant, x.eventID(p), body)
		}),
	forgery("missing-signature", "a notification without the verification header",
		func(x *exchanger) ([]byte, map[string]string) {
			p := bankSuccess(x)
			body := x.body(p)
			h := x.headers(x.merchant, x.eventID(p), body)
			delete(h, "verification")
			return body, h
		}),
	forgery("malformed-signature", "a notification whose verification header is not a signature (not base64)",
		func(x *exchanger) ([]byte, map[string]string) {
			p := bankSuccess(x)
			body := x.body(p)
			h := x.headers(x.merchant, x.eventID(p), body)
			h["verification"] = "not a signature%%"
			return body, h
		}),
	forgery("body-changed", "a genuine notification whose amount was changed after it was signed",
		func(x *exchanger) ([]byte, map[string]string) {
			p := bankSuccess(x)
			body := x.body(p)
			h := x.headers(x.merchant, x.eventID(p), body)
			return bytes.Replace(body, []byte(`"amount":"`), []byte(`"amount":"9`), 1), h
		}),

	{Name: "raw-body", Required: true,
		Sent:   "a genuine notification whose bytes are indented and escape a non-ASCII letter (signed over those exact bytes)",
		Passes: "2xx within the delivery timeout",
		Why:    "the signature covers the raw body: a receiver that parses and re-encodes the JSON before verifying refuses genuine notifications whenever the encoding differs",
		run: func(x *exchanger) grade {
			p := bankSuccess(x)
			var out bytes.Buffer
			json.Indent(&out, x.body(p), "", "  ")
			body := bytes.ReplaceAll(out.Bytes(), []byte("ñ"), []byte(`\u00f1`))
			return x.allAccepted(x.send("genuine, re-formatted", body, x.headers(x.merchant, x.eventID(p), body)))
		}},
	{Name: "duplicate", Required: true,
		Sent:   "the same notification twice: the same Idempotency-Key, the same bytes",
		Passes: "2xx to both",
		Why:    "the service delivers at least once: an answer lost on its way back makes it send again, and an error makes it retry for a day",
		run: func(x *exchanger) grade {
			p := bankSuccess(x)
			body := x.body(p)
			h := x.headers(x.merchant, x.eventID(p), body)
			return x.allAccepted(x.send("first", body, h), x.send("duplicate", body, h))
		}},
	{Name: "reversed-before-success", Required: true,
		Sent:   "a payout's REVERSED, then its SUCCESS (deliveries can overtake each other)",
		Passes: "2xx to both",
		Why:    "a receiver that refuses an outcome it cannot place yet is retried; one that applies the late SUCCESS over REVERSED pays twice — keep the latest statusChangeDateTime",
		run: func(x *exchanger) grade {
			p := bankSuccess(x)
			r := reversal(x, p)
			return x.allAccepted(x.genuine("reversal first", r), x.genuine("success after it", p))
		}},
	{Name: "older-after-newer", Required: true,
		Sent:   "a notification, then another payout's whose statusChangeDateTime is two hours older",
		Passes: "2xx to both",
		Why:    "notifications do not arrive in time order (retries, separate lanes): a receiver that keeps a high-water mark of times drops real outcomes",
		run: func(x *exchanger) grade {
			newer := bankSuccess(x)
			older := rejectedBank(x)
			older.StatusChangedAt = newer.StatusChangedAt.Add(-2 * time.Hour)
			return x.allAccepted(x.genuine("newer", newer), x.genuine("older", older))
		}},
	{Name: "unknown-field", Required: true,
		Sent:   "a genuine notification with fields the receiver does not know, at the top and inside payout",
		Passes: "2xx within the delivery timeout",
		Why:    "the service adds fields without a new version: a receiver that refuses unknown fields breaks on the day one is added",
		run: func(x *exchanger) grade {
			p := bankSuccess(x)
			body := x.body(p)
			body = bytes.Replace(body, []byte(`{"payout":{`), []byte(`{"payout":{"settlementBatch":"certification",`), 1)
			body = append(body[:len(body)-1], []byte(`,"certification":{"addedField":true}}`)...)
			return x.allAccepted(x.send("genuine, with unknown fields", body, x.headers(x.merchant, x.eventID(p), body)))
		}},
	{Name: "unknown-payout", Required: true,
		Sent:   "a genuine notification of a payout the receiver never created (an id and orderId of no payout)",
		Passes: "an answer that is not 5xx (2xx, or a 4xx) within the delivery timeout",
		Why:    "a 5xx makes the service retry for a day; a payout created elsewhere (another system, a restored database) must be logged, not crash the receiver",
		run: func(x *exchanger) grade {
			p := bankSuccess(x)
			p.ID = 900_000_000 + p.ID%1000
			p.OrderID = "never-created-" + x.runID
			e := x.genuine("unknown payout", p)
			switch {
			case e.Response.Status == 0:
				return grade{reason: "no answer: " + e.Response.Error}
			case e.Response.Status >= 500:
				return grade{reason: fmt.Sprintf("answered %d: the service would retry it for a day", e.Response.Status)}
			case e.Response.Status >= 300 && e.Response.Status < 400:
				return grade{reason: fmt.Sprintf("answered %d, a redirect the service does not follow", e.Response.Status)}
			}
			return grade{ok: true, reason: fmt.Sprintf("answered %d in %d ms", e.Response.Status, e.Response.DurationMS)}
		}},

	{Name: "tls", Required: true,
		Sent:   "(every request of the run, when the URL is https)",
		Passes: "a certificate valid for the URL's name and TLS 1.2 or newer on every connection",
		Why:    "notifications carry payout data and settle orders: they must reach only the merchant, over current TLS",
		run:    gradeTLS},
	{Name: "redirect", Required: true,
		Sent:   "(every request of the run)",
		Passes: "no answer is a redirect (3xx)",
		Why:    "the service does not follow redirects: a 3xx is a failed delivery, retried until it gives up",
		run:    gradeRedirects},
}

// outcome is a check that a genuine notification of the payout made by build is accepted.
func outcome(name, sent, why string, build func(x *exchanger) *rules.Payout) Check {
	return Check{Name: name, Required: true, Sent: sent, Passes: "2xx within the delivery timeout", Why: why,
		run: func(x *exchanger) grade { return x.allAccepted(x.genuine("genuine", build(x))) }}
}

// forgery is a check that the forged notification make builds is refused, and that a genuine
// one right after it is still accepted.
func forgery(name, sent string, forge func(x *exchanger) ([]byte, map[string]string)) Check {
	return Check{Name: name, Required: true, Sent: sent + "; then a genuine notification",
		Passes: "a 4xx or 5xx to the forgery (an answer, not a timeout), then 2xx to the genuine one",
		Why:    "anyone can POST to the receiver's URL: a forgery it accepts marks an order paid that was not; and a forgery must not break the next genuine notification",
		run: func(x *exchanger) grade {
			body, h := forge(x)
			f := x.send("forgery", body, h)
			g := x.genuine("genuine after the forgery", bankSuccess(x))
			switch s := f.Response.Status; {
			case s == 0:
				return grade{reason: "the forgery got no answer: " + f.Response.Error}
			case s >= 200 && s < 300:
				return grade{reason: fmt.Sprintf("the forgery was accepted (%d): the receiver does not check the signature over its merchant id and the raw body with the service's key", s)}
			case s >= 300 && s < 400:
				return grade{reason: fmt.Sprintf("the forgery was answered with a redirect (%d), not refused", s)}
			}
			if r := x.allAccepted(g); !r.ok {
				return grade{reason: fmt.Sprintf("the forgery was refused (%d), but the genuine notification after it was not accepted: %s", f.Response.Status, r.reason)}
			}
			return grade{ok: true, reason: fmt.Sprintf("the forgery was refused (%d) and the genuine one after it accepted (%d)", f.Response.Status, g.Response.Status)}
		}}
}

func gradeTLS(x *exchanger) grade {
	if !strings.HasPrefix(x.target, "https:") {
		return grade{skipped: true, reason: "the URL is http: no TLS to grade (outside development the service sends only to https)"}
	}
	for _, e := range x.log {
		r := e.Response
		if r.Status == 0 && strings.Contains(r.Error, "TLS") {
			return grade{reason: "a connection failed its TLS: " + r.Error}
		}
		if r.Status != 0 && r.TLSVersion != "" && r.TLSVersion != "TLS 1.2" && r.TLSVersion != "TLS 1.3" {
			return grade{reason: "a connection used " + r.TLSVersion + ": TLS 1.2 or newer is required"}
		}
	}
	for _, e := range x.log {
		if r := e.Response; r.TLSVersion != "" {
			return grade{ok: true, reason: "certificate valid for the name; " + r.TLSVersion + " (" + r.Certificate + ")"}
		}
	}
	return grade{reason: "no TLS connection was completed"}
}

func gradeRedirects(x *exchanger) grade {
	var seen []string
	for _, e := range x.log {
		if s := e.Response.Status; s >= 300 && s < 400 {
			seen = append(seen, fmt.Sprintf("%s: %d to %q", e.Step, s, e.Response.Headers["Location"]))
		}
	}
	if len(seen) > 0 {
		return grade{reason: fmt.Sprintf("%d answers were redirects, which the service does not follow: %s", len(seen), strings.Join(seen, "; "))}
	}
	return grade{ok: true, reason: fmt.Sprintf("none of %d answers was a redirect", len(x.log))}
}

// The payouts the notifications are of: made up for the run, never stored.

func (x *exchanger) payout(country, currency string, channel rules.Channel) *rules.Payout {
	x.seq++
	// Each payout's time is after the last one's reversal (reversal): times only grow.
	at := x.now().UTC().Truncate(time.Millisecond)
	if min := x.last.Add(2 * time.Millisecond); at.Before(min) {
		at = min
	}
	x.last = at
	p := &rules.Payout{ID: x.base + x.seq, MerchantID: x.merchant, OrderID: fmt.Sprintf("certify-%s-%d", x.runID, x.seq),
		Country: country, Currency: currency, Amount: 150000, Channel: channel,
		Stage: rules.StageSuccess, Status: rules.StatusProcessed, StatusChangedAt: at}
	p.Request.Beneficiary = rules.Beneficiary{Name: "Ana", LastName: "Peña Ruiz", Email: "ana@example.com"}
	return p
}

func bankSuccess(x *exchanger) *rules.Payout {
	p := x.payout("COL", "COP", rules.ChannelRealTime)
	p.BankCode = "1007"
	p.Request.Destination.BankAccount.AccountNumber = "0123456789"
	p.RailRef = fmt.Sprintf("CERT%08d", p.ID%100_000_000)
	return p
}

func rejectedWith(p *rules.Payout, status rules.Status, code, msg string) *rules.Payout {
	p.Stage, p.Status, p.RailRef = rules.StageRejected, status, ""
	p.Errors = []*rules.Error{{Kind: rules.KindInvalid, Code: code, Message: msg}}
	return p
}

func rejectedBank(x *exchanger) *rules.Payout {
	return rejectedWith(bankSuccess(x), rules.StatusRejectedBank, rules.CodeAccountNotFound, "account does not exist")
}

func denied(x *exchanger) *rules.Payout {
	return rejectedWith(bankSuccess(x), rules.StatusDenied, rules.CodeDenied, "anti-fraud rules: payout denied")
}

// reversal is p's REVERSED outcome. It is a millisecond after the SUCCESS, not days as it
// would be: the run's later notifications stay newer than it, so that a receiver that drops
// older outcomes fails the ordering checks only.
func reversal(x *exchanger, p *rules.Payout) *rules.Payout {
	r := *p
	r.StatusChangedAt = p.StatusChangedAt.Add(time.Millisecond)
	return rejectedWith(&r, rules.StatusReversed, rules.CodeReversed, "payout returned by the beneficiary's bank")
}

func cardPayout(x *exchanger) *rules.Payout {
	p := x.payout("PER", "PEN", rules.ChannelCard)
	p.Card = &rules.CardRef{Brand: "VISA", BIN: "411111", Last4: "1111"}
	p.RailRef = fmt.Sprintf("OCT%08d", p.ID%100_000_000)
	return p
}

func cardSuccess(x *exchanger) *rules.Payout { return cardPayout(x) }

func expired(x *exchanger) *rules.Payout {
	p := cardPayout(x)
	p.Card = nil
	return rejectedWith(p, rules.StatusExpired, rules.CodeExpired, "the card session expired")
}

func cashSuccess(x *exchanger) *rules.Payout {
	p := x.payout("COL", "COP", rules.ChannelCash)
	p.RailRef = fmt.Sprintf("%06d", p.ID%1_000_000) // the claim code, spent once claimed
	return p
}
