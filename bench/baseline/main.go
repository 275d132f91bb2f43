// Command baseline is the bare stack on bbolt (chi + bbolt: no rules, no auth, no lifecycle),
// the reference the creates, reads and million figures hold the payouts server against, in
// the same run on the same machine. /hello returns a fixed JSON; POST /api/v1/{m}/payouts
// decodes a payout body, writes it to bbolt (db.Batch, fsync per batch) with an orderId
// index, and returns 201 JSON; GET /api/v1/{m}/payouts/{id} reads the record back by key;
// GET /metrics says what its runtime has allocated and how many payouts it created.
//
// With -key and -secret it also does what every request to the payouts server pays for
// before its own work: the signature is checked as the service checks it (the API key, the
// timestamp's window, the HMAC over method, path, timestamp and the body's hash), and each
// request is logged as one JSON line on standard error, as the service's access log does.
// The difference to the payouts server is then the service's own work alone.
package main

import (
	"bytes"
	"crypto/hmac"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	bolt "go.etcd.io/bbolt"

	"payouts/bench/internal/sign"
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

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	path := flag.String("db", "baseline.db", "database file (removed first)")
	nosync := flag.Bool("nosync", false, "do not fsync (not for measuring: the service fsyncs)")
	key := flag.String("key", "", "with -secret: the API key every /api request must carry")
	secret := flag.String("secret", "", "check every /api request's signature with this secret and log each request, as the payouts server does")
	flag.Parse()
	os.Remove(*path)
	db, err := bolt.Open(*path, 0600, &bolt.Options{NoSync: *nosync})
	if err != nil {
		log.Fatal(err)
	}
	db.MaxBatchDelay = 2 * time.Millisecond
	db.Update(func(tx *bolt.Tx) error {
		tx.CreateBucketIfNotExists([]byte("payouts"))
		tx.CreateBucketIfNotExists([]byte("orders"))
		return nil
	})
	r := chi.NewRouter()
	if *secret != "" {
		r.Use(signedAndLogged(*key, *secret, slog.New(slog.NewJSONHandler(os.Stderr, nil))))
	}
	var created atomic.Int64
	r.Get("/metrics", func(w http.ResponseWriter, r *http.Request) { writeMetrics(w, created.Load()) })
	r.Get("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})
	r.Post("/api/v1/{merchant}/payouts", func(w http.ResponseWriter, r *http.Request) {
		var p payoutReq
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		m := chi.URLParam(r, "merchant")
		var id uint64
		var dup bool
		err := db.Batch(func(tx *bolt.Tx) error {
			ob := tx.Bucket([]byte("orders"))
			key := []byte(m + "/" + p.OrderID)
			if v := ob.Get(key); v != nil {
				dup = true
				id = binary.BigEndian.Uint64(v)
				return nil
			}
			pb := tx.Bucket([]byte("payouts"))
			id, _ = pb.NextSequence()
			k := make([]byte, 8)
			binary.BigEndian.PutUint64(k, id)
			buf, _ := json.Marshal(p)
			if err := pb.Put(k, buf); err != nil {
				return err
			}
			return ob.Put(key, k)
		})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if dup {
			w.WriteHeader(200)
		} else {
			created.Add(1)
			w.WriteHeader(201)
		}
		json.NewEncoder(w).Encode(map[string]any{
			"payout": map[string]any{"id": id, "country": p.Country, "amount": p.Amount, "currency": p.Currency, "orderId": p.OrderID},
			"output": map[string]any{"stage": "CREATED", "status": "PENDING", "statusChangeDateTime": time.Now().UTC().Format(time.RFC3339Nano)},
		})
	})
	// GET by id: the stored record, as the reference for reads.
	r.Get("/api/v1/{merchant}/payouts/{id}", func(w http.ResponseWriter, r *http.Request) {
		var id uint64
		for _, c := range chi.URLParam(r, "id") {
			if c < '0' || c > '9' {
				http.Error(w, "bad id", 400)
				return
			}
			id = id*10 + uint64(c-'0')
		}
		k := make([]byte, 8)
		binary.BigEndian.PutUint64(k, id)
		var rec []byte
		db.View(func(tx *bolt.Tx) error {
			if v := tx.Bucket([]byte("payouts")).Get(k); v != nil {
				rec = append([]byte(nil), v...)
			}
			return nil
		})
		if rec == nil {
			http.Error(w, "not found", 404)
			return
		}
		var p payoutReq
		json.Unmarshal(rec, &p)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"payout": map[string]any{"id": id, "country": p.Country, "amount": p.Amount, "currency": p.Currency, "orderId": p.OrderID,
				"description": p.Description, "beneficiary": p.Beneficiary, "destination": p.Destination},
			"output": map[string]any{"stage": "IN_PROGRESS", "status": "CREATED", "statusChangeDateTime": time.Now().UTC().Format(time.RFC3339Nano)},
		})
	})
	log.Fatal(http.ListenAndServe(*addr, r))
}

// writeMetrics writes what the runtime has allocated and the payouts created, under the
// names the payouts server's /metrics gives them, so that the bench reads both alike: the
// bare stack's garbage a create beside the server's a payout. A create is all a payout is
// here, so each created is finished.
func writeMetrics(w io.Writer, created int64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}}
	metrics.Read(s)
	fmt.Fprintf(w, "go_memstats_alloc_bytes_total %d\n", s[0].Value.Uint64())
	// as client_golang counts it: the tiny allocations are not in /gc/heap/allocs:objects
	fmt.Fprintf(w, "go_memstats_mallocs_total %d\n", s[1].Value.Uint64()+s[2].Value.Uint64())
	fmt.Fprintf(w, "payouts_created_total %d\npayouts_finished_total %d\n", created, created)
}

// signatureWindow is how far a request's timestamp may be from the clock, as the service
// allows (api.SignatureWindow; the bare stack imports nothing of the service).
const signatureWindow = 5 * time.Minute

// signedAndLogged refuses an /api request that is not signed with secret under key (401),
// and logs every request as one JSON line with what the service's access log line has.
func signedAndLogged(key, secret string, logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			if !strings.HasPrefix(r.URL.Path, "/api/") || signed(r, key, secret) {
				next.ServeHTTP(ww, r)
			} else {
				http.Error(ww, "the signature is not valid", http.StatusUnauthorized)
			}
			route := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				route = rc.RoutePattern()
			}
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", route),
				slog.Int("status", ww.Status()), slog.Duration("duration", time.Since(start)),
				slog.String("merchant_id", chi.URLParam(r, "merchant")), slog.String("remote", r.RemoteAddr))
		})
	}
}

// signed checks r as the service does (bench/internal/sign says how it is signed); it reads
// the body for its hash and leaves it for the handler.
func signed(r *http.Request, key, secret string) bool {
	if r.Header.Get(sign.Header) != key {
		return false
	}
	q := r.URL.Query()
	ms, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
	if err != nil {
		return false
	}
	at := time.UnixMilli(ms)
	if d := time.Since(at); d > signatureWindow || d < -signatureWindow {
		return false
	}
	var body []byte
	if r.Body != nil {
		if body, err = io.ReadAll(r.Body); err != nil {
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return hmac.Equal([]byte(sign.Signature(secret, r.Method, r.URL.Path, body, at)), []byte(q.Get("signature")))
}
