package server

import (
	"context"
	"fmt"
	"io"
	"time"

	"payouts/rules"
)

// seedDemo creates the demo merchant on a first start with an empty database: every product
// on (not PSP, which only adds a requirement), balances funded, and a signed request printed
// ready to paste.
func seedDemo(ctx context.Context, db rules.Storage, a *app, base, tokenSource string, stdout io.Writer) error {
	ms, err := db.Merchants(ctx)
	if err != nil {
		return err
	}
	if len(ms) > 0 {
		id := ms[0].ID
		for _, m := range ms {
			if m.Name == demoName {
				id = m.ID
				break
			}
		}
		fmt.Fprintf(stdout, restartText, len(ms), base, id, tokenSource)
		return nil
	}
	m, c, err := a.merchants.Create(ctx, "", demoName, rules.AllSettings(), time.Now())
	if err != nil {
		return err
	}
	for _, f := range []struct {
		country, currency string
		amount            int64
	}{{"COL", "COP", 100_000_000_000}, {"PER", "PEN", 1_000_000_000}, {"PER", "USD", 100_000_000}} {
		if _, err := a.fund(context.Background(), m.ID, f.country, f.currency, f.amount); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, demoText, m.ID, c.APIKey, c.APISecret, base)
	return nil
}

// demoName is the demo merchant's name, by which a restart finds it.
const demoName = "Demo Merchant"

// restartText is what a start over a database with merchants says instead of credentials:
// how to get new ones (the key rotation of the admin API, or the CLI with the server stopped).
const restartText = `%d merchant(s) in the database; their secrets were shown once, when issued. New credentials for merchant %[3]s (the old ones keep working 24 h):
  while it runs:           curl -sS -X POST %[2]s/admin/v1/merchants/%[3]s/keys -H "Authorization: Bearer %[4]s"
  with the server stopped: payouts merchant keys --id %[3]s --new
  (or the dashboard: Merchants, then the merchant's API keys)
`

const demoText = `
Demo merchant created (credentials shown once; every product on; balances funded in COP, PEN and USD):
  merchantId %s
  apiKey     %s
  apiSecret  %s

Paste this to create a payout (any POSIX shell with openssl and curl; Linux or macOS):

MID=%[1]s KEY='%[2]s' SECRET='%[3]s' BASE='%[4]s'
BODY='{"country":"PER","amount":100000,"currency":"PEN","orderId":"DEMO-'$(date +%%s)'","beneficiary":{"name":"Ana","lastName":"Quispe","email":"ana.quispe@gmail.com","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}'
P=/api/v1/$MID/payouts; TS=$(date +%%s)
HASH=$(printf '%%s' "$BODY" | openssl dgst -sha256 | sed 's/^.* //')
SIG=$(printf '%%s' "POST:$P?timestamp=$TS:$HASH" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')
curl -sS -X POST "$BASE$P?timestamp=$TS&signature=$SIG" -H "monnet-api-key: $KEY" -H 'Content-Type: application/json' -d "$BODY"

Then watch it settle on the dashboard, %[4]s/dashboard (sign in with the admin token), and read the
API at %[4]s/docs. Lost these credentials? payouts merchant keys --id %[1]s --new (server stopped).

`
