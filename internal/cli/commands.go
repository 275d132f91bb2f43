package cli

// Commands is the command table: every command of the binary, in the order `payouts help`
// lists them. Dispatch, help, usage errors and docs/reference/cli.md come from it alone.
func Commands() []*Command { return commands }

var commands []*Command

// The table is filled at init because help, one of its commands, lists the table.
func init() {
	commands = []*Command{
		serveCommand,
		merchantCreateCommand,
		merchantKeysCommand,
		userAddCommand,
		signCommand,
		listenCommand,
		certifyReceiverCommand,
		certifyClientCommand,
		certifyVerifyCommand,
		backupCommand,
		restoreCommand,
		seedCommand,
		migrateCommand,
		keysCommand,
		notificationKeyRotateCommand,
		checkCommand,
		reconcileCommand,
		versionCommand,
		helpCommand,
	}
}
