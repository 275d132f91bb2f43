package templates

import "maps"

// Words are the dashboard's texts in one language, by key.
type Words map[string]string

// S is the text of a key; a missing key shows itself (and fails TestDashboardWords).
func (w Words) S(key string) string {
	if s, ok := w[key]; ok {
		return s
	}
	return key
}

// DashWords returns the dashboard's texts: "en", else Spanish (the default, as on the card form).
func DashWords(lang string) Words {
	if lang == "en" {
		return dashEN
	}
	return dashES
}

// DashLangs are the languages of the dashboard.
var DashLangs = []string{"es", "en"}

// dashParts are the dashboard's texts in Spanish and English: the frame's and the first
// pages', then each later page's. A key is in one part only (TestDashboardPartsDoNotOverlap).
var dashParts = []struct{ es, en Words }{
	{frameWordsES, frameWordsEN},
	{batchWordsES, batchWordsEN},
	{eventWordsES, eventWordsEN},
	{ledgerWordsES, ledgerWordsEN},
	{newPayoutWordsES, newPayoutWordsEN},
	{linkDashWordsES, linkDashWordsEN},
	{scriptWordsES, scriptWordsEN},
	{userWordsES, userWordsEN},
}

// dashES and dashEN are every text of the dashboard, in one language each.
var dashES, dashEN = joinWords(dashParts)

func joinWords(parts []struct{ es, en Words }) (es, en Words) {
	es, en = Words{}, Words{}
	for _, p := range parts {
		maps.Copy(es, p.es)
		maps.Copy(en, p.en)
	}
	return es, en
}

