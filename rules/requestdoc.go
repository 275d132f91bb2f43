package rules

import "encoding/json"

// requestOf is the typed request of a body whose generic decode passed the shape check (or
// was pruned to what passes it): the values encoding/json would give the struct, taken from
// the decode already made instead of parsing the body a second time. A JSON null, like a
// missing key, leaves its field empty. Both spellings of the time-out URL are taken;
// timeoutUrl wins when a body gives both.
func requestOf(obj map[string]any) PayoutRequest {
	r := PayoutRequest{
		Country:        docString(obj["country"]),
		Amount:         docNumber(obj["amount"]),
		Currency:       docString(obj["currency"]),
		OrderID:        docString(obj["orderId"]),
		Description:    docString(obj["description"]),
		TimeoutURL:     docString(obj["timeoutUrl"]),
		MerchantLogo:   docString(obj["merchantLogo"]),
		ExpirationTime: docText(obj["expirationTime"]),
	}
	if r.TimeoutURL == "" {
		r.TimeoutURL = docString(obj["TimeoutURL"])
	}
	if b, ok := obj["beneficiary"].(map[string]any); ok {
		r.Beneficiary = Beneficiary{
			CustomerID:  docString(b["customerId"]),
			UserName:    docString(b["userName"]),
			Name:        docString(b["name"]),
			LastName:    docString(b["lastName"]),
			Email:       docString(b["email"]),
			PhoneNumber: docString(b["phoneNumber"]),
			Address:     docAddress(b["address"]),
		}
		if d, ok := b["document"].(map[string]any); ok {
			r.Beneficiary.Document = Document{Type: docInt(d["type"]), Number: docString(d["number"])}
		}
	}
	if d, ok := obj["destination"].(map[string]any); ok {
		if a, ok := d["bankAccount"].(map[string]any); ok {
			r.Destination.BankAccount = BankAccount{
				BankCode:              docString(a["bankCode"]),
				AccountType:           docText(a["accountType"]),
				AccountNumber:         docText(a["accountNumber"]),
				CLABE:                 docString(a["clabe"]),
				CBU:                   docString(a["cbu"]),
				CCI:                   docString(a["cci"]),
				AdittionalAccountInfo: docText(a["AdittionalAccountInfo"]),
				Alias:                 docString(a["alias"]),
				ExpirationDate:        docString(a["expirationDate"]),
				Location:              docAddress(a["location"]),
			}
		}
	}
	if s, ok := obj["subMerchantInfo"].(map[string]any); ok {
		r.SubMerchantInfo = &SubMerchantInfo{Code: docString(s["code"]), Name: docString(s["name"]), URL: docString(s["url"])}
	}
	return r
}

func docString(v any) string {
	s, _ := v.(string)
	return s
}

func docNumber(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}

// docText is a string or a number kept as its text, as Text.UnmarshalJSON keeps it.
func docText(v any) Text {
	switch x := v.(type) {
	case string:
		return Text(x)
	case json.Number:
		return Text(x)
	}
	return ""
}

func docInt(v any) int {
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return int(i)
}

func docAddress(v any) *Address {
	a, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return &Address{Street: docString(a["street"]), HouseNumber: docString(a["houseNumber"]),
		AdditionalInfo: docString(a["additionalInfo"]), City: docString(a["city"]), Province: docString(a["province"]),
		Country: docString(a["country"]), ZipCode: docString(a["zipCode"])}
}
