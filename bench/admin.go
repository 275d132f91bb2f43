package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payouts/bench/internal/sign"
)

// benchToken is the admin token of the bbolt runs (the PostgreSQL runs use `payouts keys`').
const benchToken = "bench-admin-token-0123456789abcdef"

// merchant is a merchant the runner made, with its credentials.
type merchant struct{ ID, Key, Secret string }

// flag is how the load generator's -merchants takes it.
func (m merchant) flag() string { return m.ID + ":" + m.Key + ":" + m.Secret }

func merchantsFlag(ms []merchant) string {
	f := make([]string, len(ms))
	for i, m := range ms {
		f[i] = m.flag()
	}
	return strings.Join(f, ",")
}

// fundedMerchants creates n merchants through the admin API of the server at base and funds
// each in PEN far beyond what any run spends, as
// ../shared/bench/ratio.sh and ratio-pg.sh do.
func fundedMerchants(ctx context.Context, base, token string, n int) ([]merchant, error) {
	ms := make([]merchant, n)
	for i := range ms {
		name := "Bench"
		if n > 1 {
			name = "Bench " + strconv.Itoa(i+1)
		}
		var created struct {
			MerchantID string `json:"merchantId"`
			APIKey     string `json:"apiKey"`
			APISecret  string `json:"apiSecret"`
		}
		if err := adminPost(ctx, base, token, "/admin/v1/merchants", `{"name":"`+name+`","settings":{}}`, &created); err != nil {
			return nil, fmt.Errorf("no merchant: the admin API failed: %w", err)
		}
		if created.MerchantID == "" || created.APIKey == "" || created.APISecret == "" {
			return nil, fmt.Errorf("no merchant: the admin API answered no credentials")
		}
		ms[i] = merchant{created.MerchantID, created.APIKey, created.APISecret}
		body := `{"country":"PER","currency":"PEN","amount":900000000000000}`
		if err := adminPost(ctx, base, token, "/admin/v1/merchants/"+ms[i].ID+"/balance", body, nil); err != nil {
			return nil, fmt.Errorf("funding failed: %w", err)
		}
	}
	return ms, nil
}

var client = &http.Client{Timeout: 10 * time.Second}

func adminPost(ctx context.Context, base, token, path, body string, answer any) error {
	req, err := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return do(req, answer)
}

func do(req *http.Request, answer any) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", req.Method, req.URL.Path, resp.Status, bytes.TrimSpace(b))
	}
	if answer == nil {
		return nil
	}
	if err := json.Unmarshal(b, answer); err != nil {
		return fmt.Errorf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	return nil
}

// firstPayout creates one payout of m, signed, and returns its id: the payouts the load
// generator creates next take the ids after it, which the reads then ask for. (A seeded
// store's payouts hold the ids before it.)
func firstPayout(ctx context.Context, base string, m merchant) (int, error) {
	path := "/api/v1/" + m.ID + "/payouts"
	body := []byte(`{"country":"PER","amount":150000,"currency":"PEN","orderId":"bench-first","description":"bench","beneficiary":{"name":"Ana","lastName":"Rojas","email":"ana.rojas@correo.pe","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`)
	req, err := http.NewRequestWithContext(ctx, "POST", base+path+"?"+sign.Query(m.Secret, "POST", path, body, time.Now()), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sign.Header, m.Key)
	var created struct {
		Payout struct {
			ID json.Number `json:"id"`
		} `json:"payout"`
	}
	if err := do(req, &created); err != nil {
		return 0, fmt.Errorf("the first payout: %w", err)
	}
	id, err := strconv.Atoi(created.Payout.ID.String())
	if err != nil {
		return 0, fmt.Errorf("the first payout: id %q: %v", created.Payout.ID, err)
	}
	return id, nil
}
