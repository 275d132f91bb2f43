package templates

import "time"

// LinkForm is a payout link's page: the choice of a destination kind, then the fields that
// kind's requirements schema asks for.
type LinkForm struct {
	Page
	W *LinkWords
	// Choose is the URL the kind chooser goes to (a GET form: it works without JavaScript),
	// with the link's token as a hidden input.
	Choose string
	Token  string
	Kinds  []LinkKind
	// Action is the URL the destination's form posts to; empty until a kind is chosen.
	Action string
	Kind   int
	// Card is the card form's inputs when the kind chosen is a Peru card (Fields then holds
	// only the document to prove).
	Card   *CardForm
	Fields []LinkField
	// Summary is every error of the last submission, with its code, fields first.
	Summary      []LinkError
	AttemptsLeft int
	ShowAttempts bool
	ExpiresAt    time.Time
}

// LinkKind is one destination kind the link offers.
type LinkKind struct {
	Value    int
	Label    string
	Selected bool
}

// LinkField is one input generated from the requirements schema.
type LinkField struct {
	Name, Label, Hint, Value string
	Options                  []LinkOption // a select when not empty
	Error, Code              string
	InputMode                string
	MaxLength                int
}

// LinkOption is one choice of a select.
type LinkOption struct {
	Value, Label string
	Selected     bool
}

// LinkError is one line of the error summary: Field is the input's id ("" for an error
// that no input holds).
type LinkError struct{ Field, Code, Message string }

// ID is the element id of a field's input.
func (f LinkField) ID() string { return "f-" + f.Name }

// DescribedBy ties the hint, and the error when there is one, to the input.
func (f LinkField) DescribedBy() string {
	if f.Error != "" {
		return f.ID() + "-error " + f.ID() + "-hint"
	}
	return f.ID() + "-hint"
}

// LinkWords are the link page's own words.
type LinkWords struct {
	Title, Choose, Continue, Submit, ErrorsTitle, Code, ExpiresAt string
	// The review step's words.
	ReviewTitle, ReviewIntro, HolderIs, HolderQuestion, Confirm, NotMine           string
	DocumentLabel, DocumentHint, GivenKind, GivenBank, GivenAccount, Correct, Card string
	Kinds                                                                          map[int]string
	Fields                                                                         map[string]string
	Hints                                                                          map[string]string
}

var linkES = &LinkWords{
	Title: "Elige dónde recibir tu pago", Choose: "¿Dónde quieres recibir el dinero?", Continue: "Continuar",
	Submit: "Recibir pago", ErrorsTitle: "Revisa estos datos:", Code: "código", ExpiresAt: "Este enlace vence el",
	ReviewTitle: "Confirma tu cuenta", ReviewIntro: "Antes de enviar el dinero, confirma que la cuenta es tuya.",
	HolderIs: "Titular según el directorio:", HolderQuestion: "¿Esta cuenta es tuya?", Confirm: "Sí, es mi cuenta",
	NotMine: "No es mi cuenta: corregir", DocumentLabel: "Número de tu documento de identidad",
	DocumentHint: "El comercio lo tiene registrado como", GivenKind: "Destino", GivenBank: "Banco o billetera", GivenAccount: "Número",
	Correct: "Corregir los datos", Card: "Tarjeta VISA",
	Kinds: map[int]string{1: "Cuenta corriente", 2: "Cuenta de ahorros", 4: "Billetera celular", 5: "Llave Bre-B"},
	Fields: map[string]string{"bankCode": "Banco o billetera", "accountNumber": "Número de cuenta", "cci": "CCI (20 dígitos)",
		"AdittionalAccountInfo": "Dato adicional", "alias": "Alias"},
	Hints: map[string]string{"bankCode": "Elige de la lista", "accountNumber": "Solo números, sin espacios", "accountNumber.4": "Tu número de celular",
		"accountNumber.5": "Tu llave: celular, documento, correo o @alias", "cci": "El código de cuenta interbancario"},
}

