package templates

import "fmt"

// Named users: the views of the sign-in with a user, the set-up page, the Users page, the
// account page and the Audit page.

// Perms is what the signed-in actor may do, as the pages need it (rules.Actor.Can).
type Perms struct {
	Create, Fund, Manage, Admin bool
	User                        bool // a named user (it has an account page)
}

// userNav is the navigation after the merchants' pages: Users for operators, the Audit log,
// the account of a user, the API docs.
func (f Frame) userNav() []NavItem {
	var items []NavItem
	if f.Can.Admin {
		items = append(items, NavItem{"/dashboard/users", f.W.S("nav.users"), f.Active == "users"})
	}
	items = append(items, NavItem{"/dashboard/audit", f.W.S("nav.audit"), f.Active == "audit"})
	if f.Can.User {
		items = append(items, NavItem{"/dashboard/account", f.W.S("nav.account"), f.Active == "account"})
	}
	return append(items, NavItem{"/docs", f.W.S("nav.docs"), false})
}

// SetupView is /dashboard/setup?t={token}: a password and a TOTP enrolment.
type SetupView struct {
	Frame
	Gone       bool // the link is unknown, used or expired
	Action     string
	Name       string
	Email      string
	QR         string // a PNG data: URI of the otpauth URI
	OTPAuthURI string
	Secret     string // the TOTP secret in base32, for typing in by hand
	Errors     map[string]string
}

// UserRow is one user on the Users page.
type UserRow struct {
	ID, Name, Email, Role, Merchant, Status, Created string
	Disabled                                         bool
}

// UsersView is /dashboard/users.
type UsersView struct {
	Frame
	Rows      []UserRow
	Roles     []Option
	Merchants []Option
	Form      NewUserForm
	// NewLink is a set-up link just issued, shown once, and whose it is.
	NewLink, NewLinkFor string
}

// NewUserForm is the create form's values and errors.
type NewUserForm struct {
	Name, Email, Role, MerchantID string
	Errors                        map[string]string
}

// AccountView is /dashboard/account: a user changes its password.
type AccountView struct {
	Frame
	Name, Email, Role, Merchant string
	Errors                      map[string]string
}

// AuditRow is one audit entry.
type AuditRow struct {
	ID, At, Actor, Principal, Action, Target, Merchant, Detail, RemoteAddr, UserAgent string
}

// AuditView is /dashboard/audit.
type AuditView struct {
	Frame
	Actor, Action, From, To string
	Rows                    []AuditRow
	NextHref, CSVHref       string
	Scoped                  string // the merchant a merchant user's log is confined to
}

// MessageView is a page with one message (403, a link that is gone).
type MessageView struct {
	Frame
	Message string
}

