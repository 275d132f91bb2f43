package rules

import (
	"net/url"
	"strconv"
	"strings"
)

// CheckSettings lists what is wrong with a merchant's settings, wherever they are set (admin
// API, dashboard, CLI): a notificationUrl that is not https (http only when allowHTTP, the
// server's development flag for private notification URLs), and allowedOrigins entries that
// are not origins (the card page puts them in its frame-ancestors and postMessage target; *
// would let any site embed it). SandboxInboxURL is a notificationUrl too (the sandbox's inbox).
// Locations are under "settings.".
func CheckSettings(s Settings, allowHTTP bool) []*Error { return CheckSettingsOn(s, allowHTTP, true) }

// CheckSettingsOn is CheckSettings on a server whose sandbox is on or off: without the
// sandbox, SandboxInboxURL is refused (nothing would deliver to it).
func CheckSettingsOn(s Settings, allowHTTP, sandbox bool) []*Error {
	var errs []*Error
	if s.NotificationURL == SandboxInboxURL && !sandbox {
		errs = append(errs, &Error{Kind: KindInvalid, Code: CodeNotificationURL, Field: "settings.notificationUrl",
			Message: SandboxInboxURL + " is the sandbox's inbox, and this server runs with --sandbox=false: use an https URL"})
	}
	if u := s.NotificationURL; u != "" && u != SandboxInboxURL {
		pu, err := url.Parse(u)
		ok := err == nil && pu.Host != "" && pu.User == nil && (pu.Scheme == "https" || allowHTTP && pu.Scheme == "http")
		if !ok {
			msg := "must be an absolute https URL without credentials; to try notifications without a public receiver, " +
				"use " + SandboxInboxURL + " (the sandbox's built-in inbox), or start the server with the development flag " +
				"--allow-private-notification-urls to allow http and private addresses"
			if allowHTTP {
				msg = "must be an absolute http or https URL without credentials, or " + SandboxInboxURL
			}
			errs = append(errs, &Error{Kind: KindInvalid, Code: CodeNotificationURL, Field: "settings.notificationUrl", Message: msg})
		}
	}
	for i, o := range s.AllowedOrigins {
		if !IsOrigin(o) {
			errs = append(errs, &Error{Kind: KindInvalid, Code: CodeAllowedOrigin,
				Field: "settings.allowedOrigins[" + strconv.Itoa(i) + "]", Value: o,
				Message: "must be an origin: scheme://host[:port], http or https, without path; * is refused"})
		}
	}
	return errs
}

// IsOrigin reports whether o is a web origin: scheme://host[:port], http or https, nothing else.
func IsOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	return (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery &&
		!strings.ContainsAny(u.Host, "*") && strings.EqualFold(strings.TrimSuffix(o, "/"), u.Scheme+"://"+u.Host)
}
