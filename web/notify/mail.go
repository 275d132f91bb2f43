// Package notify delivers the outbox's events: beneficiary emails and
// cash claim codes over SMTP or into the sandbox mailbox, and signed merchant notifications.
package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"payouts/rules"
	"payouts/templates"
)

// Mail is one email, as sent and as the sandbox mailbox keeps it.
type Mail struct {
	To         string    `json:"to"`
	Subject    string    `json:"subject"`
	Text       string    `json:"text"`
	HTML       string    `json:"html"`
	SentAt     time.Time `json:"sentAt"`
	PayoutID   int64     `json:"payoutId"`
	Kind       string    `json:"kind"` // the event kind: beneficiary.mail, cash.otp or link.mail
	EventID    string    `json:"eventId"`
	MerchantID string    `json:"merchantId"`
}

// Sender sends one mail.
type Sender interface {
	Send(ctx context.Context, m Mail) error
}

// Source reads what the deliverers need: payouts and merchants.
type Source interface {
	Payout(ctx context.Context, merchantID string, id int64) (*rules.Payout, error)
	Merchant(ctx context.Context, id string) (*rules.Merchant, error)
}

// Outcome is what a beneficiary mail event remembers of the outcome it announces, so that
// a late delivery still tells that outcome (a payout may go on from PROCESSED to REVERSED).
type Outcome struct {
	Status rules.Status `json:"status"`
	At     time.Time    `json:"at"`
	Code   string       `json:"code,omitempty"`
}

// OutcomeData is the data of a beneficiary mail event written with p's outcome.
func OutcomeData(p *rules.Payout) json.RawMessage {
	o := Outcome{Status: p.Status, At: p.StatusChangedAt}
	if n := len(p.Errors); n > 0 {
		o.Code = p.Errors[n-1].Code
	}
	b, _ := json.Marshal(o)
	return b
}

// Mailer delivers the email events: the outcome email and the cash claim code.
type Mailer struct {
	Source Source
	Sender Sender
	// OpenCode opens the sealed code of a cash.otp event (rules.OpenClaimCode's open).
	OpenCode func(sealed []byte, eventID string) ([]byte, error)
	// LinkURL is a payout link's address, which its emails carry: its token is derived
	// from the payout, never stored in the event.
	LinkURL func(ctx context.Context, m *rules.Merchant, p *rules.Payout) (string, error)
	Now     func() time.Time
}

// Deliver builds the event's email from the payout and merchant and sends it.
func (mr *Mailer) Deliver(ctx context.Context, ev rules.Event) error {
	p, err := mr.Source.Payout(ctx, ev.MerchantID, ev.PayoutID)
	if err != nil {
		return missing(err, "payout")
	}
	m, err := mr.Source.Merchant(ctx, ev.MerchantID)
	if err != nil {
		return missing(err, "merchant")
	}
	if p.Request.Beneficiary.Email == "" {
		return rules.Permanent(errors.New("the payout has no beneficiary.email"))
	}
	var ml Mail
	switch ev.Kind {
	case rules.EventBeneficiaryMail:
		o := Outcome{Status: p.Status, At: p.StatusChangedAt}
		if len(ev.Data) > 0 {
			if err := json.Unmarshal(ev.Data, &o); err != nil {
				return rules.Permanent(fmt.Errorf("outcome data: %w", err))
			}
		}
		ml, err = OutcomeMail(p, m, o)
	case rules.EventCashOTP:
		if p.Status.Final() || (!p.ClaimUntil.IsZero() && !mr.Now().Before(p.ClaimUntil)) {
			return rules.Permanent(fmt.Errorf("the cash claim already ended (%s)", p.Status))
		}
		code, oerr := rules.OpenClaimCode(ev, mr.OpenCode)
		if oerr != nil {
			return rules.Permanent(oerr)
		}
		ml, err = OTPMail(p, m, code)
	case rules.EventLinkMail:
		var d rules.LinkMailData
		if len(ev.Data) > 0 {
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return rules.Permanent(fmt.Errorf("link mail data: %w", err))
			}
		}
		if !rules.LinkWaiting(p, mr.Now()) {
			// Completed, cancelled or expired: nothing to ask of the beneficiary any more.
			// The event counts as done (it is no failure), and no mail goes out.
			return nil
		}
		if mr.LinkURL == nil {
			return rules.Permanent(errors.New("the mailer has no payout links"))
		}
		link, lerr := mr.LinkURL(ctx, m, p)
		if lerr != nil {
			return lerr
		}
		ml, err = LinkMail(p, m, link, d.Reminder)
	default:
		return rules.Permanent(fmt.Errorf("the mailer does not deliver %s events", ev.Kind))
	}
	if err != nil {
		return err
	}
	ml.EventID, ml.Kind, ml.PayoutID, ml.MerchantID = ev.ID, ev.Kind, p.ID, p.MerchantID
	return mr.Sender.Send(ctx, ml)
}

func missing(err error, what string) error {
	if errors.Is(err, rules.ErrNotFound) {
		return rules.Permanent(fmt.Errorf("the %s no longer exists", what))
	}
	return err
}

