package templates

// NewPayoutView is /dashboard/merchants/{id}/new-payout (sandbox only): a payout form
// built from the requirements schema of the chosen destination, posted through the same
// service as the API.
type NewPayoutView struct {
	Frame
	MerchantID  string
	Action      string   // the form's URL, with the destination's query
	Destination []Option // hidden inputs: the destination the schema was made for
	Country     string
	AccountType string
	BankCode    string
	Currency    string
	Card        bool
	QueryError  string // the requirements refused the destination
	Required    []SchemaField
	Optional    []SchemaField
	Errors      []string // errors with no field of the form
	Schema      string   // the JSON Schema, indented
}

// SchemaField is one leaf of the schema as a form input.
type SchemaField struct {
	ID, Name, Label string
	Input           string // text, number or select
	Options         []Option
	MaxLength       string
	Min, Max        string
	Hint            string // the codes the validator answers for it
	Value           string
	Error           string
}

// newPayoutWordsES and newPayoutWordsEN are the texts of the new payout form (dashES, dashEN).
var newPayoutWordsES = Words{
	"np.title": "Nuevo pago (sandbox)", "np.link": "Nuevo pago (sandbox)",
	"np.intro": "El formulario sale de GET /api/v1/{merchantId}/requirements: los campos, obligatorios, listas y límites del esquema JSON que generan las reglas. Se envía por el mismo servicio que la API.",
	"np.dest":  "Destino", "np.accountType": "accountType", "np.bankCode": "bankCode (opcional)", "np.card": "Tarjeta: POST /payouts/card", "np.endpoint": "Operación",
	"np.choose": "Ver los campos", "np.required": "Campos obligatorios", "np.optional": "Campos opcionales",
	"np.create": "Crear el pago", "np.schema": "Esquema JSON", "np.codes": "Códigos",
	"np.created": "Pago %d creado.", "np.refused": "Las reglas rechazaron el pago: corrige los campos marcados.",
	"np.sandboxOnly": "Solo en el sandbox.",
}

var newPayoutWordsEN = Words{
	"np.title": "New payout (sandbox)", "np.link": "New payout (sandbox)",
	"np.intro": "This form comes from GET /api/v1/{merchantId}/requirements: the fields, required ones, lists and limits of the JSON Schema the rules generate. It posts through the same service as the API.",
	"np.dest":  "Destination", "np.accountType": "accountType", "np.bankCode": "bankCode (optional)", "np.card": "Card: POST /payouts/card", "np.endpoint": "Operation",
	"np.choose": "Show the fields", "np.required": "Required fields", "np.optional": "Optional fields",
	"np.create": "Create the payout", "np.schema": "JSON Schema", "np.codes": "Codes",
	"np.created": "Payout %d created.", "np.refused": "The rules refused the payout: fix the marked fields.",
	"np.sandboxOnly": "Sandbox only.",
}
