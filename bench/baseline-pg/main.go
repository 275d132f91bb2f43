// Command baseline-pg is the bare stack on PostgreSQL (chi + pgx: no rules, no auth, no
// lifecycle), the reference the pg figure holds the payouts server on PostgreSQL against, in
// the same run and through the same network path to the database. POST /api/v1/{m}/payouts
// decodes a payout body and, in one transaction, inserts it under a unique (merchant,
// orderId) and takes its amount from the merchant's balance row (an upsert whose CHECK
// (available >= 0) refuses an overdraft), the least a ledger that cannot go negative must
// do; 201 JSON, 200 for a repeated orderId.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

type payoutReq struct {
	Country     string          `json:"country"`
	Amount      int64           `json:"amount"`
	Currency    string          `json:"currency"`
	OrderID     string          `json:"orderId"`
	Description string          `json:"description"`
	Beneficiary json.RawMessage `json:"beneficiary"`
	Destination json.RawMessage `json:"destination"`
}

const schema = `
DROP TABLE IF EXISTS bare_payouts, bare_balances;
CREATE TABLE bare_payouts (id bigserial PRIMARY KEY, merchant text NOT NULL, order_id text NOT NULL,
  amount bigint NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant, order_id));
CREATE TABLE bare_balances (merchant text PRIMARY KEY, available bigint NOT NULL CHECK (available >= 0));`

func main() {
	addr := flag.String("addr", "127.0.0.1:18090", "listen address")
	url := flag.String("db", "postgres://postgres@127.0.0.1:5432/postgres", "database URL (its bare_ tables are dropped and made again)")
	conns := flag.Int("conns", 64, "pool size")
	flag.Parse()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(*url)
	if err != nil {
		log.Fatal(err)
	}
	cfg.MaxConns = int32(*conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		log.Fatal(err)
	}
	r := chi.NewRouter()
	r.Get("/hello", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) })
	r.Post("/api/v1/{merchant}/payouts", func(w http.ResponseWriter, r *http.Request) {
		var p payoutReq
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		m := chi.URLParam(r, "merchant")
		body, _ := json.Marshal(p)
		var id int64
		dup := false
		err := pgx.BeginFunc(r.Context(), pool, func(tx pgx.Tx) error {
			err := tx.QueryRow(r.Context(), `INSERT INTO bare_payouts (merchant, order_id, amount, body) VALUES ($1,$2,$3,$4)
				ON CONFLICT (merchant, order_id) DO NOTHING RETURNING id`, m, p.OrderID, p.Amount, body).Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				dup = true
				return tx.QueryRow(r.Context(), `SELECT id FROM bare_payouts WHERE merchant=$1 AND order_id=$2`, m, p.OrderID).Scan(&id)
			}
			if err != nil {
				return err
			}
			tag, err := tx.Exec(r.Context(), `INSERT INTO bare_balances (merchant, available) VALUES ($1, 900000000000000 - $2)
				ON CONFLICT (merchant) DO UPDATE SET available = bare_balances.available - $2`, m, p.Amount)
			if err == nil && tag.RowsAffected() != 1 {
				err = errors.New("no balance")
			}
			return err
		})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if dup {
			w.WriteHeader(200)
		} else {
			w.WriteHeader(201)
		}
		json.NewEncoder(w).Encode(map[string]any{
			"payout": map[string]any{"id": id, "country": p.Country, "amount": p.Amount, "currency": p.Currency, "orderId": p.OrderID},
			"output": map[string]any{"stage": "IN_PROGRESS", "status": "CREATED", "statusChangeDateTime": time.Now().UTC().Format(time.RFC3339Nano)},
		})
	})
	log.Fatal(http.ListenAndServe(*addr, r))
}
