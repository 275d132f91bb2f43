package web

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"payouts/rules"
)

// newNonce is a fresh CSP nonce for one response.
func newNonce() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}

// randomID is an unguessable identifier (session ids, card tokens).
func randomID() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// origins returns the merchant's allowed origins that are well-formed origins
// (scheme://host[:port], http or https), normalised; nil when none is configured.
func origins(m *rules.Merchant) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, o := range m.Settings.AllowedOrigins {
		u, err := url.Parse(strings.TrimSpace(o))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" ||
			strings.ContainsAny(u.Host, " ;,'\"") {
			continue
		}
		out = append(out, u.Scheme+"://"+strings.ToLower(u.Host))
	}
	return out
}

// setPageHeaders writes the headers of every card page: a CSP whose
// only scripts and styles are ours (by nonce), framed only by the merchant's allowed
// origins, posting forms only to this server; no caching; no referrer (the URL carries the
// session token).
//
// frame-ancestors: with allowedOrigins configured, exactly those; with none configured any
// site may frame the form (the original API embeds without configuration, and the page
// reveals nothing without the unguessable token).
func setPageHeaders(w http.ResponseWriter, m *rules.Merchant, nonce string) {
	ancestors := "*"
	if o := origins(m); len(o) > 0 {
		ancestors = strings.Join(o, " ")
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'nonce-"+nonce+"'; style-src 'self' 'nonce-"+nonce+"'; "+
		"img-src 'self' https:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors "+ancestors+
		"; base-uri 'none'; object-src 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin-allow-popups")
}

// postTargets are the origins the page posts its messages to: the merchant's allowed origins
// (each one: postMessage drops a message whose target is not the parent's origin), or "*"
// only when none is configured. The data (payoutId, orderId, stage, status) is what the
// embedding page would read from the API anyway.
func postTargets(m *rules.Merchant) []string {
	if o := origins(m); len(o) > 0 {
		return o
	}
	return []string{"*"}
}

// originAllowed decides a form post that http.CrossOriginProtection refused: the form served
// as <iframe srcdoc> runs in the embedding page's origin, so its post is cross-origin by
// construction. It passes when it comes from one of the merchant's allowed origins; with none
// configured, the session token in the URL is the only credential (there is no cookie, so a
// forged post needs the token, and a holder of the token needs no forgery).
func originAllowed(r *http.Request, m *rules.Merchant) bool {
	o := origins(m)
	if len(o) == 0 {
		return true
	}
	origin := strings.ToLower(r.Header.Get("Origin"))
	for _, x := range o {
		if origin == x {
			return true
		}
	}
	return false
}