var userWordsES = Words{
	"nav.users": "Usuarios", "nav.audit": "Auditoría", "nav.account": "Mi cuenta",
	"login.user": "Con tu usuario", "login.email": "Email", "login.password": "Contraseña",
	"login.code": "Código de 6 dígitos", "login.codeHint": "El que muestra ahora tu app de autenticación (TOTP).",
	"login.orToken":   "O con el token de administración (acceso de emergencia)",
	"login.userWrong": "Email, contraseña o código no válidos.",
	"setup.title":     "Configura tu acceso", "setup.gone": "Este enlace no es válido: ya se usó, venció o fue reemplazado. Pide uno nuevo a un operador.",
	"setup.for": "Usuario", "setup.password": "Nueva contraseña", "setup.passwordHint": "Al menos 12 caracteres.",
	"setup.password2": "Repite la contraseña", "setup.totp": "Segundo factor (TOTP)",
	"setup.totpHint": "Escanea el código QR con tu app de autenticación, o escribe la clave, y confirma con el código que muestra.",
	"setup.secret":   "Clave", "setup.submit": "Guardar y activar", "setup.done": "Listo: ya puedes entrar con tu email, contraseña y código.",
	"setup.mismatch": "Las contraseñas no coinciden.", "setup.short": "Al menos 12 caracteres.", "setup.badCode": "Ese código no es válido o ya se usó.",
	"u.title": "Usuarios", "u.name": "Nombre", "u.email": "Email", "u.role": "Rol", "u.status": "Estado",
	"u.merchantHint": "Solo para maker, checker y viewer.", "u.create": "Nuevo usuario", "u.createSubmit": "Crear y obtener enlace",
	"u.link":    "Enlace de configuración para %s (se muestra una sola vez, vence en 72 horas):",
	"u.disable": "Deshabilitar", "u.enable": "Habilitar", "u.reset": "Nuevo enlace",
	"u.disabled": "Usuario deshabilitado: sus sesiones terminaron.", "u.enabled": "Usuario habilitado.",
	"u.notFound": "No existe ese usuario.", "u.fix": "Corrige los campos marcados.",
	"u.st.pending": "pendiente", "u.st.active": "activo", "u.st.disabled": "deshabilitado",
	"u.role.operator": "operador (todos los comercios)", "u.role.maker": "maker (crea pagos)",
	"u.role.checker": "checker (aprueba)", "u.role.viewer": "viewer (solo lectura)",
	"acc.title": "Mi cuenta", "acc.current": "Contraseña actual", "acc.new": "Nueva contraseña", "acc.new2": "Repite la nueva contraseña",
	"acc.submit": "Cambiar contraseña", "acc.done": "Contraseña cambiada: tus otras sesiones terminaron.",
	"acc.wrong": "La contraseña actual no es correcta.",
	"au.title":  "Auditoría", "au.actor": "Quién", "au.action": "Acción", "au.target": "Sobre", "au.detail": "Detalle",
	"au.at": "Cuándo", "au.from": "Desde dónde", "au.csv": "Exportar CSV", "au.next": "Más antiguas",
	"au.scoped": "Solo las acciones sobre tu comercio %s.", "au.actorHint": "Nombre o principal (user:…)",
	"forbidden": "Tu rol no permite esta acción.",
}

var userWordsEN = Words{
	"nav.users": "Users", "nav.audit": "Audit", "nav.account": "My account",
	"login.user": "With your user", "login.email": "Email", "login.password": "Password",
	"login.code": "6-digit code", "login.codeHint": "The one your authenticator app (TOTP) shows now.",
	"login.orToken":   "Or with the admin token (break-glass access)",
	"login.userWrong": "Email, password or code not valid.",
	"setup.title":     "Set up your access", "setup.gone": "This link is not valid: it was used, expired or replaced. Ask an operator for a new one.",
	"setup.for": "User", "setup.password": "New password", "setup.passwordHint": "At least 12 characters.",
	"setup.password2": "Repeat the password", "setup.totp": "Second factor (TOTP)",
	"setup.totpHint": "Scan the QR code with your authenticator app, or type the key, and confirm with the code it shows.",
	"setup.secret":   "Key", "setup.submit": "Save and activate", "setup.done": "Done: you can now sign in with your email, password and code.",
	"setup.mismatch": "The passwords differ.", "setup.short": "At least 12 characters.", "setup.badCode": "That code is not valid or was already used.",
	"u.title": "Users", "u.name": "Name", "u.email": "Email", "u.role": "Role", "u.status": "Status",
	"u.merchantHint": "Only for maker, checker and viewer.", "u.create": "New user", "u.createSubmit": "Create and get the link",
	"u.link":    "Set-up link for %s (shown once, expires in 72 hours):",
	"u.disable": "Disable", "u.enable": "Enable", "u.reset": "New link",
	"u.disabled": "User disabled: its sessions ended.", "u.enabled": "User enabled.",
	"u.notFound": "No such user.", "u.fix": "Fix the fields marked.",
	"u.st.pending": "pending", "u.st.active": "active", "u.st.disabled": "disabled",
	"u.role.operator": "operator (every merchant)", "u.role.maker": "maker (creates payouts)",
	"u.role.checker": "checker (approves)", "u.role.viewer": "viewer (reads only)",
	"acc.title": "My account", "acc.current": "Current password", "acc.new": "New password", "acc.new2": "Repeat the new password",
	"acc.submit": "Change password", "acc.done": "Password changed: your other sessions ended.",
	"acc.wrong": "The current password is not right.",
	"au.title":  "Audit", "au.actor": "Who", "au.action": "Action", "au.target": "On", "au.detail": "Detail",
	"au.at": "When", "au.from": "From", "au.csv": "Export CSV", "au.next": "Older",
	"au.scoped": "Only the actions on your merchant %s.", "au.actorHint": "Name or principal (user:…)",
	"forbidden": "Your role does not allow this action.",
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
