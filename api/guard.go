package api

import (
	"mime"
	"net/http"
	"net/url"
	"strings"

	"payouts/rules"
)

// jsonBodies answers 415 to a request that sends a body to a JSON endpoint (the merchant
// and admin APIs) with a Content-Type other than JSON. A request without Content-Type is
// read as JSON: existing clients of the original API may not send one.
func jsonBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) &&
			(strings.HasPrefix(p, "/api/v1/") || strings.HasPrefix(p, "/api-payout-plus-real-time/") || strings.HasPrefix(p, "/admin/v1/")) {
			if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
				writeProblem(w, problemOf(rules.KindUnsupportedMedia, rules.CodeUnsupportedMediaType,
					"Content-Type "+truncate(ct, 80)+" is not JSON: send application/json"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// checkSettings refuses merchant settings that would send data where it should not go: a
// notificationUrl that is not https (http only when the server allows private notification
// URLs, for development), and allowedOrigins entries that are not origins (the card page
// puts them in its frame-ancestors and postMessage target; * would let any site embed it).
func checkSettings(s rules.Settings, allowHTTP bool) error {
	var errs []*rules.Error
	if u := s.NotificationURL; u != "" {
		pu, err := url.Parse(u)
		ok := err == nil && pu.Host != "" && pu.User == nil && (pu.Scheme == "https" || allowHTTP && pu.Scheme == "http")
		if !ok {
			msg := "must be an absolute https URL without credentials"
			if allowHTTP {
				msg = "must be an absolute http or https URL without credentials"
			}
			errs = append(errs, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeNotificationURL, Field: "settings.notificationUrl", Message: msg})
		}
	}
	for i, o := range s.AllowedOrigins {
		if !isOrigin(o) {
			errs = append(errs, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeAllowedOrigin,
				Field: "settings.allowedOrigins[" + itoa(int64(i)) + "]", Value: o,
				Message: "must be an origin: scheme://host[:port], http or https, without path; * is refused"})
		}
	}
	if len(errs) > 0 {
		return &rules.Problem{Kind: rules.KindInvalid, Title: "Missing or invalid data", Detail: "invalid merchant settings", Errors: errs}
	}
	return nil
}

func isOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	return (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery &&
		!strings.ContainsAny(u.Host, "*") && strings.EqualFold(strings.TrimSuffix(o, "/"), u.Scheme+"://"+u.Host)
}