// utc5 is the local time of Colombia and Peru (no daylight saving time).
var utc5 = time.FixedZone("UTC-5", -5*60*60)

func placeName(country string) string {
	if country == "PER" {
		return "hora de Lima"
	}
	return "hora de Colombia"
}

func localWhen(t time.Time, country string) string {
	return t.In(utc5).Format("02/01/2006 a las 15:04") + " (" + placeName(country) + ")"
}

// OutcomeMail is the beneficiary's email about a payout's outcome: Spanish, with
// the amount, the merchant, the orderId and the outcome; a rejection says what to do.
func OutcomeMail(p *rules.Payout, m *rules.Merchant, o Outcome) (Mail, error) {
	b := p.Request.Beneficiary
	v := templates.MailOutcome{Name: b.Name, Merchant: m.Name, Amount: templates.FormatAmount(p.Currency, p.Amount),
		OrderID: p.OrderID, Success: rules.StageOf(o.Status) == rules.StageSuccess, When: localWhen(o.At, p.Country)}
	var subject string
	var text strings.Builder
	fmt.Fprintf(&text, "Hola %s,\n\n", v.Name)
	if v.Success {
		subject = fmt.Sprintf("Recibiste %s de %s", v.Amount, v.Merchant)
		fmt.Fprintf(&text, "%s te envió %s. El pago se completó con éxito el %s.\n\n", v.Merchant, v.Amount, v.When)
	} else {
		v.Reason, v.Advice = rejection(p, o, m.Name)
		subject = fmt.Sprintf("Tu pago de %s de %s no pudo completarse", v.Amount, v.Merchant)
		fmt.Fprintf(&text, "El pago de %s que %s te envió fue rechazado el %s.\n\nMotivo: %s\n\n", v.Amount, v.Merchant, v.When, v.Reason)
	}
	fmt.Fprintf(&text, "Comercio: %s\nMonto: %s\nNúmero de orden: %s\n", v.Merchant, v.Amount, v.OrderID)
	if !v.Success {
		text.WriteString("\n¿Qué puedes hacer?\n")
		for _, a := range v.Advice {
			fmt.Fprintf(&text, "- %s\n", a)
		}
	}
	text.WriteString("\nEste es un mensaje automático; por favor no respondas a este correo.\n")
	var html bytes.Buffer
	if err := templates.MailOutcomeHTML(v).Render(context.Background(), &html); err != nil {
		return Mail{}, err
	}
	return Mail{To: b.Email, Subject: subject, Text: text.String(), HTML: html.String()}, nil
}

// rejection says in Spanish why a payout was rejected and what the beneficiary can do.
func rejection(p *rules.Payout, o Outcome, merchant string) (string, []string) {
	contact := fmt.Sprintf("Comunícate con %s e indica el número de orden %s para que revise tu caso y, si corresponde, vuelva a enviar el pago.", merchant, p.OrderID)
	switch o.Status {
	case rules.StatusRejectedBank:
		if p.Channel == rules.ChannelCard {
			return "el emisor de tu tarjeta rechazó el abono.", []string{
				"Verifica con el banco emisor que tu tarjeta VISA esté activa y pueda recibir abonos.", contact}
		}
		return "el banco de destino rechazó la transferencia.", []string{
			"Verifica que los datos de tu cuenta (banco, número de cuenta o CCI) sean correctos y que la cuenta esté activa.", contact}
	case rules.StatusDenied:
		return "el pago fue denegado.", []string{"Consulta con tu banco si tu cuenta tiene alguna restricción.", contact}
	case rules.StatusNoBalance:
		return "el comercio no tenía saldo disponible para realizar el pago.", []string{contact}
	case rules.StatusExpired:
		if p.Channel == rules.ChannelCash {
			return "no se retiró el efectivo antes de la fecha de vencimiento del código.", []string{
				fmt.Sprintf("Pide a %s que te envíe un nuevo pago en efectivo e indica el número de orden %s.", merchant, p.OrderID)}
		}
		return "no se ingresaron los datos de la tarjeta a tiempo.", []string{
			fmt.Sprintf("Pide a %s un nuevo enlace de pago e indica el número de orden %s.", merchant, p.OrderID)}
	case rules.StatusReversed:
		return "tu banco devolvió el dinero al comercio.", []string{
			"Consulta con tu banco por qué se devolvió la transferencia.", contact}
	case rules.StatusDataError:
		return "los datos del pago no son válidos.", []string{
			"Verifica tus datos personales y los de tu cuenta con el comercio.", contact}
	}
	return "ocurrió un error al procesar el pago.", []string{contact}
}

