package rules

import "time"

// Placeholder until the country rules land (issue 3): accepts integer amounts on the batch rail.
func checkColombia(ps *problems, req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) Route {
	n, _ := req.Amount.Int64()
	return Route{Amount: n, Channel: ChannelBatch}
}

func checkPeru(ps *problems, req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) Route {
	n, _ := req.Amount.Int64()
	at, _ := req.Destination.BankAccount.AccountType.Int()
	ch := ChannelRealTime
	if ep == EndpointCard {
		ch = ChannelCard
	}
	return Route{Amount: n, Channel: ch, AccountType: at, ExpirationMinutes: 15}
}
