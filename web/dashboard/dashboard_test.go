package dashboard_test

import (
	"testing"
	"time"

	"payouts/rules"
	"payouts/templates"
	"payouts/web/dashboard"
)

func TestDecimal(t *testing.T) {
	for _, tc := range []struct {
		minor int64
		want  string
	}{{0, "0.00"}, {5, "0.05"}, {100000, "1000.00"}, {-1234505, "-12345.05"}} {
		if got := dashboard.Decimal(tc.minor); got != tc.want {
			t.Errorf("Decimal(%d) = %q, want %q", tc.minor, got, tc.want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1500", 150000, true}, {"1,500.5", 150050, true}, {"-20.25", -2025, true}, {" 0.01 ", 1, true},
		{"1.234", 0, false}, {"abc", 0, false}, {"", 0, false}, {"1.", 0, false}, {"1e5", 0, false}, {"--1", 0, false},
	} {
		got, ok := dashboard.ParseDecimal(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseDecimal(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// Every text exists in both languages.
func TestDashboardWords(t *testing.T) {
	es, en := templates.DashWords("es"), templates.DashWords("en")
	for k := range es {
		if _, ok := en[k]; !ok {
			t.Errorf("%q has no English text", k)
		}
	}
	for k := range en {
		if _, ok := es[k]; !ok {
			t.Errorf("%q has no Spanish text", k)
		}
	}
}

func TestSummarize(t *testing.T) {
	since := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	p := func(id int64, country, currency string, amount int64, status rules.Status, hour int) *rules.Payout {
		return &rules.Payout{ID: id, Country: country, Currency: currency, Amount: amount, Status: status,
			Stage: rules.StageOf(status), Channel: rules.ChannelBatch, CreatedAt: since.Add(time.Duration(hour)*time.Hour + time.Minute)}
	}
	ps := []*rules.Payout{
		p(1, "PER", "PEN", 100000, rules.StatusProcessed, 0),
		p(2, "PER", "PEN", 50000, rules.StatusRejectedBank, 0),
		p(3, "COL", "COP", 5000000, rules.StatusPendingBank, 23),
		{ID: 4, Country: "PER", Currency: "PEN", Amount: 1, Status: rules.StatusProcessed, CreatedAt: since.Add(-time.Minute)}, // before the window
	}
	v := dashboard.Summarize(ps, since, templates.DashWords("en"))
	if v.Created != 3 || v.Succeeded != 1 || v.Rejected != 1 || v.Active != 1 {
		t.Fatalf("totals %d %d %d %d", v.Created, v.Succeeded, v.Rejected, v.Active)
	}
	if len(v.ByCountry) != 2 || v.ByCountry[0].Key != "PER" || v.ByCountry[0].Created != 2 {
		t.Errorf("by country %+v", v.ByCountry)
	}
	if len(v.Amounts) != 2 || v.Amounts[1].Currency != "PEN" || v.Amounts[1].Created != "S/ 1,500.00" || v.Amounts[1].Succeeded != "S/ 1,000.00" {
		t.Errorf("amounts %+v", v.Amounts)
	}
	// Two bars in the first hour (success, rejected), one in the last (in progress).
	if len(v.Chart.Bars) != 3 || v.Chart.Bars[0].Class != "bar-success" || v.Chart.Bars[2].Class != "bar-active" ||
		v.Chart.Bars[2].X <= v.Chart.Bars[0].X {
		t.Errorf("bars %+v", v.Chart.Bars)
	}
}
