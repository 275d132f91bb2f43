// Package templates holds the templ components of the HTML pages (the card form and
// the dashboard) and their small view models; *_templ.go files are generated and committed.
package templates

import (
	"strconv"
	"time"
)

// Page is what every card page shows: the merchant, the amount and the language.
type Page struct {
	Lang         string // "es" (default, es-PE) or "en"
	T            *Texts
	Static       func(name string) string // absolute URL of a static file
	MerchantName string
	LogoURL      string // https, or "" for the merchant's name as text
	Amount       string // "S/ 1,000.00"
	OtherLang    string // URL of this page in the other language ("" to hide the switch)
	// Referrer is the page's referrer policy: no-referrer (""), as its links carry the
	// session token; the srcdoc rendition, which runs in the merchant's origin, says
	// strict-origin so that its form post carries an Origin header (no-referrer would send
	// "Origin: null" on a cross-origin post) while a Referer never holds more than an origin.
	Referrer string
	// Script is the page's configuration for static/card.js (a JSON script element, not code).
	Script Script
}

// ReferrerPolicy is the page's referrer policy.
func (p Page) ReferrerPolicy() string {
	if p.Referrer == "" {
		return "no-referrer"
	}
	return p.Referrer
}

// Script configures card.js; it is rendered as JSON, never as code.
type Script struct {
	Mode      string `json:"mode"` // form, result, expired, locked, invalid
	SelfURL   string `json:"selfUrl,omitempty"`
	StatusURL string `json:"statusUrl,omitempty"`
	// RemainingMs is the time left on the form when it was rendered (the browser's clock may
	// be off; the countdown runs from page load).
	RemainingMs int64    `json:"remainingMs,omitempty"`
	Targets     []string `json:"targets,omitempty"` // postMessage target origins
	TimeoutURL  string   `json:"timeoutUrl,omitempty"`
	Message     *Message `json:"message,omitempty"` // posted to the parent once final
	Texts       JSTexts  `json:"texts"`
}

// Message is the event the page posts to its parent (wire topics).
type Message struct {
	Topic string      `json:"topic"`
	Data  MessageData `json:"data"`
}

// MessageData is the data of a Message.
type MessageData struct {
	PayoutID int64  `json:"payoutId"`
	OrderID  string `json:"orderId"`
	Stage    string `json:"stage"`
	Status   string `json:"status"`
}

// JSTexts are the few strings card.js shows.
type JSTexts struct {
	Processing string `json:"processing"`
	NotVisa    string `json:"notVisa"`
	Visa       string `json:"visa"`
	OneMinute  string `json:"oneMinute"`
}

// CardForm is the form page.
type CardForm struct {
	Page
	Action       string // absolute URL the form posts to
	ExpiresAt    time.Time
	Remaining    string // "14:59" at render time
	SecondsLeft  int
	SavedCard    string // "VISA •••• 1111" when a card on file is offered
	UseSaved     bool   // the saved card is selected
	Holder       string // re-shown after an error; the card number and CVV never are
	Expiry       string
	Errors       map[string]string // field → message
	AttemptsLeft int
	ShowAttempts bool
}

// Err is the message of a field, or "".
func (f CardForm) Err(field string) string { return f.Errors[field] }

// ErrorList is the errors in the order of the fields.
func (f CardForm) ErrorList() []FieldError {
	var out []FieldError
	for _, k := range []string{FieldChoice, FieldHolder, FieldPAN, FieldExpiry, FieldCVV} {
		if m := f.Errors[k]; m != "" {
			out = append(out, FieldError{Field: k, Message: m})
		}
	}
	return out
}

// FieldError is one line of the error summary.
type FieldError struct{ Field, Message string }

// Form field names (and element ids).
const (
	FieldChoice = "card"
	FieldHolder = "holder"
	FieldPAN    = "pan"
	FieldExpiry = "expiry"
	FieldCVV    = "cvv"
)

