// Command client runs the Go client that oapi-codegen generates from /openapi-3.0.json (into
// ./payouts, by .ci/run) against a running server: one payout per example request, read back,
// listed by orderId, a refused body as a typed problem, a payout link created and read, and
// an event read and resent by its id. Only the signing below is written by hand.
//
//	PAYOUTS_URL=http://127.0.0.1:8080 MERCHANT_ID=1 API_KEY=pk_… API_SECRET=… EXAMPLES=../../../rules/testdata/examples go run .
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"payouts/ci/clients/go/payouts"
)

// sign is the signing middleware: header monnet-api-key, query timestamp and
// signature = hex(HMAC-SHA256(secret, METHOD:path?timestamp=ts:hex(SHA-256(body)))).
func sign(key, secret string) payouts.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
		sum := sha256.Sum256(body)
		mac := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(mac, "%s:%s?timestamp=%s:%x", req.Method, req.URL.EscapedPath(), ts, sum)
		q := req.URL.Query()
		q.Set("timestamp", ts)
		q.Set("signature", hex.EncodeToString(mac.Sum(nil)))
		req.URL.RawQuery = q.Encode()
		req.Header.Set("monnet-api-key", key)
		return nil
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "go client:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	mid := os.Getenv("MERCHANT_ID")
	c, err := payouts.NewClientWithResponses(os.Getenv("PAYOUTS_URL"), payouts.WithRequestEditorFn(sign(os.Getenv("API_KEY"), os.Getenv("API_SECRET"))))
	if err != nil {
		return err
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv("EXAMPLES"), "*.json"))
	if len(files) == 0 {
		return fmt.Errorf("no examples in %q", os.Getenv("EXAMPLES"))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var body payouts.PayoutRequest
		if err := json.Unmarshal(raw, &body); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		var id int64
		if strings.HasSuffix(f, "-card.json") {
			res, err := c.CreateCardPayoutWithResponse(ctx, mid, &payouts.CreateCardPayoutParams{}, body)
			if err != nil || res.JSON200 == nil {
				return fmt.Errorf("%s: create card payout: %v %s", f, err, res.Body)
			}
			id = res.JSON200.Payout.Id
		} else {
			res, err := c.CreatePayoutWithResponse(ctx, mid, &payouts.CreatePayoutParams{}, body)
			if err != nil || res.JSON201 == nil {
				return fmt.Errorf("%s: create payout: %v %s", f, err, res.Body)
			}
			id = res.JSON201.Payout.Id
		}
		got, err := c.GetPayoutWithResponse(ctx, mid, id, &payouts.GetPayoutParams{})
		if err != nil || got.JSON200 == nil || got.JSON200.Payout.OrderId != body.OrderId {
			return fmt.Errorf("%s: read payout %d: %v %s", f, id, err, got.Body)
		}
		list, err := c.ListPayoutsWithResponse(ctx, mid, &payouts.ListPayoutsParams{OrderId: &body.OrderId})
		if err != nil || list.JSON200 == nil || list.JSON200.Items == nil || len(*list.JSON200.Items) != 1 || (*list.JSON200.Items)[0].Payout.Id != id {
			return fmt.Errorf("%s: list by orderId %s: %v %s", f, body.OrderId, err, list.Body)
		}
		fmt.Printf("go client: %s → payout %d %s, read, listed by orderId\n", filepath.Base(f), id, got.JSON200.Output.Stage)
	}
	// A refused body answers a typed problem: amount with decimals in COP (Colombia rule, 401).
	var refused payouts.PayoutRequest
	raw, _ := os.ReadFile(filepath.Join(os.Getenv("EXAMPLES"), "col-bank-account.json"))
	json.Unmarshal(raw, &refused)
	refused.OrderId, refused.Amount = "GO-REFUSED-1", 5000050
	res, err := c.CreatePayoutWithResponse(ctx, mid, &payouts.CreatePayoutParams{}, refused)
	if err != nil || res.ApplicationproblemJSON401 == nil || res.ApplicationproblemJSON401.Code != "1503" {
		return fmt.Errorf("refused body: want a 401 problem with code 1503: %v %s", err, res.Body)
	}
	fmt.Printf("go client: refused body → %d %s %q\n", res.StatusCode(), res.ApplicationproblemJSON401.Code, res.ApplicationproblemJSON401.Detail)
	if err := link(ctx, c, mid); err != nil {
		return err
	}
	return events(ctx, c, mid)
}

