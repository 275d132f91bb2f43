package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"payouts/internal/server"
	"payouts/rules"
)

// signCommand prints a signed URL for a merchant request, or with --curl a
// whole curl command: a signing tool that works the same on Linux, macOS and Windows.
var signCommand = &Command{
	Name:  "sign",
	Usage: "--secret S [flags] PATH",
	Short: "print a signed URL (or curl command) for a merchant request",
	Long: "In full: payouts sign --secret S [--key K] [--method POST] [--body JSON | --body-file F] [--curl] PATH.\n" +
		"PATH is the request path, e.g. /api/v1/1/payouts or /api/v1/1/balance; a query after ? is kept unsigned. Flags may come before or after it.",
	Args:     "PATH",
	Required: []string{"secret"},
	Flags:    signFlags,
}

func signFlags(fs *flag.FlagSet) Runner {
	base := fs.String("base", "http://127.0.0.1:8080", "base URL of the server")
	secret := fs.String("secret", "", "the merchant's API secret (or PAYOUTS_SECRET)")
	key := fs.String("key", "", "the merchant's API key, for --curl (or PAYOUTS_KEY)")
	method := fs.String("method", "", "HTTP method (default GET, or POST with a body)")
	body := fs.String("body", "", "the exact body to send")
	bodyFile := fs.String("body-file", "", "read the body from this file (- for standard input)")
	curl := fs.Bool("curl", false, "print a curl command instead of the URL")
	seconds := fs.Bool("seconds", false, "sign with an epoch-seconds timestamp (as PHP clients do) instead of milliseconds")
	return func(ctx context.Context, env Env, rest []string) error {
		var err error
		switch {
		case len(rest) == 0:
			return usageErrorf("sign: the request PATH is required, e.g. /api/v1/1/balance (payouts help sign)")
		case len(rest) > 1:
			return usageErrorf("sign: one PATH only, got %q (flags may come before or after it)", rest)
		case *curl && *key == "":
			return usageErrorf("sign: --curl needs --key (or PAYOUTS_KEY): the command sends it as monnet-api-key")
		}
		target := rest[0]
		if u, err := url.Parse(target); err == nil && u.IsAbs() {
			return usageErrorf("sign: PATH is the path only (%s); the server is --base", u.Path)
		}
		if !strings.HasPrefix(target, "/") {
			return usageErrorf("sign: PATH must start with / (/%s?), the path the server sees", target)
		}
		path, query, _ := strings.Cut(target, "?")
		raw := []byte(*body)
		if *bodyFile != "" {
			if *bodyFile == "-" {
				raw, err = io.ReadAll(os.Stdin)
			} else {
				raw, err = os.ReadFile(*bodyFile)
			}
			if err != nil {
				return err
			}
		}
		m := strings.ToUpper(*method)
		if m == "" {
			m = "GET"
			if len(raw) > 0 {
				m = "POST"
			}
		}
		ts := time.Now().UnixMilli()
		if *seconds {
			ts = time.Now().Unix()
		}
		signed := fmt.Sprintf("%s%s?timestamp=%d&signature=%s", strings.TrimSuffix(*base, "/"), path, ts, rules.Signature(*secret, m, path, ts, raw))
		if query != "" {
			signed += "&" + query
		}
		if !*curl {
			fmt.Fprintln(env.Stdout, signed)
			return nil
		}
		fmt.Fprintf(env.Stdout, "curl -sS -X %s %s -H %s", m, server.ShellQuote(signed), server.ShellQuote("monnet-api-key: "+*key))
		if len(raw) > 0 {
			fmt.Fprintf(env.Stdout, " -H 'Content-Type: application/json' --data-binary %s", server.ShellQuote(string(raw)))
		}
		fmt.Fprintln(env.Stdout)
		return nil
	}
}
