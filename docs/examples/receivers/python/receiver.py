#!/usr/bin/env python3
"""The smallest correct receiver of payouts notifications, in Python with the standard library
only (RSA verification included, as pow() over the public key).

It verifies the signature over the merchant id and the raw body with the service's public
key, answers 2xx to a duplicate, keeps the newest outcome of a payout whatever order outcomes
arrive in, ignores fields it does not know, and logs a payout it never created instead of
failing.

    PAYOUTS_MERCHANT_ID=1 \
    PAYOUTS_PUBLIC_KEY_URL=http://127.0.0.1:8080/api/v1/notifications/public-key \
    ADDR=127.0.0.1:8081 python3 docs/examples/receivers/python/receiver.py
"""
import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def der_read(data, pos):
    """One DER element at pos: (tag, content, position after it)."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(data[pos:pos + n], "big")
        pos += n
    return tag, data[pos:pos + length], pos + length


def load_public_key(pem):
    """(n, e) of a PEM "PUBLIC KEY" (X.509 SubjectPublicKeyInfo) holding an RSA key."""
    body = "".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))
    _, spki, _ = der_read(base64.b64decode(body), 0)
    _, _, pos = der_read(spki, 0)  # the algorithm
    _, bits, _ = der_read(spki, pos)  # the key, a BIT STRING
    _, rsa_key, _ = der_read(bits[1:], 0)
    _, n, pos = der_read(rsa_key, 0)
    _, e, _ = der_read(rsa_key, pos)
    return int.from_bytes(n, "big"), int.from_bytes(e, "big")


# DER of the SHA-256 DigestInfo that PKCS#1 v1.5 signs, before the hash.
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


def verify(key, merchant_id, raw, header):
    """RSA PKCS#1 v1.5 SHA-256 over the merchant id followed by the raw body."""
    if not header:
        return False
    try:
        sig = base64.b64decode(header, validate=True)
    except ValueError:
        return False
    n, e = key
    k = (n.bit_length() + 7) // 8
    if len(sig) != k:
        return False
    s = int.from_bytes(sig, "big")
    if s >= n:
        return False
    em = pow(s, e, n).to_bytes(k, "big")
    digest = hashlib.sha256(merchant_id.encode() + raw).digest()
    t = SHA256_PREFIX + digest
    expected = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    return hmac.compare_digest(em, expected)


MERCHANT_ID = os.environ.get("PAYOUTS_MERCHANT_ID", "")
if os.environ.get("PAYOUTS_PUBLIC_KEY_FILE"):
    with open(os.environ["PAYOUTS_PUBLIC_KEY_FILE"]) as f:
        KEY = load_public_key(f.read())
else:
    with urllib.request.urlopen(os.environ["PAYOUTS_PUBLIC_KEY_URL"]) as r:
        KEY = load_public_key(r.read().decode())

lock = threading.Lock()
seen = set()  # Idempotency-Key of every notification applied (a real one: a table)
latest = {}  # payout id -> statusChangeDateTime of the outcome applied


class Receiver(BaseHTTPRequestHandler):
    def answer(self, status, text=""):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        # The signature covers these exact bytes: verify them, never a re-encoding of them.
        raw = self.rfile.read(min(int(self.headers.get("Content-Length", 0)), 1 << 20))
        if not verify(KEY, MERCHANT_ID, raw, self.headers.get("verification")):
            return self.answer(401, "bad signature")
        try:
            n = json.loads(raw)
            payout, output = n.get("payout", {}), n.get("output", {})
        except (ValueError, AttributeError):
            return self.answer(400, "not JSON")
        with lock:
            key = self.headers.get("Idempotency-Key")
            if key in seen:
                return self.answer(200)  # a duplicate: applied already
            seen.add(key)
            # Outcomes arrive in any order: keep the newest (UTC RFC 3339 times compare as text).
            at = output.get("statusChangeDateTime", "")
            if at > latest.get(payout.get("id"), ""):
                latest[payout.get("id")] = at
                # Here: look up the order by orderId and apply the status. An order this system
                # never created is logged, and the notification still acknowledged.
                sys.stderr.write("payout %s (order %s): %s %s\n" % (
                    payout.get("id"), payout.get("orderId"), output.get("stage"), output.get("status")))
        self.answer(200)

    def log_message(self, *args):
        pass


host, _, port = os.environ.get("ADDR", "127.0.0.1:8081").rpartition(":")
server = ThreadingHTTPServer((host, int(port)), Receiver)
print("listening on http://%s:%d" % server.server_address[:2], flush=True)
server.serve_forever()
