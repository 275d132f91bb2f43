package templates

// The views of the event log's dashboard pages: a merchant's webhook tools (inbox, delivery
// chaos) and one logged event with its attempts.

// WebhooksPanel is the merchant page's section on notifications: where they go, the
// sandbox inbox, and the delivery chaos in force.
type WebhooksPanel struct {
	NotificationURL string
	InboxHref       string // empty outside the sandbox
	EventsHref      string
	Chaos           *ChaosView // nil: off
}

// ChaosView is a merchant's delivery chaos as the dashboard shows it.
type ChaosView struct {
	Duplicate, Delay, FailFirst string
	Reorder                     bool
}

// AttemptRow is one delivery attempt.
type AttemptRow struct{ At, Status, Error, Duration, Cause string }

// EventView is /dashboard/merchants/{id}/events/{eventId}.
type EventView struct {
	Frame
	MerchantID, MerchantHref, EventID, Type string
	PayoutID, PayoutHref                    string
	Created, Delivered                      string
	Body                                    string // pretty-printed
	Attempts                                []AttemptRow
}

// InboxRow is one notification the sandbox inbox received.
type InboxRow struct {
	EventID, EventHref, ReceivedAt string
	SignatureValid                 bool
	Headers                        []Option // Value: the header's name, Label: its value
	Body                           string   // pretty-printed
}

// InboxView is /dashboard/merchants/{id}/inbox.
type InboxView struct {
	Frame
	MerchantID, MerchantHref, NotificationURL string
	SandboxOff                                bool
	Rows                                      []InboxRow
}

// EventRow is one logged event in the merchant's event list.
type EventRow struct{ EventID, EventHref, Type, PayoutID, Created, Delivered, Attempts string }

var eventWordsES = Words{
	"wh.title": "Notificaciones", "wh.url": "notificationUrl", "wh.noURL": "Sin notificationUrl: no se envían notificaciones.",
	"wh.inbox": "Bandeja de notificaciones (sandbox)", "wh.events": "Eventos y sus intentos",
	"wh.chaos": "Caos de entrega", "wh.chaosOff": "Apagado: las entregas se portan bien.",
	"wh.chaosHint": "Se cambia con PUT /admin/v1/merchants/{id}/sandbox/delivery y se apaga con DELETE.",
	"wh.duplicate": "Duplicados", "wh.reorder": "Desorden", "wh.delay": "Retraso", "wh.failFirst": "Falla a propósito las primeras",
	"wh.yes": "sí", "wh.no": "no", "wh.ext": "Extensión de este proyecto, no está en la API original.",
	"ev.title": "Evento", "ev.type": "Tipo de evento", "ev.body": "Cuerpo enviado", "ev.attempts": "Intentos de entrega",
	"ev.at": "Cuándo", "ev.status": "HTTP", "ev.error": "Error", "ev.duration": "Duración", "ev.cause": "Motivo",
	"ev.cause.resend": "reenvío", "ev.cause.chaos-duplicate": "caos: duplicado", "ev.cause.chaos-fail-first": "caos: fallo a propósito",
	"ev.notDelivered": "aún no entregado", "ev.none": "Aún no hay eventos.",
	"inbox.title": "Bandeja de notificaciones", "inbox.none": "La bandeja está vacía.",
	"inbox.valid": "firma válida", "inbox.invalid": "firma NO válida", "inbox.headers": "Cabeceras",
	"inbox.off":      "La bandeja solo existe en el sandbox.",
	"inbox.notInbox": "Este comercio no notifica a la bandeja: su notificationUrl no es sandbox:inbox.",
}

var eventWordsEN = Words{
	"wh.title": "Notifications", "wh.url": "notificationUrl", "wh.noURL": "No notificationUrl: no notifications are sent.",
	"wh.inbox": "Webhook inbox (sandbox)", "wh.events": "Events and their attempts",
	"wh.chaos": "Delivery chaos", "wh.chaosOff": "Off: deliveries behave.",
	"wh.chaosHint": "Set with PUT /admin/v1/merchants/{id}/sandbox/delivery, ended with DELETE.",
	"wh.duplicate": "Duplicates", "wh.reorder": "Reorder", "wh.delay": "Delay", "wh.failFirst": "Fail on purpose the first",
	"wh.yes": "yes", "wh.no": "no", "wh.ext": "This project's extension, not in the original API.",
	"ev.title": "Event", "ev.type": "Event type", "ev.body": "Body sent", "ev.attempts": "Delivery attempts",
	"ev.at": "When", "ev.status": "HTTP", "ev.error": "Error", "ev.duration": "Duration", "ev.cause": "Cause",
	"ev.cause.resend": "resend", "ev.cause.chaos-duplicate": "chaos: duplicate", "ev.cause.chaos-fail-first": "chaos: failed on purpose",
	"ev.notDelivered": "not delivered yet", "ev.none": "No events yet.",
	"inbox.title": "Webhook inbox", "inbox.none": "The inbox is empty.",
	"inbox.valid": "signature valid", "inbox.invalid": "signature NOT valid", "inbox.headers": "Headers",
	"inbox.off":      "The inbox exists in the sandbox only.",
	"inbox.notInbox": "This merchant does not notify the inbox: its notificationUrl is not sandbox:inbox.",
}

// EventsView is /dashboard/merchants/{id}/events.
type EventsView struct {
	Frame
	MerchantID, MerchantHref string
	Rows                     []EventRow
}
