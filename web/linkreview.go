package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"payouts/rules"
	"payouts/templates"
)

// The review step of a payout link. After the destination passes the country rules, and
// before the payout takes it, the beneficiary sees what they gave, the holder the directory
// names (masked) and, when the merchant gave a document, types its number. The destination
// crosses the step in hidden inputs signed with the link key, so no session holds it and a
// confirmation is always of the destination that was reviewed.
//
// What ends where (docs/guides/links.md): a number or key the directory does not know, a
// holder the beneficiary does not confirm, a document that is not the merchant's are failed
// attempts (a typo is mended, and each look at a holder's name costs one of five: the page
// cannot be used to read the directory, and no more than five names are shown); a bank the directory says the cellphone or key is
// not at ends the payout with 4041, REJECTED_BANK.

// reviewFields are the review form's own inputs, beside the destination's.
const (
	reviewStep   = "step"
	reviewSig    = "sig"
	reviewAnswer = "answer"
	reviewDoc    = "document"
)

// review runs the directory's checks on a destination that passed the rules, then shows
// the review, or takes the destination when there is nothing to review.
func (l *Links) review(w http.ResponseWriter, r *http.Request, st *linkState, kind int, fields []fieldSpec, ba rules.BankAccount, req *rules.PayoutRequest, route rules.Route) {
	o, ok := l.ownership(w, r, st, kind, ba)
	if !ok {
		return
	}
	if _, hasDoc := rules.LinkDocument(st.p); o.Holder == "" && !hasDoc {
		l.take(w, r, st, req, route)
		return
	}
	// A sixth holder's name is not shown: the link locks as on a fifth failed attempt.
	if o.Holder != "" && l.count(w, r, st, rules.LinkLooked) {
		return
	}
	l.showReview(w, r, st, kind, fields, ba, o, nil, http.StatusOK)
}

// confirm is the review's answer: the signed destination, confirmed or not, and the
// document typed.
func (l *Links) confirm(w http.ResponseWriter, r *http.Request, st *linkState, kind int, fields []fieldSpec, ba rules.BankAccount, req *rules.PayoutRequest, route rules.Route) {
	got, _ := base64.RawURLEncoding.DecodeString(r.PostForm.Get(reviewSig))
	if !hmac.Equal(got, l.reviewMAC(st, kind, fields, r.PostForm)) {
		l.cfg.Log.Warn("payout link review refused: the destination is not the one reviewed", "payout", st.p.ID)
		http.Error(w, "the review does not match the destination given; open the link again", http.StatusBadRequest)
		return
	}
	o, ok := l.ownership(w, r, st, kind, ba) // again: the directory may have moved on
	if !ok {
		return
	}
	if r.PostForm.Get(reviewAnswer) != "yes" {
		if o.Holder == "" { // nothing was shown: back to the form to correct it
			l.show(w, r, st, kind, r.PostForm, nil, http.StatusOK)
			return
		}
		l.failed(w, r, st, kind, r.PostForm, []*rules.Error{rules.LinkOwnershipError("destination.bankAccount.accountNumber",
			"the beneficiary did not confirm the holder the directory names")})
		return
	}
	if _, hasDoc := rules.LinkDocument(st.p); hasDoc && !rules.LinkDocumentMatches(st.p, r.PostForm.Get(reviewDoc)) {
		if l.count(w, r, st, rules.LinkFailed) {
			return
		}
		l.showReview(w, r, st, kind, fields, ba, o, rules.LinkOwnershipError(reviewDoc,
			"the document is not the one the merchant gave"), http.StatusUnprocessableEntity)
		return
	}
	l.take(w, r, st, req, route)
}