// OTPMail is the email with a Colombia cash claim's one-time code.
func OTPMail(p *rules.Payout, m *rules.Merchant, code string) (Mail, error) {
	b := p.Request.Beneficiary
	v := templates.MailOTP{Name: b.Name, Merchant: m.Name, Amount: templates.FormatAmount(p.Currency, p.Amount),
		OrderID: p.OrderID, Code: code, Until: localWhen(p.ClaimUntil.Add(-time.Minute), p.Country)}
	text := fmt.Sprintf("Hola %s,\n\n%s te envió %s para retirar en efectivo.\n\n"+
		"Tu código de retiro es: %s\n\nPreséntalo junto con tu documento de identidad. Vence el %s; después de esa fecha el pago se cancela.\n"+
		"Número de orden: %s\n\nNo compartas este código con nadie. Nadie de %s te lo pedirá por teléfono ni por correo.\n\n"+
		"Este es un mensaje automático; por favor no respondas a este correo.\n",
		v.Name, v.Merchant, v.Amount, v.Code, v.Until, v.OrderID, v.Merchant)
	var html bytes.Buffer
	if err := templates.MailOTPHTML(v).Render(context.Background(), &html); err != nil {
		return Mail{}, err
	}
	subject := fmt.Sprintf("Tu código para retirar %s de %s", v.Amount, v.Merchant)
	return Mail{To: b.Email, Subject: subject, Text: text, HTML: html.String()}, nil
}

// Mailbox keeps the sandbox mailbox (the storage engine).
type Mailbox interface {
	// PutSandboxMail keeps a mail and, in the same transaction, marks its event delivered;
	// an event already delivered writes nothing (exactly once).
	PutSandboxMail(ctx context.Context, eventID string, raw []byte, at time.Time) error
	SandboxMails(ctx context.Context, limit int) ([][]byte, error)
}

// SandboxSender "sends" into the sandbox mailbox: the server runs without --smtp-url.
type SandboxSender struct {
	Box Mailbox
	Now func() time.Time
}

// Send keeps m in the mailbox.
func (s *SandboxSender) Send(ctx context.Context, m Mail) error {
	m.SentAt = s.Now().UTC()
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.Box.PutSandboxMail(ctx, m.EventID, raw, m.SentAt)
}

// SMTP sends over SMTP with go-mail (--smtp-url, --mail-from).
type SMTP struct {
	host       string
	port       int
	ssl        bool
	policy     gomail.TLSPolicy
	user, pass string
	from       string
	domain     string
	timeout    time.Duration
}

// NewSMTP reads an --smtp-url: smtp://[user:pass@]host[:port] speaks STARTTLS (port 587 by
// default; opportunistic without credentials, mandatory with them, since a password never
// crosses in clear; ?starttls=mandatory or ?starttls=opportunistic overrides);
// smtps://[user:pass@]host[:port] is implicit TLS (port 465 by default).
func NewSMTP(rawURL, from string) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("--smtp-url is not a URL")
	}
	s := &SMTP{host: u.Hostname(), timeout: 15 * time.Second}
	switch u.Scheme {
	case "smtp":
		s.port = 587
	case "smtps":
		s.port, s.ssl = 465, true
	default:
		return nil, fmt.Errorf("--smtp-url: the scheme is smtp:// or smtps://, not %q", u.Scheme)
	}
	if s.host == "" {
		return nil, errors.New("--smtp-url: no host")
	}
	if p := u.Port(); p != "" {
		if s.port, err = strconv.Atoi(p); err != nil || s.port < 1 || s.port > 65535 {
			return nil, errors.New("--smtp-url: the port is not a number from 1 to 65535")
		}
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	s.policy = gomail.TLSOpportunistic
	if s.user != "" {
		s.policy = gomail.TLSMandatory
	}
	switch q := u.Query().Get("starttls"); q {
	case "":
	case "mandatory":
		s.policy = gomail.TLSMandatory
	case "opportunistic":
		s.policy = gomail.TLSOpportunistic
	default:
		return nil, fmt.Errorf("--smtp-url: starttls is mandatory or opportunistic, not %q", q)
	}
	a, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("--mail-from %q is not an email address", from)
	}
	s.from = a.String()
	if _, d, ok := strings.Cut(a.Address, "@"); ok {
		s.domain = d
	}
	return s, nil
}

// Addr is host:port, for logs (never the credentials).
func (s *SMTP) Addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// Send sends m in one SMTP session. Its Message-ID derives from the event id, so that a
// mail sent again after a crash between sending and recording is recognisably the same.
func (s *SMTP) Send(ctx context.Context, m Mail) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return rules.Permanent(fmt.Errorf("from address: %w", err))
	}
	if err := msg.To(m.To); err != nil {
		return rules.Permanent(errors.New("the recipient is not a valid email address"))
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	if m.EventID != "" {
		sum := sha256.Sum256([]byte(m.EventID))
		msg.SetMessageIDWithValue(hex.EncodeToString(sum[:16]) + "@" + s.domain)
	} else {
		msg.SetMessageID()
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	opts := []gomail.Option{gomail.WithPort(s.port), gomail.WithTimeout(s.timeout), gomail.WithTLSPolicy(s.policy)}
	if s.ssl {
		opts = append(opts, gomail.WithSSL())
	}
	if s.user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.user), gomail.WithPassword(s.pass))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*s.timeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return smtpFailure(fmt.Errorf("smtp %s: %w", s.Addr(), err))
	}
	return nil
}
