package servertest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Batch is a batch as the API answers it.
type Batch struct {
	ID         int64  `json:"id"`
	BatchID    string `json:"batchId"`
	Status     string `json:"status"`
	MadeBy     string `json:"madeBy"`
	ApprovedBy string `json:"approvedBy"`
	NotifiedAt string `json:"notifiedAt"`
	Counts     struct {
		Items, Valid, Invalid, Created, Refused, Pending, Final int
		ByStage                                                 map[string]int
	} `json:"counts"`
	Totals []struct {
		Currency     string
		Items        int
		Amount, Paid int64
	} `json:"totals"`
	Errors []struct {
		Item                    int
		Code, Location, Message string
	} `json:"errors"`
}

// DecodeBatch reads a batch answer, or fails the test.
func DecodeBatch(t testing.TB, raw []byte) Batch {
	t.Helper()
	var b Batch
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("decode batch: %v: %s", err, raw)
	}
	return b
}

// BatchItems are n valid Peru items with orderIds prefix1…prefixN.
func BatchItems(prefix string, n int) []any {
	items := make([]any, n)
	for i := range items {
		items[i] = PerBankRequest(prefix + strconv.Itoa(i+1))
	}
	return items
}

// BatchCSV is a CSV of n valid Peru items with orderIds prefix1…prefixN.
func BatchCSV(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("country,currency,amount,orderId,beneficiary.name,beneficiary.lastName,beneficiary.email,beneficiary.document.type,beneficiary.document.number,destination.bankAccount.bankCode,destination.bankAccount.accountType,destination.bankAccount.accountNumber\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "PER,PEN,100000,%s%d,Ana,Quispe,,1,45678912,002,2,19312345678012\n", prefix, i)
	}
	return b.String()
}

// WaitBatch polls GET …/batches/{id} until done says so, or fails the test.
func (c *Merchant) WaitBatch(t testing.TB, id int64, within time.Duration, done func(Batch) bool) Batch {
	t.Helper()
	var last Batch
	if Poll(within, func() bool {
		code, _, raw := c.Do(t, "GET", "batches/"+strconv.FormatInt(id, 10), nil, "")
		if code != 200 {
			t.Fatalf("GET batch %d: %d %s", id, code, raw)
		}
		last = DecodeBatch(t, raw)
		return done(last)
	}) {
		return last
	}
	t.Fatalf("batch %d not done within %v: %+v", id, within, last)
	return last
}
