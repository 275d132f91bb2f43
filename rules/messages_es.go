package rules

import "strings"

// The rules' messages in Spanish (issue 25): a Spanish client (Accept-Language: es on the API)
// and the Spanish dashboard read every error and history note in Spanish. An error's Spanish
// message is its code's, beside the English meaning in the Catalogue; the English message a
// check wrote may be more precise (it names the value), so the English stays the default.

// spanishByCode is the Spanish message of each code of the Catalogue (a test checks that
// every code has one).
var spanishByCode = map[string]string{
	CodeAuthentication:       "la autenticación falló: la clave API, el timestamp o la firma",
	CodeCountryRequired:      "country es obligatorio",
	CodeAmountRequired:       "amount es obligatorio",
	CodeCurrencyRequired:     "currency es obligatorio",
	CodeOrderIDRequired:      "orderId es obligatorio",
	CodeBeneficiaryRequired:  "beneficiary es obligatorio",
	CodeNameRequired:         "beneficiary.name es obligatorio",
	CodeLastNameRequired:     "beneficiary.lastName es obligatorio",
	CodeDocumentRequired:     "beneficiary.document es obligatorio",
	CodeDocumentTypeRequired: "beneficiary.document.type es obligatorio",
	CodeDestinationRequired:  "destination es obligatorio",
	CodeBankAccountRequired:  "destination.bankAccount es obligatorio",
	CodeDocumentNumRequired:  "beneficiary.document.number es obligatorio",
	CodeBankCodeRequired:     "las reglas del país exigen destination.bankAccount.bankCode",
	CodeAccountTypeRequired:  "las reglas del país exigen destination.bankAccount.accountType",
	CodeAccountNumRequired:   "las reglas del país exigen destination.bankAccount.accountNumber",
	CodeCCIRequired:          "destination.bankAccount.cci es obligatorio (Perú, si no se envían accountNumber y bankCode)",
	CodeTooLong:              "un campo es más largo de lo permitido (orderId 20, description 50)",
	CodeAdminField:           "falta un campo obligatorio",
	CodeUnsupportedMediaType: "el cuerpo debe enviarse como Content-Type: application/json",
	CodeControlCharacter:     "un campo tiene un carácter de control o no es UTF-8 válido",
	CodeNotificationURL:      "notificationUrl debe ser una URL https",
	CodeAllowedOrigin:        "cada allowedOrigins es un origen (esquema://host[:puerto]); no se acepta *",
	CodeReservedMerchantID:   "ese id de comercio está reservado por las rutas de la API",
	CodeFundAmount:           "el monto a fondear no puede ser cero y no supera 10^15 unidades menores",
	CodeBalanceLimit:         "el fondeo dejaría el saldo por encima de 10^15 unidades menores",
	CodeWithdrawalTooLarge:   "el retiro es mayor que el saldo disponible",
	CodeAPIKeyNotFound:       "el comercio no tiene esa clave API",
	CodeBackupUnsupported:    "este motor de almacenamiento no tiene respaldo en línea (PostgreSQL: use pg_dump)",
	CodeFieldRequired:        "falta otro campo obligatorio: subMerchantInfo (con code, name y url) para un PSP; description y subMerchantInfo.name en la billetera 037 de Perú",
	CodeEmailRequired:        "beneficiary.email es obligatorio (efectivo en Colombia, tarjeta en Perú)",
	CodeEmailFormat:          "beneficiary.email no es una dirección de correo",
	CodeUnknownField:         "un campo que la especificación no define (los nombres distinguen mayúsculas)",
	CodeCountryNotSupported:  "el país no está habilitado: solo COL y PER (y solo PER para tarjetas)",
	CodeCountryFormat:        "country son 3 letras (ISO 3166-1 alfa-3)",
	CodeAmountNotNumeric:     "amount es un entero de unidades menores mayor que cero, sin decimales ni exponente",
	CodeCurrencyFormat:       "currency son 3 letras (ISO 4217)",
	CodeDocumentType:         "beneficiary.document.type no está en la tabla de documentos del país",
	CodeDocumentNotNumeric:   "beneficiary.document.number solo lleva dígitos",
	CodeBankCode:             "destination.bankAccount.bankCode no está en la lista de bancos del país, o ya no opera",
	CodeAccountType:          "destination.bankAccount.accountType no es válido para el país o el endpoint",
	CodeAccountNotNumeric:    "destination.bankAccount.accountNumber solo lleva dígitos",
	CodeAmountLength:         "amount tiene como máximo 10 dígitos",
	CodeAccountNumberType:    "accountNumber debe ser un texto (se acepta un número)",
	CodeCCIType:              "cci debe ser un texto",
	CodeBankCodeType:         "bankCode debe ser un texto",
	CodeAccountTypeType:      "accountType debe ser un número (se acepta un texto numérico)",
	CodeAmountType:           "amount debe ser un número",
	CodeDocumentTypeType:     "beneficiary.document.type debe ser un entero",
	CodeTimeoutURLRequired:   "timeoutUrl es obligatorio para un pago a tarjeta",
	CodeCardEndpointOnly:     "un pago a tarjeta de Perú (accountType 5) va al endpoint de tarjetas",
	CodeCardNotEnabled:       "el comercio no está habilitado para pagos a tarjeta",
	CodeDNILength:            "un DNI tiene exactamente 8 dígitos",
	CodePASLength:            "un pasaporte de Perú tiene de 7 a 12 dígitos",
	CodeCELength:             "un CE de Perú tiene de 8 a 12 dígitos",
	CodeRUCLength:            "un RUC tiene exactamente 11 dígitos",
	CodePER001Account:        "una cuenta del banco 001 de Perú tiene 18 o 20 dígitos",
	CodePER002Current:        "una cuenta corriente del banco 002 de Perú tiene 13 dígitos",
	CodePER003Account:        "una cuenta del banco 003 de Perú tiene 13 dígitos",
	CodePER004Account:        "una cuenta del banco 004 de Perú tiene 10 dígitos",
	CodeCCILength:            "un CCI tiene 20 dígitos",
	CodeCCINotNumeric:        "un CCI solo lleva dígitos",
	CodePER002CurrentPEN:     "el dígito 11 de una cuenta corriente del banco 002 es 0 para PEN",
	CodePER002CurrentUSD:     "el dígito 11 de una cuenta corriente del banco 002 es 1 para USD",
	CodeCCI001:               "un CCI del banco 001 empieza con 011",
	CodeCCI002:               "un CCI del banco 002 empieza con 002",
	CodeCCI002Current:        "los dígitos 7 y 8 del CCI de una cuenta corriente del banco 002 son 00",
	CodeCCI002Savings:        "el dígito 7 del CCI de una cuenta de ahorros del banco 002 es 1",
	CodeCCI003:               "un CCI del banco 003 empieza con 003",
	CodeCCI004:               "un CCI del banco 004 empieza con 009",
	CodePER002SavingsPEN:     "el dígito 12 de una cuenta de ahorros del banco 002 es 0 para PEN",
	CodePER002SavingsUSD:     "el dígito 12 de una cuenta de ahorros del banco 002 es 1 para USD",
	CodePER002Savings:        "una cuenta de ahorros del banco 002 de Perú tiene 14 dígitos",
	CodePERAboveLimit:        "el monto supera el máximo del destino en Perú (30.000 PEN; celular de la billetera 037, 3.000 PEN; 8.000 USD)",
	CodeCCIUnknownBank:       "los 3 primeros dígitos del CCI no son de un banco de Perú de la lista",
	CodePERCellphone:         "un celular de Perú tiene 9 dígitos y empieza con 9",
	CodePERCellphoneMax:      "un pago a celular en Perú es de 500 PEN como máximo",
	CodePERCellphonePEN:      "un pago a celular en Perú es solo en PEN",
	CodePERCellphoneBank:     "bankCode es obligatorio para un pago a celular en Perú",
	CodeCCI002CurrentPEN:     "el dígito 16 del CCI de una cuenta corriente del banco 002 es 0 para PEN",
	CodeCCI002CurrentUSD:     "el dígito 16 del CCI de una cuenta corriente del banco 002 es 1 para USD",
	CodeCCI002SavingsPEN:     "el dígito 16 del CCI de una cuenta de ahorros del banco 002 es 0 para PEN",
	CodeCCI002SavingsUSD:     "el dígito 16 del CCI de una cuenta de ahorros del banco 002 es 1 para USD",
	CodePERWalletCellphone:   "las billeteras 037 y 040 de Perú solo aceptan accountType 4 (celular)",
	CodePERCellphoneAccount:  "accountNumber (el celular) es obligatorio para un pago a celular en Perú",
	CodePER001Account20:      "los dígitos 9 y 10 de una cuenta de 20 dígitos del banco 001 son 00",
	CodeCOLDocumentMin:       "un documento de Colombia tiene al menos 6 dígitos",
	CodeCOPDecimals:          "un monto de Colombia termina en 00",
	CodeCOLWallet507Type:     "la billetera 507 acepta accountType 2 (ahorros) o 4 (celular)",
	CodeCOL507Length:         "una cuenta de la billetera 507 tiene 10 dígitos",
	CodeCOL507Prefix:         "una cuenta de la billetera 507 empieza con 3",
	CodeCOL051Account:        "una cuenta de ahorros o corriente del banco 051 tiene al menos 12 dígitos",
	CodeCOL007Account:        "una cuenta del banco 007 tiene como máximo 11 dígitos",
	CodeCOL032Account:        "una cuenta del banco 032 tiene como máximo 11 dígitos",
	CodeCOL001Account:        "una cuenta del banco 001 de Colombia tiene como máximo 9 dígitos",
	CodeCOL551Length:         "una cuenta de la billetera 551 tiene 10 dígitos",
	CodeCOL551Prefix:         "una cuenta de la billetera 551 empieza con 3",
	CodeCOLWallet551Type:     "la billetera 551 acepta accountType 2 (ahorros) o 4 (celular)",
	CodeCashAboveMax:         "un pago en efectivo en Colombia es de 1.000.000 COP como máximo",
	CodeCashAccountType:      "el banco 099 solo acepta efectivo, accountType 3",
	CodeCashBankCode:         "un pago en efectivo en Colombia usa el banco 099",
	CodeCashBelowMin:         "un pago en efectivo en Colombia es de 20.000 COP como mínimo",
	CodeDateFormat:           "expirationDate es una fecha AAAA-MM-DD",
	CodeCashExpiration:       "expirationDate del efectivo es de 1 a 7 días a partir de hoy (UTC-5)",
	CodeCOLWalletDocType:     "las billeteras 507 y 551 solo aceptan los documentos 1, 2, 4 y 8",
	CodeCOLAccountNumber:     "una cuenta bancaria de Colombia tiene de 5 a 17 dígitos",
	CodeCOL803Account:        "una cuenta del banco 803 tiene 10 dígitos",
	CodeCOL013Account:        "una cuenta del banco 013 tiene 9, 10 o 16 dígitos",
	CodeCOLCellphoneLength:   "un celular de Colombia tiene 10 dígitos",
	CodeCOLCellphonePrefix:   "un celular de Colombia empieza con 3",
	CodeBreBKeyLength:        "una llave Bre-B tiene de 5 a 100 caracteres",
	CodeBreBKeyAccents:       "una llave Bre-B no lleva tildes ni ñ",
	CodeNUIP:                 "un NUIP tiene 10 dígitos y no empieza con 0",
	CodePEP:                  "un PEP tiene de 7 a 18 dígitos",
	CodePPT:                  "un PPT tiene de 10 a 18 dígitos",
	CodeOrderIDDuplicated:    "el orderId ya se usó con otra solicitud",
	CodeAboveMaximum:         "el monto supera el máximo para este caso",
	CodeBelowMinimum:         "el monto está por debajo del mínimo para este caso",
	CodeAdditionalCellphone:  "AdittionalAccountInfo debe ser un celular (accountNumber es una cuenta)",
	CodeAdditionalAccount:    "AdittionalAccountInfo debe ser una cuenta (accountNumber es un celular)",
	CodeAdditionalEquals:     "AdittionalAccountInfo es igual a accountNumber",
	CodeDenied:               "pago denegado por las reglas antifraude",
	CodeBankRejected:         "el banco rechazó el pago: el beneficiario no es el titular de la cuenta",
	CodeBankOutOfService:     "pago rechazado: el banco está fuera de servicio",
	CodeAccountNotFound:      "el banco rechazó el pago: la cuenta no existe",
	CodeCardDeclined:         "pago a tarjeta rechazado: consulte al emisor de la tarjeta",
	CodeBodyRequired:         "falta el cuerpo de la solicitud",
	CodeMalformedJSON:        "el cuerpo no es un objeto JSON",
	CodeWrongType:            "un campo tiene un tipo JSON incorrecto",
	CodeAmountFormat:         "amount debe ser un número positivo",
	CodeURLFormat:            "un campo URL no es una URL http(s) absoluta",
	CodeBodyTooLarge:         "el cuerpo supera 64 KiB",
	CodeQueryParam:           "un parámetro de la consulta no es válido",
	CodeCurrencyNotAllowed:   "la moneda no se permite en el país (COL: COP; PER: PEN o USD)",
	CodeEmailTooLong:         "beneficiary.email es más largo de lo que el país permite (COL 100, PER 50 caracteres)",
	CodeEmailDummy:           "beneficiary.email es una dirección ficticia",
	CodeLogoNotHTTPS:         "merchantLogo debe ser una URL https",
	CodeExpirationTime:       "expirationTime es un número entero de minutos de 5 a 30",
	CodeRUCAtBank004:         "el RUC no está disponible para cuentas del banco 004 de Perú",
	CodeCCIBankMismatch:      "los 3 primeros dígitos del cci no son los del bankCode enviado",
	CodeRealTimeNeedsCCI:     "el banco de Perú solo acepta pagos en tiempo real, y el tiempo real exige cci",
	CodeCOLDocumentMax:       "beneficiary.document.number es más largo de lo que su tipo de documento de Colombia permite",
	CodeBreBKey:              "la llave Bre-B no es un celular, una cédula, un correo ni un @alias",
	CodeRateLimited:          "demasiadas solicitudes; reintente después de lo que indica Retry-After",
	CodeNotEnabled:           "el comercio no está habilitado para este canal o producto",
	CodePayoutNotFound:       "el comercio no tiene ese pago",
	CodeNoChannel:            "el banco no ofrece un canal para este tipo de pago",
	CodeNoBalance:            "pago rechazado: el saldo del comercio no alcanza",
	CodeExpired:              "pago rechazado: la sesión de tarjeta o el retiro en efectivo venció",
	CodeCardSessionExpired:   "la sesión del formulario de tarjeta venció",
	CodeCardAttemptsExceded:  "cinco intentos fallidos terminaron la sesión de tarjeta",
	CodeWrongState:           "el pago no está en un estado que permita esta acción",
	CodeClaimCodeWrong:       "el código de retiro es incorrecto (5 códigos incorrectos bloquean el retiro)",
	CodeClaimLocked:          "5 códigos incorrectos bloquearon el retiro hasta su vencimiento",
	CodeClaimExpired:         "el retiro en efectivo venció",
	CodeSandboxOff:           "los controles sandbox están apagados en este servidor",
	CodeMerchantNotFound:     "no existe ese comercio",
	CodeNoSuchEndpoint:       "no existe ese endpoint",
	CodeMethodNotAllowed:     "el endpoint no acepta este método",
	CodeReversed:             "el banco del beneficiario devolvió el pago",
	CodeInternal:             "falla interna; el registro del servidor tiene el detalle",
	CodeCancelRefused:        "el pago ya se envió a la red (o terminó): ya no se puede cancelar",
	CodeCancelled:            "el comercio canceló el pago antes de enviarlo a la red",
	CodeClockAdvance:         "el reloj sandbox solo avanza: advance es una duración positiva, como 48h",
	CodeScriptRule:           "una regla sandbox programada no es válida",
	CodeDirectoryEntry:       "una entrada del directorio simulado no es válida",
	CodeBreBKeyUnknown:       "el directorio no conoce esa llave Bre-B",
	CodeUnavailable:          "servicio no disponible por el momento: no se alcanza su base de datos; envíe la misma solicitud de nuevo después del encabezado Retry-After",
	CodeFundCurrency:         "la moneda de un saldo debe ser la de su país: COL tiene COP; PER tiene PEN y USD",
	CodeEventNotFound:        "el comercio no tiene un evento registrado con ese id (los eventos se guardan 30 días)",
	CodeDeliveryChaos:        "un ajuste del caos de entregas está fuera de rango: duplicate 0–1, delay una duración de hasta 60s, failFirst 0–5",
	CodeNoDeliveryURL:        "el evento no se puede reenviar: el comercio no tiene notificationUrl",
	CodeRequirementsQuery:    "la consulta de requisitos nombra un país, tipo de cuenta o código de banco que no está en las tablas de reglas",
	CodeRequirementsNone:     "ningún pago al destino consultado pasa las reglas para este comercio (el motivo dice qué regla)",
	CodeDirectoryUnavailable: "pago rechazado: el directorio Bre-B no tiene la llave",
	CodeKeyRoleRefused:       "el rol de esta llave API no permite la operación: las llaves read solo leen, las maker no aprueban, las checker solo leen y aprueban",
	CodeKeyRole:              "el rol de una llave debe ser full, maker, checker o read",
	CodeBatchSelfApproval:    "un lote no puede aprobarlo la llave o el usuario que lo creó",
	CodeBatchConflict:        "el batchId ya se usó con otros ítems",
	CodeBatchTooLarge:        "un lote tiene como máximo 10.000 ítems (y un cuerpo de hasta 10 MiB)",
	CodeBatchDuplicateOrder:  "el orderId del ítem se repite en el lote",
	CodeBatchOrderUsed:       "el orderId del ítem es el de un pago existente",
	CodeBatchNotFound:        "el comercio no tiene ese lote",
	CodeBatchState:           "solo se puede aprobar un lote en estado DRAFT",
	CodeBatchCSV:             "no se puede leer el CSV del lote: una cabecera de nombres de campo con puntos y una fila por ítem del mismo ancho",
	CodeBatchBody:            "un lote necesita un batchId (1 a 40 caracteres) e items, una lista de solicitudes de pago",
}

