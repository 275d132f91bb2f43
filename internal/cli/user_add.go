package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"payouts/api"
	"payouts/internal/server"
	"payouts/rules"
)

// userAddCommand is `payouts user add`: a dashboard user created offline (the server stopped, or on
// PostgreSQL beside it), printed as JSON with its one-time set-up link — how the first
// operator gets in without the admin token. The audit log names the CLI as its actor.
var userAddCommand = &Command{
	Name:     "user add",
	Usage:    "--email E --role R [flags]",
	Short:    "create a dashboard user offline; prints its one-time set-up link",
	Long:     "With the server stopped (bbolt), or beside running instances on PostgreSQL (--database); prints the user with its link as JSON.",
	Required: []string{"email", "role"},
	Flags:    userAddFlags,
}

func userAddFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory")
	database := fs.String("database", "", "a postgres:// URL (default: the bbolt file in --data)")
	name := fs.String("name", "", "the user's name (default: the email)")
	email := fs.String("email", "", "the user's email (required; unique)")
	role := fs.String("role", "", "operator, or maker, checker or viewer of --merchant (required)")
	merchant := fs.String("merchant", "", "the merchant of a maker, checker or viewer")
	publicURL := fs.String("public-url", "", "the server's public URL, for the link (default: the one the server derives from $PAYOUTS_HTTPS or $PAYOUTS_ADDR, else http://127.0.0.1:8080)")
	return func(ctx context.Context, env Env, _ []string) error {
		if *name == "" {
			*name = *email
		}
		// A bad role or email is a usage error, refused before a store is opened (or made);
		// whether --merchant exists is known only with the store.
		if err := rules.CheckNewUser(rules.NewUser{Name: strings.TrimSpace(*name), Email: strings.TrimSpace(*email), Role: rules.Role(*role),
			MerchantID: *merchant}, func(string) bool { return true }); err != nil {
			var p *rules.Problem
			var e *rules.Error
			if errors.As(err, &p) && len(p.Errors) > 0 {
				e = p.Errors[0]
			}
			if e != nil || errors.As(err, &e) {
				return usageErrorf("user add: --%s: %s (code %s)", e.Field, e.Message, e.Code)
			}
			return usageErrorf("user add: %v", err)
		}
		cfg, err := storeConfig("user add", *data, *database, "")
		if err != nil {
			return err
		}
		db, _, err := server.Open(context.Background(), cfg)
		if err != nil {
			return err
		}
		defer db.Close(ctx)
		ua := &rules.UserAdmin{Store: db, Now: time.Now, MerchantExists: func(id string) bool { _, err := db.Merchant(ctx, id); return err == nil }}
		host, _ := os.Hostname()
		ctx = rules.WithAudit(ctx, &rules.Auditor{Log: db, Now: time.Now}, rules.Actor{Principal: "cli", Name: "payouts user add"}, host, "payouts-cli")
		u, token, err := ua.Create(ctx, rules.NewUser{Name: *name, Email: *email, Role: rules.Role(*role), MerchantID: *merchant})
		if err != nil {
			var p *rules.Problem
			var e *rules.Error
			switch {
			case errors.As(err, &p):
				for _, e := range p.Errors {
					fmt.Fprintf(env.Stderr, "user add: %s: %s (%s)\n", e.Field, e.Message, e.Code)
				}
				return fmt.Errorf("user add: the user is invalid")
			case errors.As(err, &e):
				return fmt.Errorf("user add: %s: %s (%s)", e.Field, e.Message, e.Code)
			}
			return fmt.Errorf("user add: %w", err)
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(api.UserWithLink(u, setupBase(*publicURL, env.Getenv), token))
	}
}

// setupBase is the address the set-up link names: --public-url (or $PAYOUTS_PUBLIC_URL, as
// the server reads it); else the one the server derives from its own variables, https and
// the first of $PAYOUTS_HTTPS, or http and $PAYOUTS_ADDR, so that a server configured by its
// variables and this command agree; else the server's default address.
func setupBase(publicURL string, getenv func(string) string) string {
	if publicURL != "" {
		return strings.TrimRight(publicURL, "/")
	}
	addr := getenv("PAYOUTS_ADDR")
	host, port, err := net.SplitHostPort(addr)
	if names := getenv("PAYOUTS_HTTPS"); names != "" {
		name, _, _ := strings.Cut(names, ",")
		if err == nil && port != "443" {
			return "https://" + net.JoinHostPort(strings.TrimSpace(name), port)
		}
		return "https://" + strings.TrimSpace(name)
	}
	if err != nil {
		return "http://127.0.0.1:8080"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
