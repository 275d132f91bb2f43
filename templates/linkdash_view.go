package templates

import "strings"

// NewLinkView is /dashboard/merchants/{id}/new-link: a payout link made from the dashboard,
// posted through the same service as POST /payouts/link.
type NewLinkView struct {
	Frame
	MerchantID string
	Action     string // the form's URL, with the chosen country
	Country    string
	Countries  []Option
	Fields     []DashLinkField // in form order
	Kinds      []DashLinkKind  // the kinds the country offers this merchant
	KindsError string
	Errors     []string // the error summary: every refused field, with its code
	Mails      bool     // the merchant's emailNotifications: the link is emailed
}

// DashLinkField is one input of the link form.
type DashLinkField struct {
	ID, Name, Label string
	Input           string // text, email, number, select
	Options         []Option
	Value           string
	Hint            string
	Error           string
	Required        bool
	Autocomplete    string
}

// DashLinkKind is a destination kind the link may offer.
type DashLinkKind struct {
	Value, Label string
	Checked      bool
}

// LinkPanel is what a payout link's page shows of its link.
type LinkPanel struct {
	State      string // waiting, submitted, expired, cancelled, ended
	StateLabel string
	ExpiresAt  string
	Kinds      string
	URL        string // for those who may act on it, while it waits
	CanResend  bool
	ResendURL  string
	ResendNote string // why the email cannot be resent now, or how many resends are left
	Resent     int
}

// linkDashWordsES and linkDashWordsEN are the texts of the dashboard's payout links.
var linkDashWordsES = Words{
	"nl.title": "Nuevo enlace de pago", "nl.link": "Nuevo enlace de pago",
	"nl.intro":   "El beneficiario elige e ingresa su cuenta o billetera en la página del enlace; el monto queda reservado mientras tanto. Se crea por el mismo servicio que POST /payouts/link.",
	"nl.country": "País", "nl.choose": "Cambiar de país", "nl.kinds": "Destinos que el beneficiario puede elegir",
	"nl.kindsHint": "Ninguno marcado: todos los que el país ofrece para este monto.",
	"nl.amount":    "Monto", "nl.amountHint": "En unidades de la moneda, con hasta dos decimales: 150000 o 150000.50.",
	"nl.currency": "Moneda", "nl.orderId": "orderId (su referencia, única)", "nl.description": "Descripción",
	"nl.name": "Nombre del beneficiario", "nl.lastName": "Apellido del beneficiario", "nl.email": "Correo del beneficiario",
	"nl.docType": "Tipo de documento (opcional)", "nl.docNumber": "Número de documento (opcional)",
	"nl.docHint": "Si lo indica, el beneficiario debe escribirlo para confirmar que la cuenta es suya.",
	"nl.expiry":  "Vence en", "nl.lang": "Idioma de la página y del correo", "nl.returnUrl": "returnUrl (opcional)",
	"nl.create": "Crear el enlace", "nl.created": "Enlace de pago %d creado.", "nl.replayed": "El enlace de pago %d ya existía con estos datos: es el mismo.",
	"nl.refused": "Las reglas rechazaron el enlace: corrija los campos marcados.", "nl.mailsOn": "El comercio tiene emailNotifications: el enlace se envía al correo del beneficiario, con un recordatorio un día antes de vencer.",
	"nl.mailsOff": "El comercio no tiene emailNotifications: el correo no se envía; comparta el enlace usted.",
	"nl.errors":   "Errores", "nl.none": "Ninguno",
	"nl.1h": "1 hora", "nl.1d": "1 día", "nl.3d": "3 días", "nl.7d": "7 días", "nl.14d": "14 días", "nl.30d": "30 días",
	"lk.title": "Enlace de pago", "lk.state": "Estado del enlace", "lk.expires": "Vence", "lk.kinds": "Destinos ofrecidos",
	"lk.url": "Enlace para el beneficiario", "lk.copy": "Copiar", "lk.copied": "Copiado",
	"lk.urlHint": "Quien tenga este enlace puede indicar dónde se paga: compártalo solo con el beneficiario.",
	"lk.resend":  "Reenviar el correo", "lk.resent": "Correo del enlace reenviado.",
	"lk.resendLeft": "Reenvíos: %d de %d.",
	"lk.waiting":    "esperando al beneficiario", "lk.submitted": "cuenta ingresada", "lk.expired": "vencido (4042)",
	"lk.cancelled": "cancelado", "lk.ended": "terminado",
	"kind.link.mail": "Correo del enlace",
	"lk.kind.1":      "Cuenta corriente (1)", "lk.kind.2": "Cuenta de ahorros (2)", "lk.kind.4": "Billetera celular (4)", "lk.kind.5": "Llave Bre-B (5)",
}

