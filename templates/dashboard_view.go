package templates

// The view models of the dashboard: server-rendered pages for operators, in
// Spanish and English, that work without JavaScript.

// Frame is what every dashboard page shows around its content.
type Frame struct {
	Lang     string // "es" (default) or "en"
	W        Words
	Title    string
	Active   string // the navigation entry of the page: overview, payouts, deliveries, merchants, mail
	Path     string // this page's path and query, to come back to after a language switch
	CSS      string // link of the stylesheet
	SignedIn bool
	Who      string // who is signed in: a user's name, or "admin token"
	Can      Perms  // what the signed-in actor may do: the forms it is not allowed are not shown
	Flash    string // a confirmation of the last action
	Error    string // why the last action failed
	// Script is the link of the page's one script (a progressive enhancement: the page
	// works without it); "" for none, and then the page allows no script at all.
	Script string
}

// HTMLLang is the page's language tag.
func (f Frame) HTMLLang() string {
	if f.Lang == "en" {
		return "en"
	}
	return "es"
}

// OtherLang is the language the switch offers.
func (f Frame) OtherLang() string {
	if f.Lang == "en" {
		return "es"
	}
	return "en"
}

// NavItem is one entry of the navigation.
type NavItem struct {
	Href, Label string
	Current     bool
}

