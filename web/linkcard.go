package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"payouts/rules"
	"payouts/templates"
)

// A Peru card as one of a payout link's kinds: the card form's inputs (CardFields), its
// checks (checkCard), its sealing (sealCard) and its test cards, inside the link's page. The
// card is never in a review's hidden inputs: the document, when the merchant gave one, is
// typed beside it instead, and the payout then goes on as a card payout.

// isCardKind reports whether kind is the Peru card, offered by p's link.
func isCardKind(p *rules.Payout, kind int) bool {
	return p.Country == "PER" && kind == rules.LinkCardKind && p.Link != nil && slices.Contains(p.Link.Kinds, kind)
}

// cardView fills the link's form with the card's inputs, the document to prove and the
// errors of the last submission (a card input's are "card.<input>", the document's
// "document").
func (l *Links) cardView(ctx context.Context, f *templates.LinkForm, st *linkState, lang string, kind int, values url.Values, errs []*rules.Error) {
	f.Kind, f.Action = kind, l.selfURL(l.baseURL(ctx), st.token, lang, kind)
	card := &templates.CardForm{Page: f.Page, Holder: values.Get("holder"), Expiry: values.Get("expiry"), Errors: map[string]string{}}
	var other []templates.LinkError
	doc := templates.LinkField{Name: "document", Label: f.W.DocumentLabel, Value: values.Get("document")}
	for _, e := range errs {
		switch name, isCard := strings.CutPrefix(e.Field, "card."); {
		case isCard:
			card.Errors[name] = e.Message
			f.Summary = append(f.Summary, templates.LinkError{Field: name, Message: e.Message})
		case e.Field == "document":
			doc.Error, doc.Code = rules.MessageIn(lang, e.Code, e.Message), e.Code
			f.Summary = append(f.Summary, templates.LinkError{Field: doc.ID(), Code: e.Code, Message: doc.Error})
		default:
			other = append(other, templates.LinkError{Code: e.Code, Message: rules.MessageIn(lang, e.Code, e.Message)})
		}
	}
	f.Summary = append(f.Summary, other...)
	f.Card = card
	if masked, ok := rules.LinkDocument(st.p); ok {
		doc.Hint = f.W.DocumentHint + " " + masked
		f.Fields = append(f.Fields, doc)
	}
}

// submitCard takes a Peru card typed on the link: the card form's checks and the document,
// a failed attempt on any error; then the card endpoint's checks of the payout, the card
// sealed in the vault, and the payout goes on as a card payout.
func (l *Links) submitCard(w http.ResponseWriter, r *http.Request, st *linkState, kind int) {
	in := cardInput{Holder: r.PostForm.Get("holder"), PAN: r.PostForm.Get("pan"), Expiry: r.PostForm.Get("expiry"), CVV: r.PostForm.Get("cvv")}
	cd, keys := checkCard(in, l.cfg.Now())
	t := templates.LinkTexts(langOf(r))
	var errs []*rules.Error
	for _, name := range []string{templates.FieldHolder, templates.FieldPAN, templates.FieldExpiry, templates.FieldCVV} {
		if key := keys[name]; key != "" {
			errs = append(errs, &rules.Error{Field: "card." + name, Message: t.Errors[key]})
		}
	}
	if _, ok := rules.LinkDocument(st.p); ok && !rules.LinkDocumentMatches(st.p, r.PostForm.Get("document")) {
		errs = append(errs, rules.LinkOwnershipError("document", "the document is not the one the merchant gave"))
	}
	// What is shown again: never the card number nor the CVV.
	kept := url.Values{"holder": {in.Holder}, "expiry": {in.Expiry}, "document": {r.PostForm.Get("document")}}
	if len(errs) > 0 {
		l.failed(w, r, st, kind, kept, errs)
		return
	}
	req, route, err := rules.CheckLinkCard(st.p, st.m, l.cfg.Now().UTC())
	var p *rules.Problem
	if errors.As(err, &p) {
		l.failed(w, r, st, kind, kept, p.Errors)
		return
	}
	if err != nil {
		l.internal(w, r, err)
		return
	}
	ref, sealed, err := sealCard(l.cfg.Sealer, cd)
	if err != nil {
		l.internal(w, r, err)
		return
	}
	doc := st.p.Request.Beneficiary.Document
	if err := l.cfg.Vault.PutCard(r.Context(), st.m.ID, doc.Type, doc.Number, st.p.ID, ref, sealed, false); err != nil {
		l.internal(w, r, err)
		return
	}
	if _, err := l.cfg.Lifecycle.LinkCard(r.Context(), st.m, st.p.ID, req, route, ref); err != nil {
		// It moved on meanwhile (expired, cancelled): the card goes, the redirect shows why.
		l.cfg.Log.Info("payout link card not taken", "payout", st.p.ID, "err", err)
		// Only this submission's own card: another one, at the same moment, may be the card
		// the payout took.
		if err := l.cfg.Vault.DropUntakenCard(r.Context(), st.p.ID, ref.Token); err != nil {
			l.cfg.Log.Error("drop payout card", "payout", st.p.ID, "err", err)
		}
	} else {
		l.cfg.Log.Info("payout link card given", "payout", st.p.ID, "merchant_id", st.m.ID)
	}
	http.Redirect(w, r, l.selfURL(l.baseURL(r.Context()), st.token, langOf(r), 0), http.StatusSeeOther)
}
