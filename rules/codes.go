package rules

import (
	"sort"
	"strconv"
	"strings"
)

// The error catalogue. Codes are stable numeric strings. Wherever a
// meaning matches one of the original API's published codes, the code is
// that one: 10xx a missing field, 11xx an invalid field, 12xx a Peru rule, 15xx a Colombia
// rule, 20xx a business rule, 30xx fraud, 40xx a rejection by the bank. This service's own
// codes use blocks the published catalogue does not: 19xx its own field and contract codes
// (1900–1949 the generic contract, 1950–1969 both countries, 1970–1979 Peru, 1980–1989
// Colombia), 29xx its own business and operation codes, 49xx its own rail outcomes, 5000 an
// internal failure.
const (
	// Missing fields (original).
	CodeAuthentication       = "1001"
	CodeCountryRequired      = "1010"
	CodeAmountRequired       = "1011"
	CodeCurrencyRequired     = "1012"
	CodeOrderIDRequired      = "1013"
	CodeBeneficiaryRequired  = "1014"
	CodeNameRequired         = "1015"
	CodeLastNameRequired     = "1016"
	CodeDocumentRequired     = "1017"
	CodeDocumentTypeRequired = "1019"
	CodeDestinationRequired  = "1020"
	CodeBankAccountRequired  = "1021"
	CodeDocumentNumRequired  = "1022"
	CodeBankCodeRequired     = "1023"
	CodeAccountTypeRequired  = "1024"
	CodeAccountNumRequired   = "1025"
	CodeCCIRequired          = "1026"
	CodeTooLong              = "1031"
	CodeFieldRequired        = "1032"
	CodeEmailRequired        = "1033"
	CodeEmailFormat          = "1034"
	CodeUnknownField         = "1035"

	// Field validation (original).
	CodeCountryNotSupported = "1101"
	CodeCountryFormat       = "1102"
	CodeAmountNotNumeric    = "1103"
	CodeCurrencyFormat      = "1104"
	CodeDocumentType        = "1105"
	CodeDocumentNotNumeric  = "1106"
	CodeBankCode            = "1107"
	CodeAccountType         = "1108"
	CodeAccountNotNumeric   = "1109"
	CodeAmountLength        = "1110"
	CodeAccountNumberType   = "1111"
	CodeCCIType             = "1112"
	CodeBankCodeType        = "1115"
	CodeAccountTypeType     = "1116"
	CodeAmountType          = "1117"
	CodeDocumentTypeType    = "1118"
	CodeTimeoutURLRequired  = "1121"
	CodeCardEndpointOnly    = "1122"
	CodeCardNotEnabled      = "1123"

	// Peru (original).
	CodeDNILength           = "1201"
	CodePASLength           = "1202"
	CodeCELength            = "1203"
	CodeRUCLength           = "1204"
	CodePER001Account       = "1205"
	CodePER002Current       = "1206"
	CodePER003Account       = "1207"
	CodePER004Account       = "1208"
	CodeCCILength           = "1209"
	CodeCCINotNumeric       = "1210"
	CodePER002CurrentPEN    = "1213"
	CodePER002CurrentUSD    = "1214"
	CodeCCI001              = "1215"
	CodeCCI002              = "1216"
	CodeCCI002Current       = "1217"
	CodeCCI002Savings       = "1218"
	CodeCCI003              = "1219"
	CodeCCI004              = "1220"
	CodePER002SavingsPEN    = "1221"
	CodePER002SavingsUSD    = "1222"
	CodePER002Savings       = "1223"
	CodePERAboveLimit       = "1224"
	CodeCCIUnknownBank      = "1225"
	CodePERCellphone        = "1226"
	CodePERCellphoneMax     = "1227"
	CodePERCellphonePEN     = "1228"
	CodePERCellphoneBank    = "1229"
	CodeCCI002CurrentPEN    = "1230"
	CodeCCI002CurrentUSD    = "1231"
	CodeCCI002SavingsPEN    = "1232"
	CodeCCI002SavingsUSD    = "1233"
	CodePERWalletCellphone  = "1241"
	CodePERCellphoneAccount = "1242"
	CodePER001Account20     = "1244"

	// Colombia (original).
	CodeCOLDocumentMin      = "1502"
	CodeCOPDecimals         = "1503"
	CodeCOLWallet507Type    = "1505"
	CodeCOL507Length        = "1506"
	CodeCOL507Prefix        = "1507"
	CodeCOL051Account       = "1508"
	CodeCOL007Account       = "1509"
	CodeCOL032Account       = "1510"
	CodeCOL001Account       = "1511"
	CodeCOL551Length        = "1512"
	CodeCOL551Prefix        = "1513"
	CodeCOLWallet551Type    = "1514"
	CodeCashAboveMax        = "1515"
	CodeCashAccountType     = "1516"
	CodeCashBankCode        = "1517"
	CodeCashBelowMin        = "1518"
	CodeDateFormat          = "1519"
	CodeCashExpiration      = "1520"
	CodeCOLWalletDocType    = "1521"
	CodeCOLAccountNumber    = "1522"
	CodeCOL803Account       = "1523"
	CodeCOL013Account       = "1524"
	CodeCOLCellphoneLength  = "1525"
	CodeCOLCellphonePrefix  = "1526"
	CodeBreBKeyLength       = "1530"
	CodeBreBKeyAccents      = "1531"
	CodeNUIP                = "1532"
	CodePEP                 = "1533"
	CodePPT                 = "1534"
	CodeOrderIDDuplicated   = "2005"
	CodeAboveMaximum        = "2010"
	CodeBelowMinimum        = "2011"
	CodeAdditionalCellphone = "2025"
	CodeAdditionalAccount   = "2026"
	CodeAdditionalEquals    = "2027"

	// Fraud and bank outcomes (original).
	CodeDenied           = "3007"
	CodeBankRejected     = "4001"
	CodeBankOutOfService = "4008"
	CodeAccountNotFound  = "4025"
	CodeCardDeclined     = "4032"
	CodeLinkOwnership    = "4041"
	CodeLinkExpired      = "4042"

	// This service's own: the generic contract and the request (1900–1949).
	CodeBodyRequired  = "1900"
	CodeMalformedJSON = "1901"
	CodeWrongType     = "1902"
	CodeAmountFormat  = "1903"
	CodeURLFormat     = "1904"
	CodeBodyTooLarge  = "1905"
	CodeQueryParam    = "1906"
	CodeAdminField    = "1907"
	// Transport and input limits (hardening).
	CodeUnsupportedMediaType = "1908"
	CodeControlCharacter     = "1909"

	// The database out of reach (an outage, a restart, a cut network): a 503 to retry.
	CodeUnavailable = "1925"

	// This service's own: field rules of both countries (1950–1969).
	CodeCurrencyNotAllowed = "1950"
	CodeEmailTooLong       = "1951"
	CodeEmailDummy         = "1952"
	CodeLogoNotHTTPS       = "1953"
	CodeExpirationTime     = "1954"
	CodeLinkExpiration     = "1955"
	CodeLinkDestinations   = "1956"
	CodeLinkReturnURL      = "1957"
	CodeLinkNoDestination  = "1958"
	CodeLinkLang           = "1959"
	CodeLinkNeedsEmail     = "1960"

	// This service's own: Peru (1970–1979).
	CodeRUCAtBank004     = "1970"
	CodeCCIBankMismatch  = "1971"
	CodeRealTimeNeedsCCI = "1972"

	// This service's own: Colombia (1980–1989).
	CodeCOLDocumentMax = "1980"
	CodeBreBKey        = "1981"

	// This service's own: business and operations (29xx).
	CodeRateLimited         = "2900"
	CodeNotEnabled          = "2902"
	CodePayoutNotFound      = "2904"
	CodeNoChannel           = "2912"
	CodeNoBalance           = "2920"
	CodeExpired             = "2930"
	CodeCardSessionExpired  = "2931"
	CodeCardAttemptsExceded = "2932"
	CodeWrongState          = "2950"
	CodeClaimCodeWrong      = "2951"
	CodeClaimLocked         = "2952"
	CodeClaimExpired        = "2953"
	CodeSandboxOff          = "2960"
	CodeMerchantNotFound    = "2970"
	CodeNoSuchEndpoint      = "2980"
	CodeMethodNotAllowed    = "2981"

	// This service's own: the admin API's merchants, keys and balances (2940–2949).
	CodeNotificationURL    = "2940"
	CodeAllowedOrigin      = "2941"
	CodeReservedMerchantID = "2942"
	CodeFundAmount         = "2943"
	CodeBalanceLimit       = "2944"
	CodeWithdrawalTooLarge = "2945"
	CodeAPIKeyNotFound     = "2946"
	CodeBackupUnsupported  = "2947"

	// This service's own: rail outcomes (49xx) and internal failures.
	CodeReversed = "4901"
	CodeInternal = "5000"

	// Sandbox powers. This project's own codes in the 29xx business block (2990–2995, clear
	// of the codes the block already held); 4027 is the original's published bank code.
	CodeCancelRefused        = "2990" // 409: the payout was already sent to the rail
	CodeCancelled            = "2991" // outcome REJECTED/ERROR: cancelled by the merchant
	CodeClockAdvance         = "2992" // 400: the test clock's advance is not a positive duration
	CodeScriptRule           = "2993" // 400: a scripted sandbox rule is invalid
	CodeDirectoryEntry       = "2994" // 400: a simulated directory entry is invalid
	CodeBreBKeyUnknown       = "2995" // 404: the directory knows no such Bre-B key
	CodeDirectoryUnavailable = "4027" // (published) the directory has no entry for the key

	// Faults an operator meets (2954–2959).
	CodeFundCurrency = "2954" // 400: a balance in a currency its country does not hold

	// Events and the sandbox's webhook tools (2996–2999).
	CodeEventNotFound = "2996" // 404: the merchant has no logged event with that id
	CodeDeliveryChaos = "2997" // 400: a delivery chaos setting is out of bounds
	CodeNoDeliveryURL = "2998" // 409: resend, but the merchant has no notificationUrl
	// CodeCertificationRun is 404: no certification run or client session by that id on this instance.
	CodeCertificationRun = "2999"
	// Ledger entries, statements and reconciliation (2933–2939).
	CodeStatementDate   = "2933" // 400: a statement's date is not YYYY-MM-DD
	CodeStatementFuture = "2934" // 400: the statement's day has not begun yet (UTC−5)
	CodeLedgerCurrency  = "2935" // 400: no balance is kept in that currency (COP, PEN, USD)
	CodeReconcileRange  = "2936" // 400: a reconciliation's range is not from ≤ to within 366 days
	// Requirements, generated from the rules (2982–2989).
	CodeRequirementsQuery = "2982" // 400: a requirements query names no country, account type or bank of the tables
	CodeRequirementsNone  = "2983" // 400: no payout to the queried destination passes the rules for this merchant

	// Named users of the dashboard and the audit log (2955–2959, 2961–2964).
	CodeUserField    = "2955" // 400: a user's name, email, role or merchantId is invalid
	CodeUserExists   = "2956" // 409: another user has this email
	CodeUserNotFound = "2957" // 404: no such user
	CodeUserState    = "2958" // 409: the user's status does not allow this (reset a disabled user)
	CodeAuditQuery   = "2959" // 400: an audit query's filter is invalid

	// API key roles, batches and a payout link's resent email (2913–2919, 2921–2925).
	CodeKeyRoleRefused      = "2913" // 403: the API key's role does not allow the operation
	CodeKeyRole             = "2914" // 400: a key role that is not full, maker, checker or read
	CodeBatchSelfApproval   = "2915" // 403: the batch's maker cannot approve it
	CodeBatchConflict       = "2916" // 409: the batchId was already used with other items
	CodeBatchTooLarge       = "2917" // 413: more than MaxBatchItems items
	CodeBatchDuplicateOrder = "2918" // a batch item's orderId is repeated in the batch
	CodeBatchOrderUsed      = "2919" // a batch item's orderId is an existing payout's
	CodeBatchNotFound       = "2921" // 404: the merchant has no such batch
	CodeBatchState          = "2922" // 409: only a DRAFT batch can be approved
	CodeBatchCSV            = "2923" // 400: the CSV cannot be read (header, quoting, a row's width)
	CodeBatchBody           = "2924" // 400: batchId or items missing or invalid
	CodeLinkMailLimit       = "2925" // 429: a payout link's email cannot be resent now
)