// spanishNotes are the history notes the lifecycle and the simulated rails write, in Spanish.
var spanishNotes = map[string]string{
	"the cash was not claimed before its expiration date":     "el efectivo no se retiró antes de su vencimiento",
	"the card form session expired before a card was entered": "la sesión del formulario venció antes de que se ingresara una tarjeta",
	"waiting for the merchant's balance":                      "esperando saldo del comercio",
	"the merchant's balance does not cover the payout":        "el saldo del comercio no alcanza para el pago",
	"balance funded":                               "saldo fondeado",
	"simulated in the sandbox":                     "simulado en el sandbox",
	"cancelled by the merchant before it was sent": "cancelado por el comercio antes de enviarlo",
	"card entered":                                 "tarjeta ingresada",
	"cash claimed":                                 "efectivo retirado",
	"the card issuer declined the credit":          "el emisor de la tarjeta rechazó el abono",
	"the Bre-B directory has no entry for the key": "el directorio Bre-B no tiene la llave",
	"scripted sandbox outcome":                     "resultado sandbox programado",
	"scripted sandbox timeline":                    "línea de tiempo sandbox programada",
	"the beneficiary's bank returned the money after it was paid (sandbox account ending 9994)": "el banco del beneficiario devolvió el dinero después de pagado (cuenta sandbox terminada en 9994)",
	"the beneficiary is not the account's owner (sandbox account ending 9999)":                  "el beneficiario no es el titular de la cuenta (cuenta sandbox terminada en 9999)",
	"the payout was denied by the anti-fraud rules (sandbox account ending 9998)":               "las reglas antifraude denegaron el pago (cuenta sandbox terminada en 9998)",
	"the account does not exist (sandbox account ending 9996)":                                  "la cuenta no existe (cuenta sandbox terminada en 9996)",
	"the bank is out of service (sandbox account ending 9995)":                                  "el banco está fuera de servicio (cuenta sandbox terminada en 9995)",
}

// Spanish reports whether lang (an Accept-Language value, or a page's language) prefers
// Spanish: its first language tag is es or es-*.
func Spanish(lang string) bool {
	first, _, _ := strings.Cut(lang, ",")
	first, _, _ = strings.Cut(first, ";")
	first = strings.ToLower(strings.TrimSpace(first))
	return first == "es" || strings.HasPrefix(first, "es-")
}

// MessageIn is an error's message in lang: the Spanish of its code when lang prefers Spanish
// and the catalogue has it, else the English message as written.
func MessageIn(lang, code, english string) string {
	if Spanish(lang) {
		if s, ok := spanishByCode[code]; ok {
			return s
		}
	}
	return english
}

// NoteIn is a history note in lang (the English note when there is no Spanish for it).
func NoteIn(lang, note string) string {
	if Spanish(lang) {
		if ch, ok := strings.CutPrefix(note, "submitted to "); ok {
			return "enviado a " + ch
		}
		if s, ok := spanishNotes[note]; ok {
			return s
		}
	}
	return note
}
