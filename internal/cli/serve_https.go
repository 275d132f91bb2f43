package cli

import (
	"flag"
	"strings"
	"time"

	"payouts/internal/server"
)

// declareHTTPSFlags declares serve's HTTPS flags on fs; the function it returns completes c
// once they are parsed: the names, and the addresses --https changes the defaults of.
func declareHTTPSFlags(fs *flag.FlagSet, c *server.Config) func() {
	names := fs.String("https", "", "serve HTTPS for these names (example.com,www.example.com), with certificates obtained and renewed by ACME, "+
		"kept in the data directory (on PostgreSQL, in the database, shared by the instances); --addr then defaults to :443 and --http-addr to :80")
	fs.StringVar(&c.TLS.ACMEEmail, "acme-email", "", "with --https: the contact address of the ACME account (the CA's notices)")
	fs.StringVar(&c.TLS.ACMECA, "acme-ca", "", "with --https: the ACME directory URL (default Let's Encrypt's, https://acme-v02.api.letsencrypt.org/directory)")
	fs.StringVar(&c.TLS.ACMECARoot, "acme-ca-root", "", "with --https: PEM file of the root that signed the ACME server's own certificate (a private or test CA)")
	fs.DurationVar(&c.TLS.ACMERenewInterval, "acme-renew-interval", 10*time.Minute, "with --https: how often the certificates are checked for renewal "+
		"(renewed in the window the CA suggests, else in the last third of their life)")
	fs.StringVar(&c.TLS.Cert, "tls-cert", "", "serve HTTPS with this PEM certificate chain of your own (with --tls-key); reread on SIGHUP and when the file changes")
	fs.StringVar(&c.TLS.Key, "tls-key", "", "the PEM private key of --tls-cert")
	fs.StringVar(&c.TLS.HTTPAddr, "http-addr", "", "with HTTPS: plain HTTP address that answers ACME's HTTP-01 challenges and redirects "+
		"everything else to https (default :80 with --https, none with --tls-cert; empty: none)")
	return func() {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if strings.TrimSpace(*names) == "" {
			return
		}
		for _, n := range strings.Split(*names, ",") {
			c.TLS.Names = append(c.TLS.Names, strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), "."))
		}
		if !set["addr"] {
			c.HTTP.Addr = ":443"
		}
		if !set["http-addr"] {
			c.TLS.HTTPAddr = ":80"
		}
	}
}
