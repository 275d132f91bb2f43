package templates

// The view of the ledger page: a merchant's ledger entries of one balance, a day's
// statement and the reconciliation of a range of days.

// LedgerView is /dashboard/merchants/{id}/ledger.
type LedgerView struct {
	Frame
	MerchantID, MerchantHref string
	Currency                 string
	Currencies               []Option // Value: the page's href for that currency
	Entries                  []EntryRow
	NextHref                 string // the next page of entries; "" on the last
	FirstHref                string // back to the first page; "" on it
	Date                     string
	DateError                string
	Statement                *StatementView
	From, To                 string
	RangeError               string
	Reconciled               *ReconcileView
}

// EntryRow is one ledger entry.
type EntryRow struct {
	ID, At, Type, Amount, Available, Balance string
	PayoutID, PayoutHref, OrderID, BatchID   string
}

// StatementView is a day's statement: each figure as a row (Label, Amount) in the order
// closing = opening + movements.
type StatementView struct {
	Date, Timezone string
	Complete       bool
	Lines          []Option // Value: the figure, Label: its name
	Counts         string
	CSVHref        string
}

// ReconcileView is a reconciliation's outcome.
type ReconcileView struct {
	From, To         string
	Days             []ReconcileDay
	Entries, Payouts string
	Findings         []string
}

// ReconcileDay is one day of a reconciliation.
type ReconcileDay struct{ Date, Opening, Movements, Closing string }

var ledgerWordsES = Words{
	"led.link": "Libro mayor", "led.title": "Libro mayor", "led.entries": "Movimientos",
	"led.none": "Sin movimientos en esta moneda.", "led.id": "N.º", "led.type": "Tipo", "led.amount": "Monto",
	"led.available": "Disponible después", "led.balance": "Saldo después", "led.payout": "Pago", "led.next": "Página siguiente",
	"led.first": "Primera página", "led.statement": "Extracto del día", "led.date": "Día (UTC−5)", "led.show": "Ver",
	"led.partial": "El día sigue en curso: cifras hasta ahora.", "led.csv": "Descargar CSV", "led.counts": "Movimientos por tipo",
	"led.reconcile": "Conciliación", "led.from": "Desde", "led.to": "Hasta", "led.run": "Conciliar",
	"led.addsUp":   "Cuadra: el cierre de cada día es la apertura del siguiente, los movimientos suman el saldo y cada pago se movió como dice su estado.",
	"led.findings": "Diferencias", "led.opening": "Apertura", "led.movements": "Movimientos", "led.closing": "Cierre",
	"led.checked": "movimientos y pagos revisados",
	"st.opening":  "Apertura", "st.openingAvailable": "Disponible al abrir", "st.funded": "Fondeos", "st.withdrawn": "Retiros",
	"st.reserved": "Reservado", "st.released": "Liberado", "st.paid": "Pagado", "st.reversed": "Devuelto", "st.opened": "Saldo inicial",
	"st.closing": "Cierre", "st.closingAvailable": "Disponible al cerrar",
}

var ledgerWordsEN = Words{
	"led.link": "Ledger", "led.title": "Ledger", "led.entries": "Entries",
	"led.none": "No entries in this currency.", "led.id": "No.", "led.type": "Type", "led.amount": "Amount",
	"led.available": "Available after", "led.balance": "Balance after", "led.payout": "Payout", "led.next": "Next page",
	"led.first": "First page", "led.statement": "Statement of a day", "led.date": "Day (UTC−5)", "led.show": "Show",
	"led.partial": "The day is still running: the figures so far.", "led.csv": "Download CSV", "led.counts": "Entries by type",
	"led.reconcile": "Reconciliation", "led.from": "From", "led.to": "To", "led.run": "Reconcile",
	"led.addsUp":   "It adds up: each day's closing is the next day's opening, the entries add up to the balance, and every payout moved as its state says.",
	"led.findings": "Differences", "led.opening": "Opening", "led.movements": "Movements", "led.closing": "Closing",
	"led.checked": "entries and payouts checked",
	"st.opening":  "Opening", "st.openingAvailable": "Available at opening", "st.funded": "Funded", "st.withdrawn": "Withdrawn",
	"st.reserved": "Reserved", "st.released": "Released", "st.paid": "Paid", "st.reversed": "Reversed", "st.opened": "Opening entry",
	"st.closing": "Closing", "st.closingAvailable": "Available at closing",
}