var frameWordsES = Words{
	"app": "Payouts", "skip": "Ir al contenido", "otherLang": "English", "logout": "Cerrar sesión", "nav": "Secciones",
	"nav.overview": "Resumen", "nav.payouts": "Pagos", "nav.deliveries": "Envíos", "nav.merchants": "Comercios",
	"nav.mail": "Correo", "nav.docs": "API",
	"login.title": "Iniciar sesión", "login.token": "Token de administración",
	"login.hint":   "Está en data/admin-token o en --admin-token.",
	"login.submit": "Entrar", "login.wrong": "Ese token no es válido.",
	"login.limited":        "Demasiados intentos fallidos desde esta dirección. Espera un minuto.",
	"login.accountWaiting": "Demasiados intentos fallidos para esta cuenta: cada fallo duplica la espera antes del siguiente intento, hasta 15 minutos. Vuelve a intentarlo en un rato.",
	"ov.title":             "Resumen de las últimas 24 horas", "ov.since": "Desde", "ov.totals": "Totales",
	"ov.partial": "Hay más pagos de los que se leen de una vez: las cifras son un mínimo.",
	"ov.created": "Creados", "ov.succeeded": "Exitosos", "ov.rejected": "Rechazados", "ov.pending": "En curso",
	"ov.outbox": "En la bandeja de salida", "ov.dead": "Envíos abandonados",
	"ov.chart": "Pagos por hora y etapa", "ov.byCountry": "Por país", "ov.byChannel": "Por canal",
	"ov.amounts": "Montos por moneda", "ov.chartDesc": "Pagos creados por hora en las últimas 24 horas, por etapa actual; en total %d.",
	"ov.keyFileOpen":  "Otros usuarios además de su dueño pueden leer %s (%s, modo %s): dele chmod 600. ssh rechazaría una clave así.",
	"ov.backupFailed": "Falló la última copia de seguridad en %s (%s):", "ov.backupLastGood": "Última copia buena: %s.", "ov.backupNever": "ninguna todavía",
	"none": "Nada por ahora.", "country": "País", "channel": "Canal", "currency": "Moneda", "merchant": "Comercio",
	"stage": "Etapa", "status": "Estado", "from": "Desde", "to": "Hasta", "filter": "Filtrar", "clear": "Quitar filtros",
	"filters": "Filtros", "any": "Todos", "amount": "Monto", "created": "Creado", "changed": "Último cambio",
	"bank": "Banco", "time": "Hora", "available": "Disponible", "balance": "Saldo", "payout": "Pago",
	"kind": "Tipo", "state": "Situación", "attempts": "Intentos", "lastError": "Último error", "when": "Cuándo",
	"actions": "Acciones", "deliveredAt": "Entregado", "nextAt": "Próximo intento", "resend": "Enviar de nuevo",
	"save": "Guardar", "next": "Página siguiente →",
	"csv": "Descargar CSV (mismos filtros)", "p.title": "Pagos", "p.none": "Ningún pago coincide.",
	"p.badFilter": "Filtro no válido: %s.",
	"d.title":     "Pago %s", "d.errors": "Errores", "d.sandbox": "Sandbox", "d.sandboxHint": "Fuerza el resultado, como el riel simulado.",
	"d.succeed": "Aprobar", "d.reject": "Rechazar", "d.reverse": "Revertir",
	"d.timeline": "Historial", "d.movements": "Movimientos de saldo", "d.what": "Movimiento",
	"d.movementsHint": "Deducidos del historial: la reserva al autorizar, el débito al procesar, la liberación al rechazar, el abono al revertir.",
	"d.deliveries":    "Notificaciones y correos", "d.request": "Solicitud guardada (enmascarada)",
	"mv.reserve": "Reserva", "mv.debit": "Débito", "mv.release": "Liberación de la reserva", "mv.credit": "Abono por reversión",
	"d.settled": "Pago movido a %s.", "d.notFound": "No existe ese pago.",
	"del.title": "Envíos", "del.resent": "Se intentará de nuevo %s.", "del.gone": "Ese envío ya no está pendiente ni abandonado (¿ya se entregó?).",
	"del.noCode": "el código se borró al abandonar el envío",
	"st.pending": "Pendiente", "st.retrying": "Reintentando", "st.dead": "Abandonado", "st.delivered": "Entregado",
	"kind.beneficiary.mail": "Correo al beneficiario", "kind.merchant.notification": "Notificación al comercio",
	"kind.cash.otp": "Código de retiro", "kind.": "Correo",
	"m.title": "Comercios", "m.create": "Nuevo comercio", "m.createSubmit": "Crear comercio", "m.id": "Id (opcional)",
	"m.idHint": "Letras, dígitos, - o _; el siguiente número si lo dejas vacío.", "m.name": "Nombre",
	"m.settings": "Ajustes", "m.originsHint": "Orígenes que pueden insertar el formulario de tarjeta, uno por línea.",
	"m.creds": "Credenciales", "m.credsOnce": "Cópialas ahora: el secreto no se vuelve a mostrar.",
	"cert.title": "Certificación del receptor", "cert.h": "Certificar el receptor de notificaciones",
	"cert.hint": "Envía a la URL (por defecto, su notificationUrl) notificaciones firmadas de cada resultado, falsificaciones, un duplicado y resultados en desorden, y califica lo que responde. El informe firmado queda una hora.",
	"cert.url":  "URL del receptor (opcional)", "cert.start": "Certificar",
	"cert.running":  "La certificación está en curso: vuelve a cargar esta página en unos segundos para ver el informe.",
	"cert.notFound": "No existe esa certificación (se guardan una hora, en la instancia que la ejecutó).",
	"cert.off":      "La certificación solo funciona con el sandbox activo.",
	"m.payouts":     "Ver sus pagos", "m.balances": "Saldos", "m.fundPair": "Saldo", "m.fund": "Agregar fondos",
	"m.fundHint": "Con decimales, p. ej. 1500.00; negativo para retirar.", "m.edit": "Editar",
	"m.saved": "Cambios guardados.", "m.funded": "Saldo actualizado.", "m.notFound": "No existe ese comercio.",
	"m.nameRequired": "Escribe un nombre.", "m.badURL": "Una URL http o https completa.",
	"m.badOrigin": "Cada origen es esquema://host[:puerto], http o https.", "m.badAmount": "Un monto con hasta dos decimales, distinto de cero.",
	"m.fixErrors": "Revisa los campos marcados.",
	// API keys, a balance's movements, a payout's actions.
	"k.title": "Claves API", "k.hint": "Solo se muestran sus ids: la clave y el secreto se ven una vez, al crearlos.",
	"k.id": "Clave", "k.expires": "Deja de funcionar", "k.never": "Cuando se reemplace", "k.current": "Actual",
	"k.revoke": "Revocar ya", "k.new": "Nueva clave y secreto", "k.grace": "La clave actual sigue funcionando",
	"k.grace24h": "24 horas", "k.grace1h": "1 hora", "k.graceNone": "No: termina ya",
	"k.badGrace": "Elige cuánto sigue funcionando la clave actual.", "k.issued": "Nueva clave %s: copia el secreto ahora.",
	"k.revoked":    "Clave %s revocada.",
	"mv.available": "Cambio en disponible", "mv.balance": "Cambio en saldo",
	"d.cancel": "Cancelar el pago", "d.openForm": "Abrir el formulario de tarjeta",
	"d.openFormHint": "Abre un enlace nuevo, como cuando el comercio reenvía el orderId: el enlace anterior deja de funcionar.",
	"d.formLink":     "Formulario de tarjeta (enlace nuevo) ↗", "d.formOpened": "Enlace nuevo al formulario listo.",
	"d.formGone": "El formulario de tarjeta ya no puede abrirse: se ingresó la tarjeta, el pago terminó o la sesión venció.",
	"set.psp":    "PSP (subMerchantInfo obligatorio)", "set.emailNotifications": "Correos al beneficiario",
	"set.cardPayouts": "Pagos a tarjeta (Perú)", "set.cardOnFile": "Guardar tarjetas", "set.cashPayouts": "Efectivo (Colombia)",
	"set.realTimePhoneAccount": "Tiempo real por celular o cuenta (Colombia)", "set.realTimeKey": "Llaves Bre-B (Colombia)",
	"set.pendingOnNoBalance": "Esperar saldo (PENDING_BALANCE) en vez de rechazar",
	"mail.title":             "Buzón sandbox", "mail.to": "Para", "mail.none": "No hay correos.",
	"mail.off":          "El buzón sandbox está apagado: el servidor corre con --sandbox=false.",
	"err.internal":      "Algo falló; el registro del servidor tiene el detalle.",
	"unavailable.title": "Base de datos no disponible",
	"unavailable":       "El panel no puede conectarse con su base de datos en este momento. Vuelva a intentarlo en unos segundos.",
}

