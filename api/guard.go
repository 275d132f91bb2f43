package api

import (
	"mime"
	"net/http"
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
			if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) && !(isCSV(ct) && isBatchCreate(r)) {
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

// checkSettings refuses merchant settings that would send data where it should not go
// (rules.CheckSettings), as one problem.
func checkSettings(s rules.Settings, allowHTTP, sandbox bool) error {
	if errs := rules.CheckSettingsOn(s, allowHTTP, sandbox); len(errs) > 0 {
		return &rules.Problem{Kind: rules.KindInvalid, Title: "Missing or invalid data", Detail: "invalid merchant settings", Errors: errs}
	}
	return nil
}