// link creates a payout link and reads it back: the payout waits on the link for its
// beneficiary's destination, its amount reserved.
func link(ctx context.Context, c *payouts.ClientWithResponses, mid string) error {
	minutes, kinds, lang, email := 4320, []int{2, 4}, payouts.Es, "juan.perez@gmail.com"
	body := payouts.CreatePayoutLinkJSONRequestBody{Country: "COL", Amount: 15000000, Currency: "COP", OrderId: "GO-LINK-1",
		Beneficiary: payouts.Beneficiary{Name: "Juan", LastName: "Pérez", Email: &email,
			Document: payouts.Document{Type: 1, Number: "1020304050"}},
		ExpirationTime: &minutes, AllowedDestinations: &kinds, Lang: &lang}
	res, err := c.CreatePayoutLinkWithResponse(ctx, mid, &payouts.CreatePayoutLinkParams{}, body)
	if err != nil || res.JSON200 == nil || !strings.Contains(res.JSON200.Link, "/link?s=") || res.JSON200.ExpiresAt == "" {
		return fmt.Errorf("create payout link: %v %s", err, res.Body)
	}
	id := res.JSON200.Payout.Id
	got, err := c.GetPayoutWithResponse(ctx, mid, id, &payouts.GetPayoutParams{})
	if err != nil || got.JSON200 == nil || got.JSON200.Link == nil || got.JSON200.Link.State != "waiting" || got.JSON200.Link.ExpiresAt != res.JSON200.ExpiresAt ||
		got.JSON200.Link.AllowedDestinations == nil || len(*got.JSON200.Link.AllowedDestinations) != 2 {
		return fmt.Errorf("read payout link %d: %v %s", id, err, got.Body)
	}
	fmt.Printf("go client: payout link → payout %d %s, read: link %s, channel %s\n", id, res.JSON200.Output.Status, got.JSON200.Link.State, got.JSON200.Channel)
	return nil
}

// events reads and resends an event by its id: the payouts above were notified to the
// merchant's sandbox inbox. An id of the older form, with ":", is signed and reaches the
// server as well: it answers 404 (no such event), not 401.
func events(ctx context.Context, c *payouts.ClientWithResponses, mid string) error {
	var id string
	for deadline := time.Now().Add(60 * time.Second); id == ""; time.Sleep(500 * time.Millisecond) {
		list, err := c.ListEventsWithResponse(ctx, mid, &payouts.ListEventsParams{})
		if err != nil || list.JSON200 == nil {
			return fmt.Errorf("list events: %v %s", err, list.Body)
		}
		if items := list.JSON200.Items; items != nil && len(*items) > 0 {
			id = (*items)[0].EventId
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no event in the log within 60 s")
		}
	}
	got, err := c.GetEventWithResponse(ctx, mid, id, &payouts.GetEventParams{})
	if err != nil || got.JSON200 == nil || got.JSON200.EventId != id {
		return fmt.Errorf("read event %s: %v %s", id, err, got.Body)
	}
	resent, err := c.ResendEventWithResponse(ctx, mid, id, &payouts.ResendEventParams{})
	if err != nil || resent.JSON202 == nil || resent.JSON202.EventId != id {
		return fmt.Errorf("resend event %s: %v %s", id, err, resent.Body)
	}
	fmt.Printf("go client: event %s read, resent (%s)\n", id, resent.JSON202.Status)
	const old = "merchant.notification:999999:PROCESSED"
	none, err := c.GetEventWithResponse(ctx, mid, old, &payouts.GetEventParams{})
	if err != nil || none.ApplicationproblemJSON404 == nil || none.ApplicationproblemJSON404.Code != "2996" {
		return fmt.Errorf("read event %s: want a 404 problem with code 2996: %v %s", old, err, none.Body)
	}
	fmt.Printf("go client: event %s (sent as %s) → %d %s\n", old, none.HTTPResponse.Request.URL.EscapedPath(), none.StatusCode(), none.ApplicationproblemJSON404.Code)
	return nil
}
