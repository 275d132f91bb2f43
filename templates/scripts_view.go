package templates

// ScriptRow is one scripted outcome as the merchant's page shows it.
type ScriptRow struct {
	N, Match, Outcome, Timeline string
}

// scriptWordsES and scriptWordsEN are the texts of the scripted outcomes page (dashES, dashEN).
var scriptWordsES = Words{
	"sc.title": "Resultados programados", "sc.match": "Coincide con", "sc.outcome": "Resultado", "sc.timeline": "Después",
	"sc.hint": "PUT /admin/v1/merchants/{id}/sandbox/rules. La primera regla que coincide decide; «Después» son los pasos siguientes en el reloj del sandbox.",
	"sc.any":  "todo pago",
}

var scriptWordsEN = Words{
	"sc.title": "Scripted outcomes", "sc.match": "Matches", "sc.outcome": "Outcome", "sc.timeline": "Then",
	"sc.hint": "PUT /admin/v1/merchants/{id}/sandbox/rules. The first rule that fits decides; \"Then\" are the later steps on the sandbox clock.",
	"sc.any":  "every payout",
}
