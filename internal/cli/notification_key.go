package cli

import (
	"context"
	"flag"
	"fmt"

	"payouts/internal/server"
)

// notificationKeyRotateCommand is `payouts notification-key rotate`: the one way to replace
// the key that signs merchant notifications. A server never makes a new one for a store that
// used one (merchants pinned its certificate); this installs one on purpose, records its
// fingerprint, and says what merchants must do.
var notificationKeyRotateCommand = &Command{
	Name:  "notification-key rotate",
	Usage: "[--data DIR | --database URL --notification-key-file FILE] [--from FILE]",
	Short: "replace the key that signs merchant notifications, on purpose (merchants must fetch the new certificate)",
	Long: "On a data directory the server must be stopped; the old key is kept beside the new one as " +
		"notification-key.pem.retired-<fingerprint>. Notifications carry one signature: from the next start every " +
		"notification, retries included, is signed with the new key only. The command prints the new certificate, " +
		"to send merchants before the restart.",
	ReadsStore: true,
	Flags:      notificationKeyRotateFlags,
}

func notificationKeyRotateFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory whose notification-key.pem to replace (with the server stopped)")
	database := fs.String("database", "", "a postgres:// URL: record the new key in this database instead")
	keyFile := fs.String("notification-key-file", "", "the key file the servers are given (required with --database; default: notification-key.pem in --data); the old key in it is moved beside it")
	from := fs.String("from", "", "install the RSA key in this PEM file (e.g. a retired one) instead of a new one")
	return func(ctx context.Context, env Env, _ []string) error {
		cfg, err := storeConfig("notification-key rotate", *data, *database, "")
		if err != nil {
			return err
		}
		if cfg.OnPostgres() && *keyFile == "" {
			return usageErrorf("notification-key rotate: with --database, --notification-key-file FILE is required (the file every instance is given)")
		}
		r, err := server.RotateNotificationKey(ctx, cfg, *keyFile, *from)
		if err != nil {
			return fmt.Errorf("notification-key rotate: %w", err)
		}
		old := "none was recorded"
		if r.Old != "" {
			old = "fingerprint " + r.Old
		}
		fmt.Fprintf(env.Stdout, "notification key rotated: %s holds the new key (fingerprint %s), recorded in place of the old one (%s).\n",
			r.Path, r.New, old)
		if r.Retired != "" {
			fmt.Fprintf(env.Stdout, "The old key is kept in %s (`--from` it to go back).\n", r.Retired)
		}
		if cfg.OnPostgres() {
			fmt.Fprintf(env.Stdout, "Copy %s to every instance and restart each with --notification-key-file: until its restart an "+
				"instance still signs with the old key, and an instance started with the old key is refused.\n", r.Path)
		} else {
			fmt.Fprintln(env.Stdout, "Start the server again: it signs with the new key.")
		}
		fmt.Fprint(env.Stdout, "What merchants must do: a notification carries one signature, so from the restart every notification "+
			"(retries of those queued before included) is signed with the new key only, and the old certificate verifies none of them. "+
			"Each merchant must verify with the new certificate, GET /api/v1/notifications/certificate (or the public key, "+
			"GET /api/v1/notifications/public-key), which the server serves from the restart. The only overlap is on the "+
			"merchants' side: send them the certificate below before the restart, and have them accept either certificate "+
			"until then.\n")
		_, err = env.Stdout.Write(r.Certificate)
		return err
	}
}