// Result is every page after the form: progress, success, failure, expiry, lockout, an
// invalid link.
type Result struct {
	Page
	State      string // processing, success, failed, expired, locked, invalid
	Title      string
	Detail     string
	Card       string // "VISA •••• 1111"
	TimeoutURL string // the expiry page's way back to the merchant
	Refresh    int    // seconds of the no-JavaScript refresh while processing (0: none)
}

// Texts are the words of the pages in one language.
type Texts struct {
	HTMLLang, Title, YouReceive, From, TimeLeft, ExpiresIn                            string
	SavedLegend, UseSaved, UseNew                                                     string
	Holder, HolderHint, PAN, PANHint, Expiry, ExpiryHint, CVV, CVVHint, Submit, Other string
	ErrorsTitle, AttemptsLeft, Secure, VisaOnly, Back, OtherLangName                  string
	Processing, ProcessingDetail, Success, SuccessDetail, Failed, FailedDetail        string
	Expired, ExpiredDetail, Locked, LockedDetail, Invalid, InvalidDetail, CardLabel   string
	NotVisa, Visa, OneMinute                                                          string
	Errors                                                                            map[string]string
}

// Spanish (Peru) is the default.
var es = &Texts{
	HTMLLang: "es-PE", Title: "Recibe tu pago", YouReceive: "Vas a recibir", From: "de",
	TimeLeft: "Tiempo restante", ExpiresIn: "Este enlace vence a las",
	SavedLegend: "¿A qué tarjeta enviamos el pago?", UseSaved: "Usar mi tarjeta", UseNew: "Usar otra tarjeta",
	Holder: "Nombre del titular", HolderHint: "Tal como aparece en la tarjeta",
	PAN: "Número de tarjeta", PANHint: "Solo tarjetas VISA (empiezan con 4)",
	Expiry: "Vencimiento", ExpiryHint: "MM/AA", CVV: "CVV", CVVHint: "3 dígitos al reverso",
	Submit: "Recibir pago", Other: "English",
	ErrorsTitle: "Revisa los datos de tu tarjeta:", AttemptsLeft: "Intentos restantes:",
	Secure:   "Conexión segura. Tus datos se cifran y no se comparten con el comercio.",
	VisaOnly: "Aceptamos tarjetas VISA de crédito, débito y prepago.", Back: "Volver al comercio",
	OtherLangName: "English",
	Processing:    "Procesando tu pago…", ProcessingDetail: "Estamos enviando el dinero a tu tarjeta. No cierres esta ventana.",
	Success: "¡Pago enviado!", SuccessDetail: "El dinero ya está en camino a tu tarjeta.",
	Failed: "No pudimos completar el pago", FailedDetail: "El banco emisor no aceptó la transferencia. Comunícate con el comercio.",
	Expired: "El tiempo para ingresar tu tarjeta terminó", ExpiredDetail: "Vuelve al comercio para solicitar un nuevo enlace.",
	Locked: "Demasiados intentos", LockedDetail: "Por tu seguridad cerramos este formulario tras cinco intentos fallidos. Comunícate con el comercio.",
	Invalid: "Este enlace ya no es válido", InvalidDetail: "Fue reemplazado por uno nuevo o no existe. Usa el enlace más reciente que te dio el comercio.",
	CardLabel: "Tarjeta", NotVisa: "Solo VISA", Visa: "VISA", OneMinute: "Queda un minuto",
	Errors: map[string]string{
		"card.required":   "Elige una tarjeta.",
		"card.gone":       "Tu tarjeta guardada ya no está disponible; ingresa una tarjeta.",
		"holder.required": "Ingresa el nombre del titular.",
		"holder.format":   "Usa solo letras, espacios y los signos . ' -, hasta 45 caracteres.",
		"pan.required":    "Ingresa el número de tarjeta.",
		"pan.digits":      "El número de tarjeta solo lleva dígitos.",
		"pan.visa":        "Solo aceptamos tarjetas VISA (empiezan con 4).",
		"pan.length":      "El número de tarjeta tiene de 13 a 19 dígitos.",
		"pan.luhn":        "El número de tarjeta no es válido; revísalo.",
		"expiry.required": "Ingresa el vencimiento.",
		"expiry.format":   "Escribe el vencimiento como MM/AA.",
		"expiry.month":    "El mes va de 01 a 12.",
		"expiry.past":     "La tarjeta está vencida.",
		"cvv.required":    "Ingresa el CVV.",
		"cvv.format":      "El CVV tiene 3 dígitos.",
	},
}