// CodeInfo describes one code for the README and the OpenAPI description. Original says the
// code and its meaning are the original API's published ones.
type CodeInfo struct {
	Code     string
	Status   int
	Original bool
	Meaning  string
}

// Catalogue lists every code this service answers with, sorted into code order at start-up. A test checks that
// every Code* constant appears here exactly once; the README's table is CatalogueTable().
// Status is the HTTP status of a response whose errors are all of this code's layer: a
// request with a generic error (400) reports its country errors (401) with it, as 400.
var Catalogue = sortedByCode([]CodeInfo{
	{CodeAuthentication, 401, true, "authentication missing or invalid: the API key, timestamp or signature"},
	{CodeCountryRequired, 400, true, "country is required"},
	{CodeAmountRequired, 400, true, "amount is required"},
	{CodeCurrencyRequired, 400, true, "currency is required"},
	{CodeOrderIDRequired, 400, true, "orderId is required"},
	{CodeBeneficiaryRequired, 400, true, "beneficiary is required"},
	{CodeNameRequired, 400, true, "beneficiary.name is required"},
	{CodeLastNameRequired, 400, true, "beneficiary.lastName is required"},
	{CodeDocumentRequired, 400, true, "beneficiary.document is required"},
	{CodeDocumentTypeRequired, 400, true, "beneficiary.document.type is required"},
	{CodeDestinationRequired, 400, true, "destination is required"},
	{CodeBankAccountRequired, 400, true, "destination.bankAccount is required"},
	{CodeDocumentNumRequired, 400, true, "beneficiary.document.number is required"},
	{CodeBankCodeRequired, 401, true, "bankCode is required by the country rules (destination.bankAccount.bankCode)"},
	{CodeAccountTypeRequired, 401, true, "accountType is required by the country rules (destination.bankAccount.accountType)"},
	{CodeAccountNumRequired, 401, true, "accountNumber is required by the country rules (destination.bankAccount.accountNumber)"},
	{CodeCCIRequired, 401, true, "cci is required (destination.bankAccount.cci; Peru, when accountNumber and bankCode are not both sent)"},
	{CodeTooLong, 400, true, "a field longer than allowed (orderId 20, description 50 characters)"},
	{CodeAdminField, 400, false, "a field the admin API needs is missing (a merchant's name)"},
	{CodeUnsupportedMediaType, 415, false, "the body of a JSON endpoint must be sent as Content-Type: application/json"},
	{CodeControlCharacter, 400, false, "a field holds a control character or is not valid UTF-8; an identifier (orderId, batchId, merchant id, a scripted rule's field) holds an invisible or direction-changing character (Unicode Cf)"},
	{CodeNotificationURL, 400, false, "notificationUrl must be an https URL, or sandbox:inbox for the sandbox's built-in inbox (http only with the development flag --allow-private-notification-urls)"},
	{CodeAllowedOrigin, 400, false, "an allowedOrigins entry must be an origin (scheme://host[:port]); * is refused"},
	{CodeReservedMerchantID, 400, false, "the merchant id is reserved by the API's paths"},
	{CodeFundCurrency, 400, false, "a balance's currency must be its country's: COL holds COP; PER holds PEN and USD"},
	{CodeFundAmount, 400, false, "a funding amount must be non-zero and at most 10^15 minor units either way"},
	{CodeBalanceLimit, 409, false, "the funding would take the balance above 10^15 minor units"},
	{CodeWithdrawalTooLarge, 409, false, "the withdrawal is larger than the available balance"},
	{CodeAPIKeyNotFound, 404, false, "no such API key for this merchant"},
	{CodeKeyRoleRefused, 403, false, "the API key's role does not allow the operation: read keys only read, maker keys cannot approve, checker keys only read and approve"},
	{CodeKeyRole, 400, false, "a key role must be full, maker, checker or read"},
	{CodeBatchSelfApproval, 403, false, "a batch cannot be approved by the key or user that made it"},
	{CodeBatchConflict, 409, false, "the batchId was already used with other items"},
	{CodeBatchTooLarge, 413, false, "a batch has at most 10,000 items (and a body of at most 10 MiB)"},
	{CodeBatchDuplicateOrder, 400, false, "in a batch's validation report: the item's orderId is repeated in the batch"},
	{CodeBatchOrderUsed, 400, false, "in a batch's validation report: the item's orderId is an existing payout's"},
	{CodeBatchNotFound, 404, false, "the merchant has no such batch"},
	{CodeBatchState, 409, false, "only a DRAFT batch can be approved"},
	{CodeBatchCSV, 400, false, "the batch's CSV cannot be read: a header of dotted field names, then one row per item of the same width"},
	{CodeBatchBody, 400, false, "a batch needs a batchId (1–40 characters, not only white space) and items, an array of payout requests"},
	{CodeLinkMailLimit, 429, false, "a payout link's email cannot be resent now: at most 5 resends per link, 10 minutes apart"},
	{CodeBackupUnsupported, 501, false, "this storage engine has no online backup (PostgreSQL: use pg_dump)"},
	{CodeFieldRequired, 401, true, "missing field: subMerchantInfo and its code, name and url for a PSP merchant; description and subMerchantInfo.name at Peru wallet 037"},
	{CodeEmailRequired, 401, true, "beneficiary.email is required (Colombia cash, Peru card)"},
	{CodeEmailFormat, 400, true, "email format: beneficiary.email is not an email address"},
	{CodeUnknownField, 400, true, "attribute not valid: a field the payout request does not define (names are case sensitive)"},
	{CodeCountryNotSupported, 401, true, "country not enabled for the merchant: only COL and PER (and only PER on the card endpoint)"},
	{CodeCountryFormat, 400, true, "country invalid: 3 letters (ISO 3166-1 alpha-3)"},
	{CodeAmountNotNumeric, 401, true, "amount not numeric: an integer of minor units above zero, without fraction or exponent"},
	{CodeCurrencyFormat, 400, true, "currency invalid: 3 letters (ISO 4217)"},
	{CodeDocumentType, 401, true, "document.type invalid: beneficiary.document.type is not in the country's document table"},
	{CodeDocumentNotNumeric, 401, true, "document.number not numeric: beneficiary.document.number is digits only, a passport's too"},
	{CodeBankCode, 401, true, "bankCode invalid: destination.bankAccount.bankCode is not in the country's bank list, or is retired"},
	{CodeAccountType, 401, true, "accountType invalid: destination.bankAccount.accountType is not valid for the country or endpoint"},
	{CodeAccountNotNumeric, 401, true, "accountNumber not numeric: destination.bankAccount.accountNumber is digits only"},
	{CodeAmountLength, 401, true, "amount length: at most 10 digits"},
	{CodeAccountNumberType, 400, true, "accountNumber must be a string (a number is accepted)"},
	{CodeCCIType, 400, true, "cci must be a string"},
	{CodeBankCodeType, 400, true, "bankCode must be a string"},
	{CodeAccountTypeType, 400, true, "accountType must be a number (a numeric string, or Colombia's text form, is accepted)"},
	{CodeAmountType, 400, true, "amount must be a number"},
	{CodeDocumentTypeType, 400, true, "document.type must be a number: beneficiary.document.type is an integer"},
	{CodeTimeoutURLRequired, 401, true, "timeoutUrl required for a card payout"},
	{CodeCardEndpointOnly, 401, true, "a Peru card goes to the card endpoint: a Peru card payout (accountType 5) uses POST /payouts/card"},
	{CodeCardNotEnabled, 401, true, "merchant has no card credentials for the currency: the merchant is not enabled for card payouts (setting cardPayouts)"},
	{CodeDNILength, 401, true, "DNI 8 digits: a Peru DNI has exactly 8 digits"},
	{CodePASLength, 401, true, "PAS 7–12: a Peru passport has 7 to 12 digits"},
	{CodeCELength, 401, true, "CE 8–12: a Peru CE has 8 to 12 digits"},
	{CodeRUCLength, 401, true, "RUC 11: a Peru RUC has exactly 11 digits"},
	{CodePER001Account, 401, true, "accountNumber 18 or 20 digits at 001 (Peru bank 001)"},
	{CodePER002Current, 401, true, "13 digits for a current account at 002 (Peru bank 002)"},
	{CodePER003Account, 401, true, "13 digits at 003: a Peru bank 003 accountNumber has 13 digits"},
	{CodePER004Account, 401, true, "10 digits at 004: a Peru bank 004 accountNumber has 10 digits"},
	{CodeCCILength, 401, true, "cci 20 digits: a CCI has 20 digits (cci, or an accountNumber that must be a CCI)"},
	{CodeCCINotNumeric, 401, true, "cci numeric: a CCI is digits only"},
	{CodePER002CurrentPEN, 401, true, "position 11 of a 002 current account is 0 for PEN (Peru bank 002, accountNumber)"},
	{CodePER002CurrentUSD, 401, true, "position 11 of a 002 current account is 1 for USD (Peru bank 002, accountNumber)"},
	{CodeCCI001, 401, true, "cci starts 011 at 001 (Peru bank 001)"},
	{CodeCCI002, 401, true, "cci starts 002 at 002 (Peru bank 002)"},
	{CodeCCI002Current, 401, true, "cci positions 7–8 are 00 for a 002 current account (Peru bank 002)"},
	{CodeCCI002Savings, 401, true, "cci position 7 is 1 for a 002 savings account (Peru bank 002)"},
	{CodeCCI003, 401, true, "cci starts 003 at 003 (Peru bank 003)"},
	{CodeCCI004, 401, true, "cci starts 009 at 004 (Peru bank 004)"},
	{CodePER002SavingsPEN, 401, true, "position 12 of a 002 savings account is 0 for PEN (Peru bank 002, accountNumber)"},
	{CodePER002SavingsUSD, 401, true, "position 12 of a 002 savings account is 1 for USD (Peru bank 002, accountNumber)"},
	{CodePER002Savings, 401, true, "14 digits for savings at 002 (Peru bank 002)"},
	{CodePERAboveLimit, 401, true, "amount over the destination's limit: the Peru maximum is 30,000 PEN; wallet 037 cellphone 3,000 PEN; this service's 8,000 USD"},
	{CodeCCIUnknownBank, 401, true, "cci prefix is no Peruvian bank: the first 3 digits of the CCI are no Peru bank of the list"},
	{CodePERCellphone, 401, true, "cellphone 9 digits starting 9: a Peru cellphone number (accountType 4, or a wallet's account)"},
	{CodePERCellphoneMax, 401, true, "cellphone over 500 PEN: a Peru cellphone payout is at most 500 PEN"},
	{CodePERCellphonePEN, 401, true, "cellphone only in PEN: a Peru cellphone payout is in PEN only"},
	{CodePERCellphoneBank, 401, true, "bankCode required for a cellphone payout in Peru"},
	{CodeCCI002CurrentPEN, 401, true, "cci position 16 of a 002 account is 0 for PEN (Peru bank 002, current account)"},
	{CodeCCI002CurrentUSD, 401, true, "cci position 16 of a 002 account is 1 for USD (Peru bank 002, current account)"},
	{CodeCCI002SavingsPEN, 401, true, "cci position 16 of a 002 account is 0 for PEN (Peru bank 002, savings account)"},
	{CodeCCI002SavingsUSD, 401, true, "cci position 16 of a 002 account is 1 for USD (Peru bank 002, savings account)"},
	{CodePERWalletCellphone, 401, true, "accountType must be cellphone at wallets 033, 037, 040: Peru wallets 037 and 040 take only accountType 4 (033 is retired)"},
	{CodePERCellphoneAccount, 401, true, "accountNumber required for a cellphone payout in Peru (the cellphone number)"},
	{CodePER001Account20, 401, true, "20-digit 001 account has 00 at positions 9–10 (Peru bank 001)"},
	{CodeCOLDocumentMin, 401, true, "document.number at least 6 digits (Colombia)"},
	{CodeCOPDecimals, 401, true, "amount must end in 00 (Colombia: the last two digits are decimals)"},
	{CodeCOLWallet507Type, 401, true, "accountType must be savings at 507: wallet 507 takes accountType 2 (savings), and here 4 (cellphone) too"},
	{CodeCOL507Length, 401, true, "accountNumber 10 digits at 507 (wallet 507)"},
	{CodeCOL507Prefix, 401, true, "starts with 3 at 507: a wallet 507 accountNumber starts with 3"},
	{CodeCOL051Account, 401, true, "≥ 12 digits at 051 (savings/current): a Colombia bank 051 savings or current account number"},
	{CodeCOL007Account, 401, true, "≤ 11 digits at 007: a Colombia bank 007 account number has at most 11 digits"},
	{CodeCOL032Account, 401, true, "≤ 11 digits at 032: a Colombia bank 032 account number has at most 11 digits"},
	{CodeCOL001Account, 401, true, "≤ 9 digits at 001: a Colombia bank 001 account number has at most 9 digits"},
	{CodeCOL551Length, 401, true, "10 digits at 551: a wallet 551 accountNumber has 10 digits"},
	{CodeCOL551Prefix, 401, true, "starts with 3 at 551: a wallet 551 accountNumber starts with 3"},
	{CodeCOLWallet551Type, 401, true, "savings at 551: wallet 551 takes accountType 2 (savings), and here 4 (cellphone) too"},
	{CodeCashAboveMax, 401, true, "cash amount over the cash maximum: a Colombia cash payout is at most 1,000,000 COP"},
	{CodeCashAccountType, 401, true, "accountType must be cash at 099: bank 099 takes only cash, accountType 3"},
	{CodeCashBankCode, 401, true, "bankCode must be 099 for cash (Colombia)"},
	{CodeCashBelowMin, 401, true, "cash amount under the cash minimum: a Colombia cash payout is at least 20,000 COP"},
	{CodeDateFormat, 401, true, "expirationDate not YYYY-MM-DD (Colombia)"},
	{CodeCashExpiration, 401, true, "expirationDate outside 1..7 days: Colombia cash expirationDate is 1 to 7 days ahead in UTC-5"},
	{CodeCOLWalletDocType, 401, true, "document type not allowed at the wallet: Colombia wallets 507 and 551 take only document types 1, 2, 4 and 8"},
	{CodeCOLAccountNumber, 401, true, "accountNumber 5–17 digits: a Colombia bank account number"},
	{CodeCOL803Account, 401, true, "10 digits at 803: a Colombia bank 803 account number has 10 digits"},
	{CodeCOL013Account, 401, true, "9, 10 or 16 digits at 013: a Colombia bank 013 account number"},
	{CodeCOLCellphoneLength, 401, true, "cellphone has 10 digits (Colombia)"},
	{CodeCOLCellphonePrefix, 401, true, "cellphone starts with 3 (Colombia)"},
	{CodeBreBKeyLength, 401, true, "Bre-B key 5–100 characters"},
	{CodeBreBKeyAccents, 401, true, "Bre-B key without accents or ñ"},
	{CodeNUIP, 401, true, "NUIP 10 digits, not starting with 0 (Colombia)"},
	{CodePEP, 401, true, "PEP numeric, 7–15: this service takes a Colombia PEP of 7 to 18 digits"},
	{CodePPT, 401, true, "PPT alphanumeric, 10–15: this service takes a Colombia PPT of 10 to 18 digits, digits only"},
	{CodeOrderIDDuplicated, 409, true, "orderId duplicated: the orderId was already used with a different request"},
	{CodeAboveMaximum, 401, true, "amount over the maximum for this case"},
	{CodeBelowMinimum, 401, true, "amount under the minimum for this case"},
	{CodeAdditionalCellphone, 401, true, "AdittionalAccountInfo must be a cellphone number (accountNumber is a bank account)"},
	{CodeAdditionalAccount, 401, true, "AdittionalAccountInfo must be a bank account (accountNumber is a cellphone number)"},
	{CodeAdditionalEquals, 401, true, "AdittionalAccountInfo equals accountNumber"},
	{CodeDenied, 200, true, "anti-fraud rules: payout denied (status DENIED)"},
	{CodeBankRejected, 200, true, "beneficiary not the owner: payout rejected by the bank (status REJECTED_BANK)"},
	{CodeBankOutOfService, 200, true, "bank out of service: payout rejected (status REJECTED_BANK)"},
	{CodeAccountNotFound, 200, true, "account does not exist: payout rejected by the bank (status REJECTED_BANK)"},
	{CodeCardDeclined, 200, true, "refer to card issuer: card payment declined (status REJECTED_BANK)"},
	{CodeLinkOwnership, 200, true, "We couldn't verify the account ownership because the beneficiary selected a different bank (a payout link's review: a typed document that is not the merchant's, or a holder the beneficiary does not confirm, is a failed attempt on the link's page; a bank the directory does not list for the cellphone or key ends the payout: status REJECTED_BANK)"},
	{CodeLinkExpired, 200, true, "The beneficiary's account registration process has expired. A new request is required. (a payout link not completed in time: status EXPIRED)"},
	{CodeBodyRequired, 400, false, "the request body is missing"},
	{CodeMalformedJSON, 400, false, "the body is not a JSON object"},
	{CodeWrongType, 400, false, "a field has the wrong JSON type"},
	{CodeAmountFormat, 400, false, "amount must be a positive number"},
	{CodeURLFormat, 400, false, "a URL field is not an absolute http(s) URL"},
	{CodeBodyTooLarge, 413, false, "the body is over 64 KiB"},
	{CodeQueryParam, 400, false, "a query parameter is invalid"},
	{CodeCurrencyNotAllowed, 401, false, "the currency is not allowed for the country (COL: COP; PER: PEN or USD)"},
	{CodeEmailTooLong, 401, false, "beneficiary.email is longer than the country allows (COL 100, PER 50 characters)"},
	{CodeEmailDummy, 401, false, "beneficiary.email is a dummy or placeholder address"},
	{CodeLogoNotHTTPS, 401, false, "merchantLogo must be an https URL, or http on 127.0.0.1 or localhost (card payout)"},
	{CodeExpirationTime, 401, false, "expirationTime must be a whole number of minutes from 5 to 30 (Peru card)"},
	{CodeLinkExpiration, 400, false, "a payout link's expirationTime must be a whole number of minutes from 5 to 43200 (30 days)"},
	{CodeLinkDestinations, 400, false, "a payout link's allowedDestinations must list account types the country offers this merchant"},
	{CodeLinkReturnURL, 400, false, "a payout link's returnUrl must be an absolute http or https URL"},
	{CodeLinkNoDestination, 400, false, "a payout link takes no destination: the beneficiary gives it"},
	{CodeLinkLang, 400, false, "a payout link's lang must be es or en"},
	{CodeLinkNeedsEmail, 400, false, "a batch item without destination becomes a payout link and needs beneficiary.email to reach its beneficiary"},
	{CodeRUCAtBank004, 401, false, "RUC is not available for accounts at Peru bank 004"},
	{CodeCCIBankMismatch, 401, false, "the first 3 digits of cci are not those of the bankCode sent"},
	{CodeRealTimeNeedsCCI, 401, false, "the Peru bank takes real-time payouts only, and real-time requires cci"},
	{CodeCOLDocumentMax, 401, false, "beneficiary.document.number is longer than its Colombia document type allows"},
	{CodeBreBKey, 401, false, "the Bre-B key is not a phone, national ID, email or @alias"},
	{CodeRateLimited, 429, false, "too many requests; retry after the Retry-After header"},
	{CodeNotEnabled, 401, false, "the merchant is not enabled for this channel or product"},
	{CodePayoutNotFound, 404, false, "no such payout for this merchant"},
	{CodeNoChannel, 401, false, "the bank offers no channel for this kind of payout (see the bank tables)"},
	{CodeNoBalance, 200, false, "payout rejected: the merchant's balance does not cover it (status NO_BALANCE)"},
	{CodeExpired, 200, false, "payout rejected: the card session or cash claim expired (status EXPIRED)"},
	{CodeCardSessionExpired, 410, false, "the card form session expired"},
	{CodeCardAttemptsExceded, 410, false, "five failed card submissions ended the session"},
	{CodeWrongState, 409, false, "the payout is not in a state that allows this action"},
	{CodeClaimCodeWrong, 401, false, "the Colombia cash claim code is wrong (5 wrong codes lock the claim)"},
	{CodeClaimLocked, 409, false, "5 wrong codes locked the Colombia cash claim until it expires"},
	{CodeClaimExpired, 409, false, "the Colombia cash claim expired (the payout is or becomes REJECTED/EXPIRED)"},
	{CodeSandboxOff, 403, false, "sandbox controls are off on this server"},
	{CodeMerchantNotFound, 404, false, "no such merchant"},
	{CodeNoSuchEndpoint, 404, false, "no such endpoint"},
	{CodeMethodNotAllowed, 405, false, "the endpoint does not take this method"},
	{CodeReversed, 200, false, "payout returned by the beneficiary's bank (status REVERSED)"},
	{CodeInternal, 500, false, "internal failure; the server log has the details"},

	// Sandbox powers and the event log.
	{CodeCancelRefused, 409, false, "the payout was already sent to the rail (or ended): it can no longer be cancelled"},
	{CodeCancelled, 200, false, "payout cancelled by the merchant before it was sent to the rail (status ERROR)"},
	{CodeClockAdvance, 400, false, "the sandbox clock moves only forward: advance must be a positive duration such as 48h"},
	{CodeScriptRule, 400, false, "a scripted sandbox rule is invalid (match or outcome)"},
	{CodeDirectoryEntry, 400, false, "a simulated directory entry is invalid"},
	{CodeBreBKeyUnknown, 404, false, "the directory knows no such Bre-B key"},
	{CodeEventNotFound, 404, false, "the merchant has no logged event with that id (events are kept 30 days)"},
	{CodeDeliveryChaos, 400, false, "a delivery chaos setting is out of bounds: duplicate 0–1, delay a duration up to 60s, failFirst 0–5"},
	{CodeNoDeliveryURL, 409, false, "the event cannot be resent: the merchant has no notificationUrl"},
	{CodeCertificationRun, 404, false, "no certification run or client certification session by that id (they are kept an hour, on the instance that ran them)"},
	{CodeDirectoryUnavailable, 200, true, "directory entry unavailable: payout rejected, the Bre-B directory has no entry for the key (status REJECTED_BANK)"},

	// Requirements, generated from the rules.
	{CodeRequirementsQuery, 400, false, "a requirements query names a country, account type or bank code that is not in the rule tables"},
	{CodeRequirementsNone, 400, false, "no payout to the queried destination passes the rules for this merchant (the reason says which rule)"},
	// Named users of the dashboard and the audit log.
	{CodeUserField, 400, false, "a user's name, email, role or merchantId is invalid (an operator has no merchantId; a maker, checker or viewer needs an existing one)"},
	{CodeUserExists, 409, false, "another user has this email (compared without case)"},
	{CodeUserNotFound, 404, false, "no such user"},
	{CodeUserState, 409, false, "the user's status does not allow this: enable a disabled user before sending it a new set-up link"},
	{CodeAuditQuery, 400, false, "an audit query's filter is invalid: from and to are RFC 3339 times, limit 1–1000, format json or csv"},
	// Ledger entries, statements and reconciliation.
	{CodeStatementDate, 400, false, "a statement's date must be a day as YYYY-MM-DD"},
	{CodeStatementFuture, 400, false, "the statement's day has not begun yet (days are UTC−5)"},
	{CodeLedgerCurrency, 400, false, "no balance is kept in that currency: COP (Colombia), PEN or USD (Peru)"},
	{CodeReconcileRange, 400, false, "a reconciliation's range must have from on or before to, at most 366 days"},
	// A database at network distance (PostgreSQL) out of reach.
	{CodeUnavailable, 503, false, "service temporarily unavailable: its database cannot be reached; send the same request again after the Retry-After header"},
})

// sortedByCode puts the catalogue, written by topic, in code order.
func sortedByCode(c []CodeInfo) []CodeInfo {
	sort.SliceStable(c, func(i, j int) bool { return c[i].Code < c[j].Code })
	return c
}

// CatalogueTable is the README's error catalogue: one Markdown row per code, in code order,
// with a column that says which codes are the original API's.
func CatalogueTable() string {
	var b strings.Builder
	b.WriteString("| code | HTTP | original | meaning |\n|---|---|---|---|\n")
	for _, c := range Catalogue {
		orig := ""
		if c.Original {
			orig = "yes"
		}
		b.WriteString("| `" + c.Code + "` | " + strconv.Itoa(c.Status) + " | " + orig + " | " + c.Meaning + " |\n")
	}
	return b.String()
}
