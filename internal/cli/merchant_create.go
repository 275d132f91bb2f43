package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payouts/api"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/rules/merchants"
)

var merchantCreateCommand = &Command{
	Name:     "merchant create",
	Usage:    "--name N [flags]",
	Short:    "create a merchant offline; prints its credentials as JSON",
	Long:     "With the server stopped (bbolt), or beside running instances on PostgreSQL (--database).",
	Required: []string{"name"},
	Flags:    merchantCreateFlags,
}

func merchantCreateFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory")
	id := fs.String("id", "", "merchant id (default: the next number)")
	name := fs.String("name", "", "merchant name (required)")
	s := rules.DefaultSettings()
	fs.BoolVar(&s.PSP, "psp", false, "payment service provider: subMerchantInfo required")
	fs.BoolVar(&s.EmailNotifications, "email-notifications", false, "email beneficiaries the outcome")
	fs.BoolVar(&s.CardPayouts, "card-payouts", false, "Peru card push payments")
	fs.BoolVar(&s.CardOnFile, "card-on-file", true, "keep cards for later payouts")
	fs.BoolVar(&s.CashPayouts, "cash-payouts", false, "Colombia cash")
	fs.BoolVar(&s.RealTimePhoneAccount, "real-time-phone-account", false, "Colombia real-time by phone/account")
	fs.BoolVar(&s.RealTimeKey, "real-time-key", false, "Colombia Bre-B keys")
	fs.BoolVar(&s.PendingOnNoBalance, "pending-on-no-balance", false, "hold short payouts as PENDING_BALANCE")
	fs.StringVar(&s.NotificationURL, "notification-url", "", "where outcomes are POSTed, signed")
	origins := fs.String("allowed-origins", "", "comma-separated origins that may embed the card iframe")
	allowHTTP := fs.Bool("allow-private-notification-urls", false, "let --notification-url be http (development), as the server flag")
	database := fs.String("database", "", "a postgres:// URL to create the merchant there (default: the bbolt file in --data)")
	masterKeyFile := fs.String("master-key-file", "", "with --database: the instances' master key file")
	return func(ctx context.Context, env Env, _ []string) error {
		cfg, err := storeConfig("merchant create", *data, *database, *masterKeyFile)
		if err != nil {
			return err
		}
		if *origins != "" {
			s.AllowedOrigins = strings.Split(*origins, ",")
		}
		// The same checks as the admin API and the dashboard.
		if errs := rules.CheckSettings(s, *allowHTTP); len(errs) > 0 {
			return fmt.Errorf("merchant create: %s: %s", errs[0].Field, errs[0].Message)
		}
		// A bad --id is a usage error, refused before a store is opened (or made).
		if err := merchants.CheckNew(*id, *name); err != nil {
			var e *rules.Error
			if errors.As(err, &e) {
				flag := "--id " + strconv.Quote(*id)
				if e.Field == "name" {
					flag = "--name"
				}
				return usageErrorf("merchant create: %s: %s (code %s)", flag, e.Message, e.Code)
			}
			return usageErrorf("merchant create: %v", err)
		}
		db, sealer, err := server.Open(context.Background(), cfg)
		if err != nil {
			return err
		}
		defer db.Close(ctx)
		m, c, err := merchants.New(db, sealer).Create(ctx, *id, *name, s, time.Now())
		if err != nil {
			return err
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(api.NewMerchantView{MerchantID: m.ID, APIKey: c.APIKey, APISecret: c.APISecret, Name: m.Name, Settings: m.Settings})
	}
}