var en = &Texts{
	HTMLLang: "en", Title: "Receive your payout", YouReceive: "You will receive", From: "from",
	TimeLeft: "Time left", ExpiresIn: "This link expires at",
	SavedLegend: "Which card should receive the payout?", UseSaved: "Use my card", UseNew: "Use another card",
	Holder: "Cardholder name", HolderHint: "As shown on the card",
	PAN: "Card number", PANHint: "VISA cards only (they start with 4)",
	Expiry: "Expiry date", ExpiryHint: "MM/YY", CVV: "CVV", CVVHint: "3 digits on the back",
	Submit: "Receive payout", Other: "Español",
	ErrorsTitle: "Please check your card details:", AttemptsLeft: "Attempts left:",
	Secure:   "Secure connection. Your details are encrypted and not shared with the merchant.",
	VisaOnly: "We accept VISA credit, debit and prepaid cards.", Back: "Back to the merchant",
	OtherLangName: "Español",
	Processing:    "Processing your payout…", ProcessingDetail: "We are sending the money to your card. Please keep this window open.",
	Success: "Payout sent!", SuccessDetail: "The money is on its way to your card.",
	Failed: "We could not complete the payout", FailedDetail: "The card issuer did not accept the transfer. Please contact the merchant.",
	Expired: "The time to enter your card ran out", ExpiredDetail: "Go back to the merchant to ask for a new link.",
	Locked: "Too many attempts", LockedDetail: "For your security this form closed after five failed attempts. Please contact the merchant.",
	Invalid: "This link is no longer valid", InvalidDetail: "It was replaced by a newer one or does not exist. Use the latest link the merchant gave you.",
	CardLabel: "Card", NotVisa: "VISA only", Visa: "VISA", OneMinute: "One minute left",
	Errors: map[string]string{
		"card.required":   "Choose a card.",
		"card.gone":       "Your saved card is no longer available; please enter a card.",
		"holder.required": "Enter the cardholder's name.",
		"holder.format":   "Use letters, spaces and . ' - only, up to 45 characters.",
		"pan.required":    "Enter the card number.",
		"pan.digits":      "The card number has digits only.",
		"pan.visa":        "Only VISA cards are accepted (they start with 4).",
		"pan.length":      "A card number has 13 to 19 digits.",
		"pan.luhn":        "This card number is not valid; please check it.",
		"expiry.required": "Enter the expiry date.",
		"expiry.format":   "Write the expiry date as MM/YY.",
		"expiry.month":    "The month is 01 to 12.",
		"expiry.past":     "The card has expired.",
		"cvv.required":    "Enter the CVV.",
		"cvv.format":      "The CVV has 3 digits.",
	},
}

// TextsFor returns the texts of a language: "en", else Spanish.
func TextsFor(lang string) *Texts {
	if lang == "en" {
		return en
	}
	return es
}

// JS returns the strings card.js needs.
func (t *Texts) JS() JSTexts {
	return JSTexts{Processing: t.Processing, NotVisa: t.NotVisa, Visa: t.Visa, OneMinute: t.OneMinute}
}

// MaskedCard is how a card is shown: VISA •••• 1111.
func MaskedCard(brand, last4 string) string {
	return brand + " •••• " + last4
}

// Clock writes a remaining duration as m:ss.
func Clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	sec := s % 60
	pad := ""
	if sec < 10 {
		pad = "0"
	}
	return strconv.FormatInt(s/60, 10) + ":" + pad + strconv.FormatInt(sec, 10)
}
