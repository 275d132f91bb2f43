package templates

// Batches: a merchant's batches page and one batch's page.

// BatchesView is /dashboard/merchants/{id}/batches: the upload form and the batches.
type BatchesView struct {
	Frame
	MerchantID string
	Rows       []BatchRow
}

// BatchRow is one batch in the list.
type BatchRow struct {
	ID, BatchID, Status, Items, MadeBy, ApprovedBy, Created, Href string
}

// BatchPageView is /dashboard/merchants/{id}/batches/{batch}.
type BatchPageView struct {
	Frame
	MerchantID string
	Batch      BatchRow
	CanApprove bool   // DRAFT and not made by the signed-in principal
	SelfMade   bool   // DRAFT and made by the signed-in principal: another must approve
	Running    bool   // approved and not yet notified: the page refreshes itself
	CSVHref    string // the result CSV
	Counts     []Fact // items by where they are
	ByStage    []Fact
	Totals     []TotalRow
	Errors     []BatchErrorRow
	Links      []BatchLinkRow // the items without destination: payout links
	MoreLinks  int            // link items past those listed
}

// BatchLinkRow is an item that is a payout link, and its payout once created.
type BatchLinkRow struct{ Item, OrderID, PayoutID, PayoutHref, Status string }

// Fact is a labelled figure.
type Fact struct{ Label, Value string }

// TotalRow is a batch's total in one currency.
type TotalRow struct{ Currency, Items, Amount, Paid string }

// BatchErrorRow is one error of the validation report, or an item refused at creation.
type BatchErrorRow struct{ Item, Code, Location, Message string }

// batchWordsES and batchWordsEN are the texts of the batches pages and the key roles (dashES, dashEN).
var batchWordsES = Words{
	"b.title": "Lotes", "b.link": "Lotes de pagos", "b.upload": "Subir un lote (CSV)", "b.batchId": "Id del lote (batchId)",
	"b.file": "Archivo CSV", "b.fileHint": "Una cabecera de nombres de campo con puntos (beneficiary.document.number) y una fila por pago; una celda vacía omite su campo. Hasta 10.000 filas.",
	"b.send": "Validar y guardar", "b.list": "Lotes del comercio", "b.items": "Ítems", "b.madeBy": "Creado por", "b.approvedBy": "Aprobado por",
	"b.one": "Lote %s", "b.approve": "Aprobar y crear los pagos", "b.approved": "Lote aprobado: se están creando sus pagos.",
	"b.selfMade": "Lo subiste tú: otra persona (un checker) debe aprobarlo.", "b.refresh": "Actualizar", "b.csv": "Descargar el resultado (CSV)",
	"b.counts": "Ítems", "b.byStage": "Pagos por etapa", "b.totals": "Totales por moneda", "b.paid": "Pagado",
	"b.errors": "Errores", "b.item": "Ítem", "b.code": "Código", "b.location": "Campo", "b.message": "Mensaje",
	"b.noFile": "Elige un archivo CSV y un batchId.", "b.running": "Esta página se actualiza sola mientras el lote avanza.",
	"b.c.items": "Ítems", "b.c.valid": "Válidos", "b.c.invalid": "Con errores", "b.c.created": "Creados", "b.c.refused": "Rechazados al crear",
	"b.c.pending": "Por crear", "b.c.final": "En etapa final", "b.c.links": "Enlaces de pago (sin destino)",
	"b.links": "Enlaces de pago", "b.moreLinks": "… y %d más (en el CSV del resultado).",
	"b.linksHint": "Filas sin destino: al aprobar el lote cada una es un enlace de pago, enviado al correo del beneficiario, que indica él mismo dónde cobrar.",
	"k.role":      "Rol", "k.untilRevoked": "Hasta que se revoque",
	"k.roleHint": "full rota la clave actual; maker (crea y cancela), checker (aprueba lotes) y read (solo lee) se agregan a su lado, hasta que se revoquen.",
}

var batchWordsEN = Words{
	"b.title": "Batches", "b.link": "Payout batches", "b.upload": "Upload a batch (CSV)", "b.batchId": "Batch id (batchId)",
	"b.file": "CSV file", "b.fileHint": "A header of dotted field names (beneficiary.document.number), then one row a payout; an empty cell leaves its field out. Up to 10,000 rows.",
	"b.send": "Validate and save", "b.list": "The merchant's batches", "b.items": "Items", "b.madeBy": "Made by", "b.approvedBy": "Approved by",
	"b.one": "Batch %s", "b.approve": "Approve and create the payouts", "b.approved": "Batch approved: its payouts are being created.",
	"b.selfMade": "You uploaded it: someone else (a checker) must approve it.", "b.refresh": "Refresh", "b.csv": "Download the result (CSV)",
	"b.counts": "Items", "b.byStage": "Payouts by stage", "b.totals": "Totals by currency", "b.paid": "Paid",
	"b.errors": "Errors", "b.item": "Item", "b.code": "Code", "b.location": "Field", "b.message": "Message",
	"b.noFile": "Choose a CSV file and a batchId.", "b.running": "This page refreshes itself while the batch goes on.",
	"b.c.items": "Items", "b.c.valid": "Valid", "b.c.invalid": "With errors", "b.c.created": "Created", "b.c.refused": "Refused at creation",
	"b.c.pending": "To create", "b.c.final": "In a final stage", "b.c.links": "Payout links (no destination)",
	"b.links": "Payout links", "b.moreLinks": "… and %d more (in the result CSV).",
	"b.linksHint": "Rows without destination: once the batch is approved each is a payout link, emailed to the beneficiary, who says where to be paid.",
	"k.role":      "Role", "k.untilRevoked": "Until revoked",
	"k.roleHint": "full rotates the current key; maker (creates and cancels), checker (approves batches) and read (only reads) are added beside it, until revoked.",
}
