#!/usr/bin/env bash
# Create throughput on PostgreSQL, ratio.sh-style: the real binary measured from another
# process by the shared load generator (../shared/bench/loadgen, 64 signing clients in all),
# first one instance, then two instances on one database (32 clients on each, at once), and
# the bare chi+bbolt server of ../shared/bench/baseline in the same run for scale.
#
#   PAYOUTS_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .ci/bench-postgres.sh
#
# Run from the project root. Each configuration gets a new database on that server (dropped
# afterwards). MERCHANTS=2 splits the load between two merchants (each half of the clients
# signs for one), in both configurations. As in ratio.sh: fsync on, logging to a file, the lifecycle worker on with
# short rails, so every payout is authorized, routed and settled during the run.
set -u
DURATION=${DURATION:-15s} BENCH=${BENCH:-../shared/bench} MERCHANTS=${MERCHANTS:-1}
base_url=${PAYOUTS_BENCH_DATABASE_URL:?set PAYOUTS_BENCH_DATABASE_URL to a PostgreSQL server URL}
work=$(mktemp -d); pids=(); dbs=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
  for d in "${dbs[@]}"; do psql "$base_url" -qc "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT
cp -r "$BENCH/loadgen" "$BENCH/baseline" "$work/"
# The shared load generator's account breaks rule 1221 (README, Performance): its 12th digit
# must be the currency digit 0 for PEN. Same request otherwise.
sed -i 's/"accountNumber":"19312345678901"/"accountNumber":"19312345678012"/' "$work/loadgen/main.go"
(cd "$work/loadgen" && go build -o "$work/lg" .) || exit 1
(cd "$work/baseline" && go build -o "$work/base" .) || exit 1
go build -o "$work/payouts" . || exit 1
"$work/payouts" keys --out "$work/keys" >/dev/null || exit 1
tok=$(cat "$work/keys/admin-token")
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# newdb makes a new database and sets db_url to it (not in a subshell: cleanup drops it).
newdb() {
  local name="payouts_bench_$RANDOM$RANDOM"
  psql "$base_url" -qc "CREATE DATABASE $name" >/dev/null || exit 1
  dbs+=("$name")
  db_url=$(python3 -c 'import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(u.urlunparse(p._replace(path="/"+sys.argv[2])))' "$base_url" "$name")
}
# start DB N: N instances on database DB; sets ports=(...)
start() {
  local db=$1 n=$2; ports=()
  for i in $(seq "$n"); do
    local p; p=$(free)
    "$work/payouts" serve --addr 127.0.0.1:$p --data "$work/data-$p" --database "$db" --instance "bench-$i" \
      --master-key-file "$work/keys/master.key" --card-key-file "$work/keys/card.key" \
      --notification-key-file "$work/keys/notification-key.pem" --admin-token "$tok" --no-demo \
      --sandbox-delay 200ms --sandbox-batch-delay 1s >"$work/payouts-$p.log" 2>&1 & pids+=($!)
    ports+=("$p")
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$p/readyz" >/dev/null && break; sleep 0.1; done
  done
  local adm=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
  mids=(); keys=(); secs=()
  for m in $(seq "$MERCHANTS"); do
    local creds; creds=$(curl -fs -X POST "${adm[@]}" -d '{"name":"Bench","settings":{}}' "http://127.0.0.1:${ports[0]}/admin/v1/merchants") || { echo "no merchant"; exit 1; }
    read -r mid key sec < <(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["merchantId"], d["apiKey"], d["apiSecret"])' <<<"$creds")
    curl -fs -X POST "${adm[@]}" -d '{"country":"PER","currency":"PEN","amount":900000000000000}' \
      "http://127.0.0.1:${ports[0]}/admin/v1/merchants/$mid/balance" >/dev/null || { echo "funding failed"; exit 1; }
    mids+=("$mid"); keys+=("$key"); secs+=("$sec")
  done
}
# load PORT_A PORT_B: 32 clients on each port at once (merchant 1 on A; on B merchant 2 when
# there are two); sets a and b to the load generator's lines.
load() {
  local m2=$(( MERCHANTS - 1 ))
  "$work/lg" -base "http://127.0.0.1:$1" -merchant "${mids[0]}" -key "${keys[0]}" -secret "${secs[0]}" -c 32 -d "$DURATION" >"$work/a" & local la=$!
  "$work/lg" -base "http://127.0.0.1:$2" -merchant "${mids[$m2]}" -key "${keys[$m2]}" -secret "${secs[$m2]}" -c 32 -d "$DURATION" >"$work/b" & local lb=$!
  wait "$la" "$lb"; a=$(cat "$work/a"); b=$(cat "$work/b")
}
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; pids=(); }
rate() { sed -E 's/.*created_per_s=([0-9]+).*/\1/' <<<"$1"; }
p99() { sed -E 's/.*p99_ms=([0-9.]+).*/\1/' <<<"$1"; }

newdb; start "$db_url" 1
load "${ports[0]}" "${ports[0]}"; one_a=$a; one_b=$b
echo "postgres, one instance:  $one_a"
echo "                         $one_b"
stop

newdb; start "$db_url" 2
load "${ports[0]}" "${ports[1]}"
echo "postgres, two instances: $a"
echo "                         $b"
stop

bp=$(free)
"$work/base" -addr 127.0.0.1:$bp -db "$work/base.db" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$bp/hello" >/dev/null && break; sleep 0.1; done
bare=$("$work/lg" -base "http://127.0.0.1:$bp" -merchant M1 -c 64 -d "$DURATION")
echo "bare chi+bbolt:          $bare"
python3 - "$(rate "$one_a")" "$(rate "$one_b")" "$(p99 "$one_a")" "$(p99 "$one_b")" "$(rate "$a")" "$(rate "$b")" "$(p99 "$a")" "$(p99 "$b")" "$(rate "$bare")" "$MERCHANTS" <<'PY'
import sys
oa, ob, oa99, ob99, a, b, a99, b99, bare, merchants = map(float, sys.argv[1:])
one = oa + ob
print(f"postgres, {merchants:.0f} merchant(s): one instance {one:.0f}/s (p99 {max(oa99,ob99):.1f} ms), two instances {a+b:.0f}/s "
      f"(p99 {max(a99,b99):.1f} ms): two/one {((a+b)/one if one else 0):.2f}; bare chi+bbolt {bare:.0f}/s")
PY
