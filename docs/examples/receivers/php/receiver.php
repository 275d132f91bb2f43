<?php
// The smallest correct receiver of payouts notifications, in PHP (8.1 or later) with its
// bundled openssl and json extensions only.
//
// It verifies the signature over the merchant id and the raw body with the service's public
// key, answers 2xx to a duplicate, keeps the newest outcome of a payout whatever order
// outcomes arrive in, ignores fields it does not know, and logs a payout it never created
// instead of failing. What it remembers is kept in files under PAYOUTS_RECEIVER_DIR (a real
// receiver: a table, written in the transaction that applies the outcome).
//
//   PAYOUTS_MERCHANT_ID=1 \
//   PAYOUTS_PUBLIC_KEY_URL=http://127.0.0.1:8080/api/v1/notifications/public-key \
//   php -S 127.0.0.1:8081 docs/examples/receivers/php/receiver.php

function answer(int $status, string $text = ''): void
{
    http_response_code($status);
    header('Content-Type: text/plain');
    echo $text;
}

if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
    answer(405, 'POST only');
    return;
}

$merchantId = (string) getenv('PAYOUTS_MERCHANT_ID');
$dir = getenv('PAYOUTS_RECEIVER_DIR') ?: sys_get_temp_dir() . '/payouts-receiver-' . $merchantId;
@mkdir($dir, 0700, true);

// The public key, fetched once and kept.
$keyFile = getenv('PAYOUTS_PUBLIC_KEY_FILE') ?: $dir . '/public-key.pem';
if (!is_file($keyFile)) {
    $pem = file_get_contents((string) getenv('PAYOUTS_PUBLIC_KEY_URL'));
    if ($pem === false) {
        answer(503, 'the public key cannot be fetched');
        return;
    }
    file_put_contents($keyFile, $pem);
}
$publicKey = openssl_pkey_get_public(file_get_contents($keyFile));

// The signature covers these exact bytes: verify them, never a re-encoding of them.
$raw = file_get_contents('php://input');
$header = $_SERVER['HTTP_VERIFICATION'] ?? '';
$signature = base64_decode($header, true);
if ($header === '' || $signature === false
    || openssl_verify($merchantId . $raw, $signature, $publicKey, OPENSSL_ALGO_SHA256) !== 1) {
    answer(401, 'bad signature');
    return;
}
$n = json_decode($raw, true);
if (!is_array($n)) {
    answer(400, 'not JSON');
    return;
}
$payout = $n['payout'] ?? [];
$output = $n['output'] ?? [];

// A duplicate (the same Idempotency-Key): applied already. Creating the mark is atomic.
$mark = @fopen($dir . '/seen-' . hash('sha256', $_SERVER['HTTP_IDEMPOTENCY_KEY'] ?? ''), 'x');
if ($mark === false) {
    answer(200);
    return;
}
fclose($mark);

// Outcomes arrive in any order: keep the newest (UTC RFC 3339 times compare as text).
$at = (string) ($output['statusChangeDateTime'] ?? '');
$latestFile = $dir . '/latest-' . hash('sha256', (string) ($payout['id'] ?? ''));
$lock = fopen($latestFile, 'c+');
flock($lock, LOCK_EX);
if ($at > stream_get_contents($lock)) {
    ftruncate($lock, 0);
    rewind($lock);
    fwrite($lock, $at);
    // Here: look up the order by orderId and apply the status. An order this system never
    // created is logged, and the notification still acknowledged.
    error_log(sprintf('payout %s (order %s): %s %s', $payout['id'] ?? '', $payout['orderId'] ?? '',
        $output['stage'] ?? '', $output['status'] ?? ''));
}
flock($lock, LOCK_UN);
fclose($lock);
answer(200);