var linkDashWordsEN = Words{
	"nl.title": "New payout link", "nl.link": "New payout link",
	"nl.intro":   "The beneficiary chooses and enters their account or wallet on the link's page; the amount stays reserved meanwhile. It is created through the same service as POST /payouts/link.",
	"nl.country": "Country", "nl.choose": "Change country", "nl.kinds": "Destinations the beneficiary may choose",
	"nl.kindsHint": "None ticked: every kind the country offers for this amount.",
	"nl.amount":    "Amount", "nl.amountHint": "In units of the currency, with up to two decimals: 150000 or 150000.50.",
	"nl.currency": "Currency", "nl.orderId": "orderId (your reference, unique)", "nl.description": "Description",
	"nl.name": "Beneficiary's name", "nl.lastName": "Beneficiary's last name", "nl.email": "Beneficiary's email",
	"nl.docType": "Document type (optional)", "nl.docNumber": "Document number (optional)",
	"nl.docHint": "When given, the beneficiary must type it to confirm the account is theirs.",
	"nl.expiry":  "Expires in", "nl.lang": "Language of the page and the email", "nl.returnUrl": "returnUrl (optional)",
	"nl.create": "Create the link", "nl.created": "Payout link %d created.", "nl.replayed": "Payout link %d already existed with these details: it is the same one.",
	"nl.refused": "The rules refused the link: fix the marked fields.", "nl.mailsOn": "The merchant has emailNotifications: the link is emailed to the beneficiary, with a reminder a day before it expires.",
	"nl.mailsOff": "The merchant has no emailNotifications: no email is sent; share the link yourself.",
	"nl.errors":   "Errors", "nl.none": "None",
	"nl.1h": "1 hour", "nl.1d": "1 day", "nl.3d": "3 days", "nl.7d": "7 days", "nl.14d": "14 days", "nl.30d": "30 days",
	"lk.title": "Payout link", "lk.state": "Link state", "lk.expires": "Expires", "lk.kinds": "Destinations offered",
	"lk.url": "Link for the beneficiary", "lk.copy": "Copy", "lk.copied": "Copied",
	"lk.urlHint": "Whoever holds this link can say where the payout goes: share it with the beneficiary only.",
	"lk.resend":  "Resend the email", "lk.resent": "The link's email was sent again.",
	"lk.resendLeft": "Resends: %d of %d.",
	"lk.waiting":    "waiting for the beneficiary", "lk.submitted": "destination given", "lk.expired": "expired (4042)",
	"lk.cancelled": "cancelled", "lk.ended": "ended",
	"kind.link.mail": "Link email",
	"lk.kind.1":      "Current account (1)", "lk.kind.2": "Savings account (2)", "lk.kind.4": "Cellphone wallet (4)", "lk.kind.5": "Bre-B key (5)",
}

// linkDescribedBy ties a field to its hint and its error.
func linkDescribedBy(f DashLinkField) string {
	var ids []string
	if f.Hint != "" {
		ids = append(ids, f.ID+"-hint")
	}
	if f.Error != "" {
		ids = append(ids, f.ID+"-error")
	}
	return strings.Join(ids, " ")
}