var frameWordsEN = Words{
	"app": "Payouts", "skip": "Skip to content", "otherLang": "Español", "logout": "Sign out", "nav": "Sections",
	"nav.overview": "Overview", "nav.payouts": "Payouts", "nav.deliveries": "Deliveries", "nav.merchants": "Merchants",
	"nav.mail": "Mail", "nav.docs": "API",
	"login.title": "Sign in", "login.token": "Admin token",
	"login.hint":   "It is in data/admin-token, or --admin-token.",
	"login.submit": "Sign in", "login.wrong": "That token is not valid.",
	"login.limited":        "Too many failed attempts from this address. Wait a minute.",
	"login.accountWaiting": "Too many failed attempts for this account: each failure doubles the wait before the next attempt, up to 15 minutes. Try again in a while.",
	"ov.title":             "The last 24 hours", "ov.since": "Since", "ov.totals": "Totals",
	"ov.partial": "There are more payouts than one look reads: the figures are a lower bound.",
	"ov.created": "Created", "ov.succeeded": "Succeeded", "ov.rejected": "Rejected", "ov.pending": "In progress",
	"ov.outbox": "In the outbox", "ov.dead": "Dead letters",
	"ov.chart": "Payouts per hour by stage", "ov.byCountry": "By country", "ov.byChannel": "By channel",
	"ov.amounts": "Amounts per currency", "ov.chartDesc": "Payouts created per hour in the last 24 hours, by current stage; %d in all.",
	"ov.keyFileOpen":  "Others than its owner may read %s (%s, mode %s): chmod 600 it. ssh would refuse such a key.",
	"ov.backupFailed": "The last backup to %s failed (%s):", "ov.backupLastGood": "Newest good backup: %s.", "ov.backupNever": "none yet",
	"none": "Nothing yet.", "country": "Country", "channel": "Channel", "currency": "Currency", "merchant": "Merchant",
	"stage": "Stage", "status": "Status", "from": "From", "to": "To", "filter": "Filter", "clear": "Clear filters",
	"filters": "Filters", "any": "Any", "amount": "Amount", "created": "Created", "changed": "Last change",
	"bank": "Bank", "time": "Time", "available": "Available", "balance": "Balance", "payout": "Payout",
	"kind": "Kind", "state": "State", "attempts": "Attempts", "lastError": "Last error", "when": "When",
	"actions": "Actions", "deliveredAt": "Delivered", "nextAt": "Next attempt", "resend": "Send again",
	"save": "Save", "next": "Next page →",
	"csv": "Download CSV (same filters)", "p.title": "Payouts", "p.none": "No payout matches.",
	"p.badFilter": "Invalid filter: %s.",
	"d.title":     "Payout %s", "d.errors": "Errors", "d.sandbox": "Sandbox", "d.sandboxHint": "Force the outcome, as the simulated rail would.",
	"d.succeed": "Succeed", "d.reject": "Reject", "d.reverse": "Reverse",
	"d.timeline": "Timeline", "d.movements": "Balance movements", "d.what": "Movement",
	"d.movementsHint": "Derived from the history: the hold on authorization, the debit on processing, the release on rejection, the credit on reversal.",
	"d.deliveries":    "Notifications and emails", "d.request": "Stored request (masked)",
	"mv.reserve": "Hold", "mv.debit": "Debit", "mv.release": "Hold released", "mv.credit": "Credit on reversal",
	"d.settled": "Payout moved to %s.", "d.notFound": "No such payout.",
	"del.title": "Deliveries", "del.resent": "%s will be tried again.", "del.gone": "That delivery is neither pending nor dead (delivered already?).",
	"del.noCode": "the code was erased when the delivery was given up",
	"st.pending": "Pending", "st.retrying": "Retrying", "st.dead": "Dead", "st.delivered": "Delivered",
	"kind.beneficiary.mail": "Beneficiary email", "kind.merchant.notification": "Merchant notification",
	"kind.cash.otp": "Cash code", "kind.": "Email",
	"m.title": "Merchants", "m.create": "New merchant", "m.createSubmit": "Create merchant", "m.id": "Id (optional)",
	"m.idHint": "Letters, digits, - or _; the next number when empty.", "m.name": "Name",
	"m.settings": "Settings", "m.originsHint": "Origins that may embed the card form, one per line.",
	"m.creds": "Credentials", "m.credsOnce": "Copy them now: the secret is not shown again.",
	"cert.title": "Receiver certification", "cert.h": "Certify the notification receiver",
	"cert.hint": "Sends the URL (by default its notificationUrl) signed notifications of every outcome, forgeries, a duplicate and reordered outcomes, and grades what it answers. The signed report is kept an hour.",
	"cert.url":  "Receiver URL (optional)", "cert.start": "Certify",
	"cert.running":  "The certification is running: reload this page in a few seconds to see the report.",
	"cert.notFound": "No such certification (they are kept an hour, on the instance that ran them).",
	"cert.off":      "Certification works only with the sandbox on.",
	"m.payouts":     "See its payouts", "m.balances": "Balances", "m.fundPair": "Balance", "m.fund": "Add funds",
	"m.fundHint": "With decimals, e.g. 1500.00; negative to withdraw.", "m.edit": "Edit",
	"m.saved": "Changes saved.", "m.funded": "Balance updated.", "m.notFound": "No such merchant.",
	"m.nameRequired": "Enter a name.", "m.badURL": "A full http or https URL.",
	"m.badOrigin": "Each origin is scheme://host[:port], http or https.", "m.badAmount": "An amount with up to two decimals, not zero.",
	"m.fixErrors": "Please check the marked fields.",
	// API keys, a balance's movements, a payout's actions.
	"k.title": "API keys", "k.hint": "Only their ids: a key and its secret are shown once, when issued.",
	"k.id": "Key", "k.expires": "Stops working", "k.never": "When replaced", "k.current": "Current",
	"k.revoke": "Revoke now", "k.new": "New key and secret", "k.grace": "The current key keeps working",
	"k.grace24h": "24 hours", "k.grace1h": "1 hour", "k.graceNone": "No: end it now",
	"k.badGrace": "Choose how long the current key keeps working.", "k.issued": "New key %s: copy the secret now.",
	"k.revoked":    "Key %s revoked.",
	"mv.available": "Change to available", "mv.balance": "Change to balance",
	"d.cancel": "Cancel the payout", "d.openForm": "Open the card form",
	"d.openFormHint": "Opens a new link, as when the merchant resends the orderId: the previous link stops working.",
	"d.formLink":     "Card form (new link) ↗", "d.formOpened": "A new form link is ready.",
	"d.formGone": "The card form can no longer be opened: the card was entered, the payout ended or the session expired.",
	"set.psp":    "PSP (subMerchantInfo required)", "set.emailNotifications": "Beneficiary emails",
	"set.cardPayouts": "Card payouts (Peru)", "set.cardOnFile": "Keep cards on file", "set.cashPayouts": "Cash (Colombia)",
	"set.realTimePhoneAccount": "Real time by phone or account (Colombia)", "set.realTimeKey": "Bre-B keys (Colombia)",
	"set.pendingOnNoBalance": "Wait for balance (PENDING_BALANCE) instead of rejecting",
	"mail.title":             "Sandbox mailbox", "mail.to": "To", "mail.none": "No mail.",
	"mail.off":          "The sandbox mailbox is off: the server runs with --sandbox=false.",
	"err.internal":      "Something failed; the server log has the details.",
	"unavailable.title": "Database unavailable",
	"unavailable":       "The dashboard cannot reach its database just now. Try again in a few seconds.",
}
