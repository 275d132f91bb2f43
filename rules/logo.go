package rules

import (
	"net"
	"net/url"
	"strings"
)

// LogoURLAllowed reports whether a card payout's merchantLogo may be shown on the card form:
// an https URL, or an http URL on the loopback (127.0.0.1, ::1 or localhost), which browsers
// treat as secure, so that a server on a developer's machine can serve the logo itself
// (/static/logo-demo.svg, for trying the form offline).
func LogoURLAllowed(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		host := u.Hostname()
		if strings.EqualFold(host, "localhost") {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return false
}
