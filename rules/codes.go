package rules

// The error catalogue (contract section 3). Codes are stable numeric strings:
// 10xx a missing field, 11xx an invalid field, 12xx a Peru rule, 15xx a Colombia rule,
// 2xxx a business rule, 4xxx a rejection by the bank, 5xxx an internal failure.
// Codes marked (wire) are those of the original API and must not change.
const (
	CodeBodyRequired         = "1000"
	CodeAuthentication       = "1001" // (wire)
	CodeCountryRequired      = "1002"
	CodeAmountRequired       = "1003"
	CodeCurrencyRequired     = "1004"
	CodeOrderIDRequired      = "1005"
	CodeBeneficiaryRequired  = "1006"
	CodeNameRequired         = "1007"
	CodeLastNameRequired     = "1008"
	CodeDocumentRequired     = "1009"
	CodeDocumentTypeRequired = "1010"
	CodeDocumentNumRequired  = "1011"
	CodeDestinationRequired  = "1012"
	CodeBankAccountRequired  = "1013"
	CodeBankCodeRequired     = "1014"
	CodeAccountTypeRequired  = "1015"
	CodeAccountNumRequired   = "1016"
	CodeCCIRequired          = "1017"
	CodeSubMerchantRequired  = "1019"
	CodeSubMerchantCode      = "1020"
	CodeSubMerchantName      = "1021"
	CodeSubMerchantURL       = "1022"
	CodeDescriptionRequired  = "1023"
	CodeEmailRequired        = "1033" // (wire)

	CodeMalformedJSON       = "1100"
	CodeWrongType           = "1101"
	CodeUnknownField        = "1102"
	CodeTooLong             = "1103"
	CodeCountryFormat       = "1104"
	CodeCurrencyFormat      = "1105"
	CodeAmountFormat        = "1106"
	CodeURLFormat           = "1107"
	CodeDateFormat          = "1108"
	CodeEmailFormat         = "1109"
	CodeEmptyValue          = "1110"
	CodeTimeoutURLRequired  = "1121" // (wire)
	CodeCardEndpointOnly    = "1122" // (wire)
	CodeCardAccountType     = "1123"
	CodeBodyTooLarge        = "1124"
	CodeQueryParam          = "1125"
	CodeCardSessionExpired  = "1126"
	CodeCardAttemptsExceded = "1127"
	CodeAmountInteger       = "1128"
	CodeCurrencyNotAllowed  = "1129"
	CodeBankUnknown         = "1130"
	CodeBankRetired         = "1131"
	CodeDocumentType        = "1132"
	CodeAccountType         = "1133"
	CodeEmailTooLong        = "1134"
	CodeEmailDummy          = "1135"
	CodeLogoNotHTTPS        = "1136"
	CodeExpirationTime      = "1137"

	CodeDNILength        = "1201" // (wire)
	CodePASLength        = "1202" // (wire)
	CodeCELength         = "1203" // (wire)
	CodeRUCLength        = "1204" // (wire)
	CodeRUCAtBank004     = "1205"
	CodePERAccountNumber = "1206"
	CodePERCellphone     = "1207"
	CodeCCIBankMismatch  = "1208"
	CodeCCIFormat        = "1209" // (wire)
	CodeAccountNumberCCI = "1210" // (wire)
	CodeRealTimeNeedsCCI = "1211"

	CodeCOLDocumentNumber = "1501"
	CodeCOLWalletDocType  = "1502"
	CodeCOPDecimals       = "1503" // (wire)
	CodeCOLWalletAccount  = "1504"
	CodeCOLCellphone      = "1505"
	CodeCashExpiration    = "1506"
	CodeBreBKey           = "1507"
	CodeCashBankCode      = "1508"
	CodeCOLAccountNumber  = "1509"

	CodeCountryNotSupported = "2001"
	CodeNotEnabled          = "2002"
	CodePayoutNotFound      = "2004"
	CodeOrderIDDuplicated   = "2005" // (wire)
	CodeAboveMaximum        = "2010" // (wire)
	CodeBelowMinimum        = "2011" // (wire)
	CodeNoChannel           = "2012"
	CodeNoBalance           = "2020"
	CodeExpired             = "2030"
	CodeWrongState          = "2050"
	CodeClaimCodeWrong      = "2051"
	CodeClaimLocked         = "2052"
	CodeClaimExpired        = "2053"
	CodeSandboxOff          = "2060"
	CodeMerchantNotFound    = "2070"
	CodeNoSuchEndpoint      = "2080"
	CodeMethodNotAllowed    = "2081"
	CodeRateLimited         = "2900"

	CodeBankRejected = "4001"
	CodeBankDenied   = "4002"
	CodeCardDeclined = "4003"
	CodeReversed     = "4004"

	CodeInternal = "5000"

	// Issue 15, sandbox powers. This project's own codes sit in the 29xx business block,
	// which the original does not use; 4027 is the original's published bank code.
	CodeCancelRefused        = "2960" // 409: the payout was already sent to the rail
	CodeCancelled            = "2961" // outcome REJECTED/ERROR: cancelled by the merchant
	CodeClockAdvance         = "2962" // 400: the test clock's advance is not a positive duration
	CodeScriptRule           = "2963" // 400: a scripted sandbox rule is invalid
	CodeDirectoryEntry       = "2964" // 400: a simulated directory entry is invalid
	CodeBreBKeyUnknown       = "2965" // 404: the directory knows no such Bre-B key
	CodeDirectoryUnavailable = "4027" // (wire) the directory has no entry for the key
)

