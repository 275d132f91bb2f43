package rules_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payouts/rules"
)

// The hooks of a create and of an outcome run in the order bound, each seeing the events
// the ones before it gave, and what they give is written with the payout.
func TestHooksRunInTheOrderBound(t *testing.T) {
	settings := rules.AllSettings()
	settings.NotificationURL = "https://tienda.example/hook"
	w := newWorld(t, settings, "", nil)
	w.fund("PER", "PEN", 100_000_00)
	var ran []string
	createHook := func(name string) rules.CreateHook {
		return func(p *rules.Payout, m *rules.Merchant, evs []rules.Event) ([]rules.Event, error) {
			ran = append(ran, name+" sees "+ids(evs))
			return append(evs, rules.Event{ID: "ev-" + name, Kind: rules.EventBeneficiaryMail, MerchantID: p.MerchantID,
				CreatedAt: w.clk.Now(), NextAt: w.clk.Now()}), nil
		}
	}
	outcomeHook := func(name string) rules.OutcomeHook {
		return func(p *rules.Payout, m *rules.Merchant, evs []rules.Event) []rules.Event {
			ran = append(ran, name+" sees "+strings.Join(kinds(evs), ","))
			return append(evs, rules.Event{ID: "ev-" + name, Kind: rules.EventBeneficiaryMail, MerchantID: p.MerchantID,
				PayoutID: p.ID, CreatedAt: w.clk.Now(), NextAt: w.clk.Now()})
		}
	}
	doneHook := func(name string) rules.DoneHook {
		return func(_ context.Context, p *rules.Payout) { ran = append(ran, name+" "+string(p.Status)) }
	}
	w.svc.OnCreate().Bind(createHook("create1"), createHook("create2"))
	w.svc.OnCreated().Bind(doneHook("created1"))
	w.svc.OnCreated().Bind(doneHook("created2"))
	// The world bound OutcomeEventsHook first: the merchant notification it gives comes first.
	w.lc.OnFinal().Bind(outcomeHook("final1"), outcomeHook("final2"))
	w.lc.OnFinished().Bind(doneHook("finished1"), doneHook("finished2"))

	p := w.create("per-cci", nil)
	w.run()
	w.clk.Add(rtDelay)
	w.run()
	want := []string{
		"create1 sees ", "create2 sees ev-create1",
		"created1 WAITING_ROUTING", "created2 WAITING_ROUTING",
		"final1 sees merchant.notification", "final2 sees merchant.notification,beneficiary.mail",
		"finished1 PROCESSED", "finished2 PROCESSED",
	}
	if !slices.Equal(ran, want) {
		t.Fatalf("hooks ran\n%q\nwant\n%q", ran, want)
	}
	evs, err := w.db.OutboxEvents(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ev-create1", "ev-create2", "ev-final1", "ev-final2"} {
		if !slices.ContainsFunc(evs, func(ev rules.Event) bool { return ev.ID == id }) {
			t.Errorf("event %s of payout %d not in the outbox: %s", id, p.ID, ids(evs))
		}
	}
}

// A create hook's error refuses the create: no later hook runs and nothing is stored.
func TestCreateHookErrorRefusesTheCreate(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("PER", "PEN", 100_000_00)
	refused := errors.New("refused by a hook")
	var later, told bool
	w.svc.OnCreate().Bind(
		func(*rules.Payout, *rules.Merchant, []rules.Event) ([]rules.Event, error) { return nil, refused },
		func(_ *rules.Payout, _ *rules.Merchant, evs []rules.Event) ([]rules.Event, error) {
			later = true
			return evs, nil
		},
	)
	w.svc.OnCreated().Bind(func(context.Context, *rules.Payout) { told = true })
	raw, err := os.ReadFile(filepath.Join("testdata", "examples", "per-cci.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreatePayout(t.Context(), w.m, raw, rules.EndpointPayouts); !errors.Is(err, refused) {
		t.Fatalf("create: %v, want the hook's error", err)
	}
	if later || told {
		t.Fatalf("after the refusing hook: a later create hook ran %v, a created hook was told %v", later, told)
	}
	if page, err := w.db.ListPayouts(context.Background(), w.m.ID, rules.ListFilter{}); err != nil || len(page.Items) != 0 {
		t.Fatalf("stored %+v (%v), want nothing", page, err)
	}
}

func ids(evs []rules.Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.ID)
	}
	return strings.Join(s, ",")
}

func kinds(evs []rules.Event) []string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Kind)
	}
	return s
}