var linkEN = &LinkWords{
	Title: "Choose where to receive your payout", Choose: "Where do you want to receive the money?", Continue: "Continue",
	Submit: "Receive payout", ErrorsTitle: "Please check these details:", Code: "code", ExpiresAt: "This link expires on",
	ReviewTitle: "Confirm your account", ReviewIntro: "Before the money is sent, confirm that the account is yours.",
	HolderIs: "Holder according to the directory:", HolderQuestion: "Is this account yours?", Confirm: "Yes, it is my account",
	NotMine: "It is not my account: correct it", DocumentLabel: "Your identity document number",
	DocumentHint: "The merchant has it on record as", GivenKind: "Destination", GivenBank: "Bank or wallet", GivenAccount: "Number",
	Correct: "Correct the details", Card: "VISA card",
	Kinds: map[int]string{1: "Current account", 2: "Savings account", 4: "Cellphone wallet", 5: "Bre-B key"},
	Fields: map[string]string{"bankCode": "Bank or wallet", "accountNumber": "Account number", "cci": "CCI (20 digits)",
		"AdittionalAccountInfo": "Additional detail", "alias": "Alias"},
	Hints: map[string]string{"bankCode": "Choose from the list", "accountNumber": "Digits only, no spaces", "accountNumber.4": "Your cellphone number",
		"accountNumber.5": "Your key: cellphone, document, email or @alias", "cci": "The interbank account code"},
}

// LinkWordsFor are the link page's words in lang ("es" by default).
func LinkWordsFor(lang string) *LinkWords {
	if lang == "en" {
		return linkEN
	}
	return linkES
}

// LinkTexts are the card pages' texts with the words a payout link says otherwise (its
// outcome pages reuse ResultPage).
func LinkTexts(lang string) *Texts {
	t := *TextsFor(lang)
	if lang == "en" {
		t.Title = linkEN.Title
		t.ProcessingDetail, t.SuccessDetail = "We are sending the money to your account.", "The money is on its way to your account."
		t.FailedDetail = "The payout could not be completed. Please contact the merchant."
		t.Expired, t.ExpiredDetail = "This link expired", "The beneficiary's account registration process has expired. A new request is required."
		t.LockedDetail = "For your security this link closed after five failed attempts. Please contact the merchant."
	} else {
		t.Title = linkES.Title
		t.ProcessingDetail, t.SuccessDetail = "Estamos enviando el dinero a tu cuenta.", "El dinero ya está en camino a tu cuenta."
		t.FailedDetail = "No pudimos completar el pago. Comunícate con el comercio."
		t.Expired, t.ExpiredDetail = "Este enlace venció", "El proceso de registro de tu cuenta venció. Pide al comercio una nueva solicitud."
		t.LockedDetail = "Por tu seguridad cerramos este enlace tras cinco intentos fallidos. Comunícate con el comercio."
	}
	return &t
}

// LinkReview is a payout link's second step: the destination the beneficiary gave, the
// holder the directory names (masked) to confirm, and the merchant's document to type. The
// destination travels in Hidden, signed by the server, so the step needs no session.
type LinkReview struct {
	Page
	W      *LinkWords
	Action string
	Hidden []LinkOption // name (Value) and value (Label) of each hidden input
	// Kind and Account say what the beneficiary gave: the kind's name, the bank and the
	// number masked but for its last four.
	Kind, Bank, Account string
	// Holder is the directory's holder, masked ("An**** Ma******"); "" when it knows none.
	Holder string
	// Document is the merchant's document masked (its type's name and last characters);
	// "" when the merchant gave none and nothing is to be typed.
	Document      string
	DocumentValue string
	DocumentError string
	DocumentCode  string
	Summary       []LinkError
	AttemptsLeft  int
	ShowAttempts  bool
}

// DocumentDescribedBy ties the document input's hint, and its error when there is one.
func (r LinkReview) DocumentDescribedBy() string {
	if r.DocumentError != "" {
		return "f-document-error f-document-hint"
	}
	return "f-document-hint"
}

// KindLabel is the name of account type kind in country: 5 is a Bre-B key in Colombia and a
// card in Peru.
func (w *LinkWords) KindLabel(country string, kind int) string {
	if country == "PER" && kind == 5 {
		return w.Card
	}
	return w.Kinds[kind]
}