// Nav is the navigation of the signed-in pages.
func (f Frame) Nav() []NavItem {
	items := []NavItem{
		{"/dashboard", f.W.S("nav.overview"), f.Active == "overview"},
		{"/dashboard/payouts", f.W.S("nav.payouts"), f.Active == "payouts"},
		{"/dashboard/deliveries", f.W.S("nav.deliveries"), f.Active == "deliveries"},
		{"/dashboard/merchants", f.W.S("nav.merchants"), f.Active == "merchants"},
		{"/dashboard/mail", f.W.S("nav.mail"), f.Active == "mail"},
	}
	return append(items, f.userNav()...)
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// KV is a labelled value.
type KV struct{ K, V string }

// LoginView is the sign-in page.
type LoginView struct {
	Frame
	OtherLangHref string
	Users         bool // named users can sign in: their form comes first
}

// OverviewView is /dashboard: the last 24 hours.
type OverviewView struct {
	Frame
	Since                                string // start of the window, UTC
	Created, Succeeded, Rejected, Active int
	ByCountry, ByChannel                 []CountRow
	Amounts                              []AmountRow
	Chart                                Chart
	OutboxDepth, DeadLetters             int
	Partial                              bool // more payouts than one page reads: the counts are a lower bound
	// Backups are the scheduled backups' targets whose last backup failed.
	Backups []BackupWarning
	// KeyFiles are the key and secret files that others than their owner may read.
	KeyFiles []KeyFileWarning
}

// KeyFileWarning is a key or secret file that others than its owner may read: what it is
// (a flag or the key's name), its path, its mode in octal.
type KeyFileWarning struct {
	What, Path, Mode string
}

// BackupWarning is a failed scheduled backup: where it was going, when it failed, why, and
// the newest good backup there.
type BackupWarning struct {
	Where, FailedAt, Error, LastGood string
}

// CountRow counts payouts of one country or channel by how they stand.
type CountRow struct {
	Key                                  string
	Created, Succeeded, Rejected, Active int
}

// AmountRow sums the amounts of one currency by how the payouts stand.
type AmountRow struct {
	Currency, Created, Succeeded, Rejected, Active string
}

// Chart is a server-rendered SVG bar chart of payouts per hour, stacked by stage.
type Chart struct {
	Width, Height int
	Bars          []Bar
	XLabels       []AxisLabel
	YLabels       []AxisLabel
	Desc          string
	Legend        []LegendItem
}

// Bar is one rectangle of the chart.
type Bar struct {
	X, Y, W, H int
	Class      string
	Title      string
}

// AxisLabel is one label of an axis.
type AxisLabel struct {
	X, Y int
	Text string
}

// LegendItem names a colour of the chart.
type LegendItem struct{ Class, Label string }

// PayoutsView is /dashboard/payouts.
type PayoutsView struct {
	Frame
	F                                             PayoutFilters
	Merchants, Stages, Statuses, Countries, Chans []Option
	Rows                                          []PayoutRow
	NextURL, CSVURL                               string
}

// PayoutFilters are the filters of the payouts list, as typed.
type PayoutFilters struct {
	Merchant, OrderID, Stage, Status, Country, Channel, From, To string
}

// PayoutRow is one payout in a list.
type PayoutRow struct {
	ID, Href, OrderID, Merchant, MerchantHref, Country, Amount, Currency string
	Stage, StageClass, Status, Channel, Bank, Created, Changed           string
}

// PayoutDetailView is /dashboard/payouts/{id}.
type PayoutDetailView struct {
	Frame
	P                      PayoutRow
	Errors                 []KV
	Request                []KV
	Timeline               []TimelineItem
	Movements              []Movement
	Deliveries             []DeliveryRow
	Sandbox                bool
	CanSettle, CanReverse  bool
	RejectStatuses         []Option
	SimulateURL, ResendURL string
	Actions                PayoutActions // Cancel, the card form
	Link                   *LinkPanel    // a payout link's state; nil for any other payout
}

// TimelineItem is one transition of a payout.
type TimelineItem struct {
	At, Stage, StageClass, Status, Code, Note string
}

// Movement is one change a payout made to its merchant's balance.
type Movement struct {
	At, What, Available, Balance string
}

// DeliveryRow is one outbox event.
type DeliveryRow struct {
	ID, Kind, PayoutID, PayoutHref, Merchant string
	State, StateLabel, Attempts, LastError   string
	Next, Delivered, Created                 string
	CanResend                                bool
	Note                                     string
	EventHref                                string // the logged event with its attempts (merchant notifications)
}

// DeliveriesView is /dashboard/deliveries.
type DeliveriesView struct {
	Frame
	Merchant, Kind, State    string
	Merchants, Kinds, States []Option
	Rows                     []DeliveryRow
	ResendURL, Back          string
}

// MerchantsView is /dashboard/merchants.
type MerchantsView struct {
	Frame
	Rows []MerchantRow
	Form MerchantForm
}

// MerchantRow is one merchant in the list.
type MerchantRow struct {
	ID, Href, Name, Created string
	Balances                []string
}

// MerchantForm is the create and edit form of a merchant.
type MerchantForm struct {
	ID, Name        string
	Settings        []SettingBox
	NotificationURL string
	AllowedOrigins  string
	Errors          map[string]string // field → message
}

// Err is a field's message.
func (f MerchantForm) Err(field string) string { return f.Errors[field] }

// SettingBox is one switch of a merchant.
type SettingBox struct {
	Name, Label string
	Checked     bool
}

// MerchantView is /dashboard/merchants/{id}.
type MerchantView struct {
	Frame
	ID, Name, Created string
	Creds             *Creds
	Form              MerchantForm
	Balances          []BalanceRow
	Fund              FundForm
	PayoutsHref       string
	Webhooks          *WebhooksPanel // notifications, inbox and delivery chaos
	// Sandbox shows the merchant's scripted outcomes and their timelines.
	Sandbox bool
	Scripts []ScriptRow
	Keys    []KeyRow // the live API keys, ids only
	// Certify shows the receiver certification form (sandbox, a manager); NotificationURL is
	// its default target.
	Certify         bool
	NotificationURL string
}

// Creds are a new merchant's credentials, shown once.
type Creds struct{ APIKey, APISecret string }

// BalanceRow is one balance.
type BalanceRow struct{ Country, Currency, Available, Balance string }

// FundForm funds a balance.
type FundForm struct {
	Pair, Amount, Error string
	Pairs               []Option
}

// MailView is /dashboard/mail.
type MailView struct {
	Frame
	To, PayoutID string
	Mails        []MailRow
	SandboxOff   bool
}

// MailRow is one sandbox mail.
type MailRow struct {
	To, Subject, Text, SentAt, Kind, PayoutID, PayoutHref string
}

// DocsView is /docs.
type DocsView struct {
	Script, SpecURL, YAMLURL, JSONURL string
}