// ownership asks the directory about ba. A number or key it does not know is a failed
// attempt; a bank it says the destination is not at ends the payout (4041). It answers
// false when it answered the request.
func (l *Links) ownership(w http.ResponseWriter, r *http.Request, st *linkState, kind int, ba rules.BankAccount) (rules.LinkOwnership, bool) {
	o, err := rules.CheckLinkOwnership(r.Context(), l.cfg.Directory, st.p.Country, ba)
	if err != nil {
		l.internal(w, r, err)
		return o, false
	}
	switch {
	case o.Unknown:
		l.failed(w, r, st, kind, r.PostForm, []*rules.Error{{Kind: rules.KindRejected, Code: rules.CodeDirectoryUnavailable,
			Field: "destination.bankAccount.accountNumber", Message: rules.WithPublished(rules.CodeDirectoryUnavailable, "no wallet or key is registered to it")}})
		return o, false
	case o.OtherBank:
		p, err := l.cfg.Lifecycle.EndLink(r.Context(), st.m, st.p.ID, rules.StatusRejectedBank, rules.CodeLinkOwnership,
			"the directory does not list the bank chosen for this cellphone or key")
		if err != nil {
			l.cfg.Log.Info("payout link ownership mismatch: payout not ended", "payout", st.p.ID, "err", err)
		} else {
			l.cfg.Log.Info("payout link ended: the directory lists another bank", "payout", p.ID, "merchant_id", st.m.ID)
		}
		http.Redirect(w, r, l.selfURL(l.baseURL(r.Context()), st.token, langOf(r), 0), http.StatusSeeOther)
		return o, false
	}
	return o, true
}

// reviewMAC signs the destination a review shows: the payout, the kind and each field's
// value, under the link key.
func (l *Links) reviewMAC(st *linkState, kind int, fields []fieldSpec, form url.Values) []byte {
	mac := hmac.New(sha256.New, l.cfg.Key)
	mac.Write([]byte("payout-link-review\x00" + strconv.FormatInt(st.p.ID, 10) + "\x00" + strconv.Itoa(kind)))
	for _, f := range fields {
		mac.Write([]byte("\x00" + f.name + "=" + strings.TrimSpace(form.Get(f.name))))
	}
	return mac.Sum(nil)
}

func (l *Links) showReview(w http.ResponseWriter, r *http.Request, st *linkState, kind int, fields []fieldSpec, ba rules.BankAccount, o rules.LinkOwnership, docErr *rules.Error, code int) {
	lang := langOf(r)
	words := templates.LinkWordsFor(lang)
	v := templates.LinkReview{Page: l.basePage(r.Context(), st, lang), W: words,
		Action: l.selfURL(l.baseURL(r.Context()), st.token, lang, kind),
		Kind:   words.KindLabel(st.p.Country, kind), Bank: bankLabel(st.p.Country, kind, ba.BankCode), Account: maskAccount(ba),
		AttemptsLeft: rules.LinkAttemptsMax - st.p.Link.Failures, ShowAttempts: st.p.Link.Failures > 0}
	v.Script = templates.Script{Mode: "static", Texts: v.T.JS()}
	if o.Holder != "" {
		v.Holder = rules.MaskName(o.Holder)
	}
	v.Document, _ = rules.LinkDocument(st.p)
	v.Hidden = append(v.Hidden, templates.LinkOption{Value: "kind", Label: strconv.Itoa(kind)},
		templates.LinkOption{Value: reviewStep, Label: "review"})
	for _, f := range fields {
		v.Hidden = append(v.Hidden, templates.LinkOption{Value: f.name, Label: strings.TrimSpace(r.PostForm.Get(f.name))})
	}
	v.Hidden = append(v.Hidden, templates.LinkOption{Value: reviewSig,
		Label: base64.RawURLEncoding.EncodeToString(l.reviewMAC(st, kind, fields, r.PostForm))})
	if docErr != nil {
		msg := rules.MessageIn(lang, docErr.Code, docErr.Message)
		v.DocumentError, v.DocumentCode = msg, docErr.Code
		v.Summary = []templates.LinkError{{Field: "f-document", Code: docErr.Code, Message: msg}}
	}
	l.write(w, r, st.m, code, templates.LinkReviewPage(v))
}

// bankLabel is a bank's code, with the brand a Peru cellphone reaches through it.
func bankLabel(country string, kind int, code string) string {
	if brands := rules.PeruCellphoneBrands[code]; country == "PER" && kind == 4 && len(brands) > 0 {
		return code + " · " + strings.Join(brands, ", ")
	}
	return code
}

// maskAccount shows what the beneficiary gave but for its last four characters.
func maskAccount(ba rules.BankAccount) string {
	n := []rune(string(ba.AccountNumber))
	if len(n) == 0 {
		n = []rune(ba.CCI)
	}
	keep := min(4, len(n)/2)
	return strings.Repeat("•", len(n)-keep) + string(n[len(n)-keep:])
}
