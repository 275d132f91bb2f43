package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"payouts/rules"
)

// ParseTrustedProxies reads --trusted-proxies: comma-separated CIDRs or single addresses.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %q is not a CIDR or an IP address", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

type clientAddrKey struct{}

// clientAddrMiddleware finds each request's client address once: the peer's address, or,
// when the peer is a trusted proxy, the nearest address of X-Forwarded-For (or Forwarded)
// that is not a trusted proxy. Headers from any other peer are ignored: anyone can write them.
func clientAddrMiddleware(trusted []netip.Prefix) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			addr := resolveClientAddr(r, trusted)
			ctx := r.Context()
			if lc := logContext(ctx); lc != nil {
				lc.clientAddr = addr // in the request's logCtx (serverRequestID): no context of its own
			} else {
				ctx = context.WithValue(ctx, clientAddrKey{}, addr)
			}
			if a, err := netip.ParseAddr(peerAddr(r)); err == nil && isTrusted(a, trusted) {
				if base := forwardedBase(r); base != "" {
					ctx = rules.WithPublicBase(ctx, base)
				}
			}
			if ctx != r.Context() {
				r = r.WithContext(ctx)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func resolveClientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer := peerAddr(r)
	a, err := netip.ParseAddr(peer)
	if err != nil || len(trusted) == 0 || !isTrusted(a, trusted) {
		return peer
	}
	hops := forwardedFor(r)
	// Right to left: the last hop was added by the proxy we trust; skip our own proxies.
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(hops[i])
		if err != nil {
			return peer // a hop we cannot read: trust nothing beyond it
		}
		if !isTrusted(h, trusted) {
			return h.Unmap().String()
		}
	}
	return peer
}

// forwardedFor lists the client addresses the proxies added, nearest last: Forwarded
// (RFC 7239) for= values when present, else X-Forwarded-For.
func forwardedFor(r *http.Request) []string {
	var hops []string
	if fw := r.Header.Values("Forwarded"); len(fw) > 0 {
		for _, line := range fw {
			for _, elem := range strings.Split(line, ",") {
				for _, pair := range strings.Split(elem, ";") {
					k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
					if !ok || !strings.EqualFold(k, "for") {
						continue
					}
					v = strings.Trim(v, `"`)
					if strings.HasPrefix(v, "[") { // "[2001:db8::1]:4711"
						if end := strings.Index(v, "]"); end > 0 {
							v = v[1:end]
						}
					} else if host, _, err := net.SplitHostPort(v); err == nil {
						v = host
					}
					hops = append(hops, v)
				}
			}
		}
		return hops
	}
	for _, line := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(line, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	return hops
}

// clientAddr is the request's client address as clientAddrMiddleware found it.
func clientAddr(r *http.Request) string {
	if a, ok := clientAddrOf(r.Context()); ok {
		return a
	}
	return peerAddr(r)
}

// clientAddrOf is the client address clientAddrMiddleware found for the request of ctx.
func clientAddrOf(ctx context.Context) (string, bool) {
	if lc := logContext(ctx); lc != nil && lc.clientAddr != "" {
		return lc.clientAddr, true
	}
	a, ok := ctx.Value(clientAddrKey{}).(string)
	return a, ok
}

// forwardedBase is the scheme://host a client reached the service at, as the trusted proxy in
// front of it says: Forwarded proto= and host= (RFC 7239), else X-Forwarded-Proto and
// X-Forwarded-Host, the host defaulting to the Host header. "" when the proxy says nothing
// of the scheme, or something that is not a plain host.
func forwardedBase(r *http.Request) string {
	var proto, host string
	if fw := r.Header.Get("Forwarded"); fw != "" {
		first, _, _ := strings.Cut(fw, ",")
		for _, pair := range strings.Split(first, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
			switch v = strings.Trim(v, `"`); {
			case ok && strings.EqualFold(k, "proto"):
				proto = v
			case ok && strings.EqualFold(k, "host"):
				host = v
			}
		}
	}
	if proto == "" {
		proto, _, _ = strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	}
	if host == "" {
		host, _, _ = strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
	}
	proto, host = strings.ToLower(strings.TrimSpace(proto)), strings.TrimSpace(host)
	if host == "" {
		host = r.Host
	}
	if proto != "https" && proto != "http" {
		return ""
	}
	if u, err := url.Parse(proto + "://" + host); err != nil || u.Host != host || u.User != nil || host == "" {
		return ""
	}
	return proto + "://" + host
}
