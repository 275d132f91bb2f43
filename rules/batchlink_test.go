package rules_test

import (
	"context"
	"strings"
	"testing"

	"payouts/rules"
	"payouts/rules/workers"
)

// linkCSV is a Peru batch: a payout to a savings account, a row without destination (a
// payout link, offering a savings or a current account), and, when bad, a row without
// destination nor email.
func linkCSV(bad bool) string {
	rows := "country,currency,amount,orderId,beneficiary.name,beneficiary.lastName,beneficiary.email,beneficiary.document.type,beneficiary.document.number," +
		"destination.bankAccount.bankCode,destination.bankAccount.accountType,destination.bankAccount.accountNumber,expirationTime,allowedDestinations\n" +
		"PER,PEN,100000,BL-1,Ana,Quispe,,1,45678912,002,2,19312345678012,,\n" +
		"PER,PEN,120000,BL-2,Rosa,Huamán,rosa.huaman@gmail.com,1,45678913,,,,4320,2 1\n"
	if bad {
		rows += "PER,PEN,90000,BL-3,Luis,Rojas,,1,45678914,,,,,\n"
	}
	return rows
}

// A batch row without destination is a payout link; without an email too it is refused
// (1960) at its item and column; approved, a link row is created as a payout link.
func TestBatchLinkRows(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("PER", "PEN", 1000000)
	ctx := context.Background()
	bs := &rules.Batches{Store: w.db, Now: w.clk.Now}

	items, err := rules.ParseBatchCSV(strings.NewReader(linkCSV(true)))
	if err != nil {
		t.Fatal(err)
	}
	b, checked, err := bs.Validate(ctx, w.m, rules.BatchRequest{BatchID: "links-bad", Items: items}, "key:maker", w.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != rules.BatchInvalid || len(b.Errors) != 1 {
		t.Fatalf("a row without destination nor email: %s %+v", b.Status, b.Errors)
	}
	if e := b.Errors[0]; e.Item != 3 || e.Code != rules.CodeLinkNeedsEmail || e.Location != "beneficiary.email" {
		t.Errorf("the error: %+v, want item 3, %s at beneficiary.email", e, rules.CodeLinkNeedsEmail)
	}
	if checked[0].Link || !checked[1].Link || !checked[2].Link {
		t.Errorf("link items: %v %v %v, want false true true", checked[0].Link, checked[1].Link, checked[2].Link)
	}

	// A link row's own fields are checked as the link endpoint checks them.
	badKind := strings.Replace(linkCSV(false), ",4320,2 1", ",4320,2 9", 1)
	items, _ = rules.ParseBatchCSV(strings.NewReader(badKind))
	b, _, err = bs.Validate(ctx, w.m, rules.BatchRequest{BatchID: "links-kind", Items: items}, "key:maker", w.clk.Now())
	if err != nil || len(b.Errors) != 1 || b.Errors[0].Item != 2 || b.Errors[0].Code != rules.CodeLinkDestinations || b.Errors[0].Location != "allowedDestinations[1]" {
		t.Fatalf("a kind Peru does not offer: %v %+v", err, b.Errors)
	}

	items, _ = rules.ParseBatchCSV(strings.NewReader(linkCSV(false)))
	b, created, err := bs.Create(ctx, w.m, rules.BatchRequest{BatchID: "links", Items: items}, "key:maker")
	if err != nil || !created || b.Status != rules.BatchDraft || b.Links != 1 {
		t.Fatalf("create: %v %+v", err, b)
	}
	if _, err := bs.Approve(ctx, w.m.ID, b.ID, "key:checker"); err != nil {
		t.Fatal(err)
	}
	run := &workers.BatchRunner{Store: w.db, Service: w.svc, Now: w.clk.Now,
		Merchants: func(id string) (*rules.Merchant, error) { return w.db.Merchant(ctx, id) }}
	if err := run.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	w.run()
	done, err := w.db.BatchItems(ctx, w.m.ID, b.ID, 0, 0)
	if err != nil || len(done) != 2 || done[0].PayoutID == 0 || done[1].PayoutID == 0 {
		t.Fatalf("items after the run: %v %+v", err, done)
	}
	if p := w.get(done[0].PayoutID); p.Channel == rules.ChannelLink || p.Link != nil {
		t.Errorf("the row with a destination became a link: %s", p.Channel)
	}
	p := w.get(done[1].PayoutID)
	if p.Channel != rules.ChannelLink || p.Link == nil || p.Status != rules.StatusAuthorized || p.Reserved != 120000 ||
		p.Link.Minutes != 4320 || len(p.Link.Kinds) != 2 || p.Link.Kinds[0] != 2 || p.Link.Kinds[1] != 1 {
		t.Fatalf("the link row's payout: %s %s reserved %d %+v", p.Channel, p.Status, p.Reserved, p.Link)
	}
	c, _ := rules.Summarize(b, done)
	if c.Links != 1 || c.Created != 2 {
		t.Errorf("counts: %+v", c)
	}
}
