#!/usr/bin/env bash
# CI: the OpenAPI document as the tools merchants use read it. Builds the binary,
# starts it on a free port with a temporary data directory, fetches /openapi.json,
# /openapi-3.0.json and /postman.json, lints both documents (Redocly's lint engine,
# recommended rules, redocly.yaml), generates and runs a Go client (oapi-codegen, .ci/clients/go) and a TypeScript
# client (openapi-typescript + openapi-fetch, .ci/clients/ts) — payouts, and an event read and
# resent by its id, an older id with ":" percent-encoded by the TypeScript client — and runs the Postman collection
# under newman. Exits non-zero on the first failure. Needs Go, Node 18.17+ and npm (.ci/run
# installs Debian's when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d /tmp/payouts-ci-openapi.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== openapi: npm ci (.ci/clients/ts: @redocly/openapi-core, newman, openapi-typescript, openapi-fetch, typescript)"
(cd .ci/clients/ts && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
npx_ts() { (cd "$root/.ci/clients/ts" && npx --no-install "$@"); }

echo "== openapi: build and start the server"
go build -o "$tmp/payouts" .
token=ci-admin-token-0123456789abcdef
"$tmp/payouts" serve --addr 127.0.0.1:0 --data "$tmp/data" --admin-token "$token" --no-demo >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
base=""
for _ in $(seq 1 100); do
  base=$(grep -o 'listening on http://[0-9.:]*' "$tmp/stdout" | cut -d' ' -f3 || true)
  [ -n "$base" ] && curl -fsS "$base/readyz" >/dev/null 2>&1 && break
  base=""
  sleep 0.1
done
if [ -z "$base" ]; then cat "$tmp/stdout" "$tmp/stderr"; echo "the server did not start"; exit 1; fi
echo "   $base"
curl -fsS "$base/openapi.json" -o "$tmp/openapi.json"
curl -fsS "$base/openapi-3.0.json" -o "$tmp/openapi-3.0.json"
curl -fsS "$base/postman.json" -o "$tmp/postman.json"

# merchant NAME: a merchant with every product on, funded, notified to the sandbox inbox (so
# that the clients find events to read and resend); prints id, key and secret.
merchant() {
  local out id
  out=$(curl -fsS -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$base/admin/v1/merchants" \
    -d "{\"name\":\"$1\",\"settings\":{\"notificationUrl\":\"sandbox:inbox\",\"cardPayouts\":true,\"cashPayouts\":true,\"realTimePhoneAccount\":true,\"realTimeKey\":true}}")
  id=$(printf '%s' "$out" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const m=JSON.parse(s);console.log(m.merchantId,m.apiKey,m.apiSecret)})')
  for f in 'COL COP 100000000000' 'PER PEN 1000000000' 'PER USD 100000000'; do
    set -- $f
    curl -fsS -o /dev/null -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
      "$base/admin/v1/merchants/${id%% *}/balance" -d "{\"country\":\"$1\",\"currency\":\"$2\",\"amount\":$3}"
  done
  echo "$id"
}

echo "== openapi: lint (Redocly's engine, @redocly/openapi-core: recommended rules, redocly.yaml)"
(cd .ci/clients/ts && node lint.mjs "$root/redocly.yaml" "$tmp/openapi.json" "$tmp/openapi-3.0.json")

echo "== openapi: Go client (oapi-codegen from /openapi-3.0.json)"
read -r mid key secret < <(merchant "Go client")
(
  cd .ci/clients/go
  mkdir -p payouts
  go tool oapi-codegen -config oapi-codegen.yaml "$tmp/openapi-3.0.json"
  go vet .
  PAYOUTS_URL=$base MERCHANT_ID=$mid API_KEY=$key API_SECRET=$secret EXAMPLES=$root/rules/testdata/examples go run .
)

echo "== openapi: TypeScript client (openapi-typescript + openapi-fetch from /openapi.json)"
read -r mid key secret < <(merchant "TypeScript client")
(
  cd .ci/clients/ts
  mkdir -p gen
  npx --no-install openapi-typescript "$tmp/openapi.json" -o gen/schema.ts >/dev/null
  npx --no-install tsc -p .
  PAYOUTS_URL=$base MERCHANT_ID=$mid API_KEY=$key API_SECRET=$secret EXAMPLES=$root/rules/testdata/examples node dist/src/client.js
)

echo "== openapi: the Postman collection under newman (folders Payouts and Balance)"
read -r mid key secret < <(merchant "Postman")
npx_ts newman run "$tmp/postman.json" --folder Payouts --folder Balance --bail \
  --env-var "baseUrl=$base" --env-var "merchantId=$mid" --env-var "apiKey=$key" --env-var "apiSecret=$secret"
echo "== openapi: done"
