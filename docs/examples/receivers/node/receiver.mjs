// The smallest correct receiver of payouts notifications, in Node (18 or later) with the
// standard library only.
//
// It verifies the signature over the merchant id and the raw body with the service's public
// key, answers 2xx to a duplicate, keeps the newest outcome of a payout whatever order
// outcomes arrive in, ignores fields it does not know, and logs a payout it never created
// instead of failing.
//
//   PAYOUTS_MERCHANT_ID=1 \
//   PAYOUTS_PUBLIC_KEY_URL=http://127.0.0.1:8080/api/v1/notifications/public-key \
//   ADDR=127.0.0.1:8081 node docs/examples/receivers/node/receiver.mjs
import { createServer } from "node:http";
import { verify } from "node:crypto";
import { readFileSync } from "node:fs";

const merchantId = process.env.PAYOUTS_MERCHANT_ID ?? "";
const publicKey = process.env.PAYOUTS_PUBLIC_KEY_FILE
  ? readFileSync(process.env.PAYOUTS_PUBLIC_KEY_FILE, "utf8")
  : await (await fetch(process.env.PAYOUTS_PUBLIC_KEY_URL)).text();

const seen = new Set(); // Idempotency-Key of every notification applied (a real one: a table)
const latest = new Map(); // payout id -> statusChangeDateTime of the outcome applied

// RSA PKCS#1 v1.5 SHA-256 over the merchant id followed by the raw body.
function verified(raw, header) {
  if (!header) return false;
  const sig = Buffer.from(header, "base64");
  if (sig.toString("base64") !== header) return false; // not base64
  return verify("sha256", Buffer.concat([Buffer.from(merchantId), raw]), publicKey, sig);
}

const server = createServer((req, res) => {
  const answer = (status, text = "") => res.writeHead(status, { "Content-Type": "text/plain" }).end(text);
  if (req.method !== "POST") return answer(405, "POST only");
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size <= 1 << 20) chunks.push(c);
  });
  req.on("end", () => {
    // The signature covers these exact bytes: verify them, never a re-encoding of them.
    const raw = Buffer.concat(chunks);
    if (!verified(raw, req.headers["verification"])) return answer(401, "bad signature");
    let n;
    try {
      n = JSON.parse(raw.toString("utf8"));
    } catch {
      return answer(400, "not JSON");
    }
    const payout = n.payout ?? {};
    const output = n.output ?? {};
    const key = req.headers["idempotency-key"];
    if (seen.has(key)) return answer(200); // a duplicate: applied already
    seen.add(key);
    // Outcomes arrive in any order: keep the newest (UTC RFC 3339 times compare as text).
    const at = output.statusChangeDateTime ?? "";
    if (at > (latest.get(payout.id) ?? "")) {
      latest.set(payout.id, at);
      // Here: look up the order by orderId and apply the status. An order this system never
      // created is logged, and the notification still acknowledged.
      console.error(`payout ${payout.id} (order ${payout.orderId}): ${output.stage} ${output.status}`);
    }
    answer(200);
  });
});

const [host, port] = (process.env.ADDR ?? "127.0.0.1:8081").split(/:(?=[^:]*$)/);
server.listen(Number(port), host, () => {
  const a = server.address();
  console.log(`listening on http://${a.address}:${a.port}`);
});