// CodeInfo describes one code for the README and the OpenAPI description.
type CodeInfo struct {
	Code    string
	Status  int
	Meaning string
}

// Catalogue lists every code this service answers with, in code order. A test checks that
// every Code* constant appears here exactly once.
var Catalogue = []CodeInfo{
	{CodeBodyRequired, 400, "the request body is missing"},
	{CodeAuthentication, 401, "authentication failed: API key, timestamp or signature (wire)"},
	{CodeCountryRequired, 400, "country is required"},
	{CodeAmountRequired, 400, "amount is required"},
	{CodeCurrencyRequired, 400, "currency is required"},
	{CodeOrderIDRequired, 400, "orderId is required"},
	{CodeBeneficiaryRequired, 400, "beneficiary is required"},
	{CodeNameRequired, 400, "beneficiary.name is required"},
	{CodeLastNameRequired, 400, "beneficiary.lastName is required"},
	{CodeDocumentRequired, 400, "beneficiary.document is required"},
	{CodeDocumentTypeRequired, 400, "beneficiary.document.type is required"},
	{CodeDocumentNumRequired, 400, "beneficiary.document.number is required"},
	{CodeDestinationRequired, 400, "destination is required"},
	{CodeBankAccountRequired, 400, "destination.bankAccount is required"},
	{CodeBankCodeRequired, 401, "destination.bankAccount.bankCode is required by the country rules"},
	{CodeAccountTypeRequired, 401, "destination.bankAccount.accountType is required by the country rules"},
	{CodeAccountNumRequired, 401, "destination.bankAccount.accountNumber is required by the country rules"},
	{CodeCCIRequired, 401, "destination.bankAccount.cci is required (Peru, when accountNumber and bankCode are not both sent)"},
	{CodeSubMerchantRequired, 401, "subMerchantInfo is required for a PSP merchant"},
	{CodeSubMerchantCode, 401, "subMerchantInfo.code is required for a PSP merchant"},
	{CodeSubMerchantName, 401, "subMerchantInfo.name is required (PSP merchant, or Peru wallet 037)"},
	{CodeSubMerchantURL, 401, "subMerchantInfo.url is required for a PSP merchant"},
	{CodeDescriptionRequired, 401, "description is required (Peru wallet 037: the merchant's commercial name)"},
	{CodeEmailRequired, 401, "beneficiary.email is required (Colombia cash, Peru card) (wire)"},
	{CodeMalformedJSON, 400, "the body is not a JSON object"},
	{CodeWrongType, 400, "a field has the wrong JSON type"},
	{CodeUnknownField, 400, "a field the specification does not define"},
	{CodeTooLong, 400, "a field is longer than the generic contract allows"},
	{CodeCountryFormat, 400, "country must be 3 letters (ISO 3166-1 alpha-3)"},
	{CodeCurrencyFormat, 400, "currency must be 3 letters (ISO 4217)"},
	{CodeAmountFormat, 400, "amount must be a positive number"},
	{CodeURLFormat, 400, "a URL field is not an absolute http(s) URL"},
	{CodeDateFormat, 400, "a date field is not YYYY-MM-DD"},
	{CodeEmailFormat, 400, "beneficiary.email is not an email address"},
	{CodeEmptyValue, 400, "a field is present but empty"},
	{CodeTimeoutURLRequired, 401, "timeoutUrl is required for a card payout (wire)"},
	{CodeCardEndpointOnly, 401, "a Peru card payout (accountType 5) must use the card endpoint (wire)"},
	{CodeCardAccountType, 401, "the card endpoint takes only Peru payouts with accountType 5"},
	{CodeBodyTooLarge, 413, "the body is over 64 KiB"},
	{CodeQueryParam, 400, "a query parameter is invalid"},
	{CodeCardSessionExpired, 410, "the card form session expired"},
	{CodeCardAttemptsExceded, 410, "five failed card submissions ended the session"},
	{CodeAmountInteger, 401, "amount must be an integer of minor units, at most 10 digits, without fraction or exponent (spec 2.4, 2.5)"},
	{CodeCurrencyNotAllowed, 401, "the currency is not allowed for the country or destination (COL: COP; PER: PEN or USD, cellphone PEN only)"},
	{CodeBankUnknown, 401, "destination.bankAccount.bankCode is not in the country's bank list (spec 2.4, 2.5)"},
	{CodeBankRetired, 401, "the bank code is retired and supports no channel (spec 2.4, 2.5)"},
	{CodeDocumentType, 401, "beneficiary.document.type is not in the country's document table (spec 2.4, 2.5)"},
	{CodeAccountType, 401, "destination.bankAccount.accountType is not valid for the country or endpoint (spec 2.4, 2.5)"},
	{CodeEmailTooLong, 401, "beneficiary.email is longer than the country allows (COL 100, PER 50 characters)"},
	{CodeEmailDummy, 401, "beneficiary.email is a dummy or placeholder address (spec 2.2)"},
	{CodeLogoNotHTTPS, 401, "merchantLogo must be an https URL (card payout)"},
	{CodeExpirationTime, 401, "expirationTime must be a whole number of minutes from 5 to 30 (spec 8, Peru rule 3)"},
	{CodeDNILength, 401, "a Peru DNI has exactly 8 digits (wire)"},
	{CodePASLength, 401, "a Peru passport has 7 to 12 characters (wire)"},
	{CodeCELength, 401, "a Peru CE has 8 to 12 digits (wire)"},
	{CodeRUCLength, 401, "a Peru RUC has exactly 11 digits (wire)"},
	{CodeRUCAtBank004, 401, "RUC is not available for accounts at Peru bank 004 (spec 2.5)"},
	{CodePERAccountNumber, 401, "accountNumber does not have the format of the Peru bank (spec 2.5)"},
	{CodePERCellphone, 401, "a Peru cellphone number has 9 digits and starts with 9 (spec 2.5)"},
	{CodeCCIBankMismatch, 401, "the first 3 digits of cci are not the bankCode sent"},
	{CodeCCIFormat, 401, "cci must be 20 digits (wire)"},
	{CodeAccountNumberCCI, 401, "accountNumber must be a 20-digit CCI for this Peru bank (wire)"},
	{CodeRealTimeNeedsCCI, 401, "the Peru bank takes real-time payouts only, and real-time requires cci (spec 8, Peru rule 2)"},
	{CodeCOLDocumentNumber, 401, "beneficiary.document.number does not fit its Colombia document type (spec 2.4)"},
	{CodeCOLWalletDocType, 401, "Colombia wallets 507 and 551 take only document types 1, 2, 4 and 8 (spec 2.4)"},
	{CodeCOPDecimals, 401, "a Colombia amount must end in 00 (wire)"},
	{CodeCOLWalletAccount, 401, "Colombia wallets 507 and 551 take only accountType 2 or 4 (spec 8)"},
	{CodeCOLCellphone, 401, "a Colombia cellphone number has 10 digits and starts with 3"},
	{CodeCashExpiration, 401, "Colombia cash expirationDate must be 1 to 7 days ahead in UTC-5 (spec 8)"},
	{CodeBreBKey, 401, "the Bre-B key is not a phone, national ID, email or @alias of 5 to 100 characters (spec 2.4)"},
	{CodeCashBankCode, 401, "a Colombia cash payout uses bank code 099 (spec 2.4 cash sample)"},
	{CodeCOLAccountNumber, 401, "a Colombia account number is 1 to 20 digits"},
	{CodeCountryNotSupported, 401, "the country is not supported (only COL and PER)"},
	{CodeNotEnabled, 401, "the merchant is not enabled for this channel or product"},
	{CodePayoutNotFound, 404, "no such payout for this merchant"},
	{CodeOrderIDDuplicated, 409, "the orderId was already used with a different request (wire)"},
	{CodeAboveMaximum, 401, "the amount is above the maximum for this case (wire)"},
	{CodeBelowMinimum, 401, "the amount is below the minimum for this case (wire)"},
	{CodeNoChannel, 401, "the bank offers no channel for this kind of payout (spec 2.4, 2.5 bank tables)"},
	{CodeNoBalance, 200, "payout rejected: the merchant's balance does not cover it (status NO_BALANCE)"},
	{CodeExpired, 200, "payout rejected: the card session or cash claim expired (status EXPIRED)"},
	{CodeWrongState, 409, "the payout is not in a state that allows this action"},
	{CodeClaimCodeWrong, 401, "the Colombia cash claim code is wrong (5 wrong codes lock the claim)"},
	{CodeClaimLocked, 409, "5 wrong codes locked the Colombia cash claim until it expires"},
	{CodeClaimExpired, 409, "the Colombia cash claim expired (the payout is or becomes REJECTED/EXPIRED)"},
	{CodeSandboxOff, 403, "sandbox controls are off on this server"},
	{CodeMerchantNotFound, 404, "no such merchant"},
	{CodeNoSuchEndpoint, 404, "no such endpoint"},
	{CodeMethodNotAllowed, 405, "the endpoint does not take this method"},
	{CodeRateLimited, 429, "too many requests; retry after the Retry-After header"},
	// Issue 15, sandbox powers.
	{CodeCancelRefused, 409, "the payout was already sent to the rail (or ended): it can no longer be cancelled"},
	{CodeCancelled, 200, "payout cancelled by the merchant before it was sent to the rail (status ERROR)"},
	{CodeClockAdvance, 400, "the sandbox clock moves only forward: advance must be a positive duration such as 48h"},
	{CodeScriptRule, 400, "a scripted sandbox rule is invalid (match or outcome)"},
	{CodeDirectoryEntry, 400, "a simulated directory entry is invalid"},
	{CodeBreBKeyUnknown, 404, "the directory knows no such Bre-B key"},

	{CodeBankRejected, 200, "payout rejected by the bank (status REJECTED_BANK)"},
	{CodeBankDenied, 200, "payout denied (status DENIED)"},
	{CodeCardDeclined, 200, "card payment declined by the issuer (status REJECTED_BANK)"},
	{CodeReversed, 200, "payout returned by the beneficiary's bank (status REVERSED)"},
	// Issue 15, sandbox powers.
	{CodeDirectoryUnavailable, 200, "payout rejected: the directory has no entry for the Bre-B key (status REJECTED_BANK) (wire)"},

	{CodeInternal, 500, "internal failure; the server log has the details"},
}
