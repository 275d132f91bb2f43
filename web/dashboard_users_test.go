package web_test

// Named users, in process (servertest) on each engine: an operator creates a maker and a
// viewer of one merchant; each sets a password and enrols TOTP on its one-time link, signs in
// with a code, and sees only its merchant; the viewer cannot fund; a replayed code is
// refused; a password change ends the user's other sessions and a disable ends its live one;
// the audit log has it all, as JSON and as CSV.

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"payouts/internal/server"
	"payouts/internal/servertest"
)

// Serial: its sign-in codes are those of one 30-second window of real time from its start,
// which the other tests running at once could make it overrun (serial tests run before the
// parallel ones start).
func TestDashboardUsersRolesTOTPAndAudit(t *testing.T) {
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		// Codes of three steps are used in turn (set-up, then two sign-ins): stay inside one
		// step's window.
		clock := servertest.StepStartClock()
		now := clock.Now().Unix() / 30
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		mA, mB := s.NewMerchant(t, map[string]any{}), s.NewMerchant(t, map[string]any{})
		payoutOf := func(m *servertest.Merchant, order string) string {
			code, _, raw := m.Do(t, "POST", "payouts", servertest.PerBankRequest(order), "")
			if code != 201 {
				t.Fatalf("create: %d %s", code, raw)
			}
			return strconv.FormatInt(servertest.DecodePayout(t, raw).Payout.ID, 10)
		}
		own, other := payoutOf(mA, "USR-A-1"), payoutOf(mB, "USR-B-1")

		// Bad users: every problem at once, with its field; a taken email in another case is 409.
		code, _, raw := s.RawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "", "email": "no-at", "role": "boss"})
		var prob struct {
			Errors []struct{ Code, Location string } `json:"errors"`
		}
		json.Unmarshal(raw, &prob)
		fields := []string{}
		for _, e := range prob.Errors {
			if e.Code != "2955" {
				t.Errorf("code %s for %s, want 2955", e.Code, e.Location)
			}
			fields = append(fields, e.Location)
		}
		if code != 400 || !slices.Equal(fields, []string{"body.name", "body.email", "body.role"}) {
			t.Errorf("bad user: %d, fields %v: %s", code, fields, raw)
		}
		if code, _, raw := s.RawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "Ana", "email": "ana@example.com", "role": "viewer", "merchantId": "nobody"}); code != 400 || !strings.Contains(string(raw), `"body.merchantId"`) {
			t.Errorf("a viewer of no merchant: %d %s", code, raw)
		}
		if code, _, raw := s.RawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "Ana", "email": "ana@example.com", "role": "operator", "merchantId": mA.MerchantID}); code != 400 || !strings.Contains(string(raw), `"body.merchantId"`) {
			t.Errorf("an operator with a merchant: %d %s", code, raw)
		}

		type created struct {
			ID, Status, Role, MerchantID, SetupLink, SetupExpiresAt string
		}
		create := func(name, email, role string) (created, servertest.User) {
			t.Helper()
			var c created
			if code := s.Admin(t, "POST", "/admin/v1/users", map[string]any{"name": name, "email": email, "role": role, "merchantId": mA.MerchantID}, &c); code != 201 {
				t.Fatalf("create %s: %d", role, code)
			}
			if c.Status != "pending" || c.MerchantID != mA.MerchantID || c.SetupLink == "" {
				t.Fatalf("created %+v", c)
			}
			return c, servertest.User{ID: c.ID, Email: email, Password: "correct horse " + role}
		}
		makerC, maker := create("Marta Maker", "marta@tienda.pe", "maker")
		viewerC, viewer := create("Víctor Viewer", "victor@tienda.pe", "viewer")
		if code, _, raw := s.RawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "Otra", "email": "MARTA@Tienda.PE", "role": "viewer", "merchantId": mA.MerchantID}); code != 409 || !strings.Contains(string(raw), "2956") {
			t.Errorf("a taken email in another case: %d %s", code, raw)
		}
		if code, _, raw := s.RawAdmin(t, "GET", "/admin/v1/users/u_nobody", nil); code != 404 || !strings.Contains(string(raw), "2957") {
			t.Errorf("no such user: %d %s", code, raw)
		}
		var list struct{ Users []created }
		if s.Admin(t, "GET", "/admin/v1/users", nil, &list); len(list.Users) != 2 || list.Users[0].ID != makerC.ID || list.Users[0].SetupLink != "" {
			t.Errorf("list: %+v", list.Users)
		}

		if _, body, _ := servertest.GetPage(t, s.Browser(), s.URL+"/dashboard/login"); !strings.Contains(body, `id="user-login"`) || !strings.Contains(body, `name="code"`) || !strings.Contains(body, `name="token"`) {
			t.Error("the sign-in page lacks the user's form (email, password, code) or the admin token's")
		}
		s.SetUpUser(t, makerC.SetupLink, &maker, now-1)
		s.SetUpUser(t, viewerC.SetupLink, &viewer, now-1)

		// A wrong password, and a code already used, are refused alike.
		if _, code := s.UserSignIn(t, servertest.User{Email: maker.Email, Password: "wrong password!", Secret: maker.Secret}, now); code != 401 {
			t.Errorf("wrong password: %d, want 401", code)
		}
		if _, code := s.UserSignIn(t, maker, now-1); code != 401 {
			t.Errorf("the set-up's code again: %d, want 401 (replay)", code)
		}
		makerA, code := s.UserSignIn(t, maker, now)
		if makerA == nil {
			t.Fatalf("maker sign-in: %d", code)
		}
		if _, code := s.UserSignIn(t, maker, now); code != 401 {
			t.Errorf("a replayed code: %d, want 401", code)
		}
		viewerC1, code := s.UserSignIn(t, viewer, now)
		if viewerC1 == nil {
			t.Fatalf("viewer sign-in: %d", code)
		}

		// Each sees its merchant only: another merchant's payout and page are 404.
		for _, c := range []*http.Client{makerA, viewerC1} {
			for path, want := range map[string]int{
				"/dashboard": 200, "/dashboard/payouts/" + own: 200, "/dashboard/payouts/" + other: 404,
				"/dashboard/merchants/" + mA.MerchantID: 200, "/dashboard/merchants/" + mB.MerchantID: 404,
				"/dashboard/merchants/" + mB.MerchantID + "/events": 404, "/dashboard/users": 403,
			} {
				if code, body, _ := servertest.GetPage(t, c, s.URL+path); code != want {
					t.Errorf("GET %s: %d, want %d: %.300s", path, code, want, body)
				}
			}
			_, body, _ := servertest.GetPage(t, c, s.URL+"/dashboard/payouts")
			if !strings.Contains(body, "USR-A-1") || strings.Contains(body, "USR-B-1") {
				t.Error("the payouts list shows another merchant's payout, or not its own")
			}
			_, body, _ = servertest.GetPage(t, c, s.URL+"/dashboard/merchants")
			if strings.Contains(body, "/dashboard/merchants/"+mB.MerchantID+`"`) {
				t.Error("the merchants page lists another merchant")
			}
		}
		// The viewer changes nothing: no fund form, and the post is 403; the maker may create.
		if _, body, _ := servertest.GetPage(t, viewerC1, s.URL+"/dashboard/merchants/"+mA.MerchantID); strings.Contains(body, "/fund") || strings.Contains(body, "new-payout") {
			t.Error("the viewer's merchant page offers funding or a new payout")
		}
		for _, path := range []string{"/merchants/" + mA.MerchantID + "/fund", "/merchants/" + mA.MerchantID + "/new-payout", "/payouts/" + own + "/cancel",
			"/merchants/" + mA.MerchantID + "/keys"} {
			if code, _, _ := servertest.PostValues(t, viewerC1, s.URL+"/dashboard"+path, url.Values{"pair": {"PER PEN"}, "amount": {"100"}}); code != 403 {
				t.Errorf("viewer POST %s: %d, want 403", path, code)
			}
		}
		if code, _, _ := servertest.PostValues(t, makerA, s.URL+"/dashboard/merchants/"+mA.MerchantID+"/fund", url.Values{"pair": {"PER PEN"}, "amount": {"100"}}); code != 403 {
			t.Errorf("maker fund: %d, want 403", code)
		}
		if code, _, _ := servertest.GetPage(t, makerA, s.URL+"/dashboard/merchants/"+mA.MerchantID+"/new-payout"); code != 200 {
			t.Errorf("maker's new payout page: %d", code)
		}
		if code, _, _ := servertest.PostValues(t, makerA, s.URL+"/dashboard/payouts/"+other+"/cancel", nil); code != 404 {
			t.Errorf("maker cancels another merchant's payout: %d, want 404", code)
		}

		// A second session of the maker changes the password: the first ends, the second goes on.
		makerB, code := s.UserSignIn(t, maker, now+1)
		if makerB == nil {
			t.Fatalf("maker's second sign-in: %d", code)
		}
		newPassword := "a much better passphrase"
		code, body, loc := servertest.PostValues(t, makerB, s.URL+"/dashboard/account", url.Values{"current": {maker.Password}, "password": {newPassword}, "password2": {newPassword}})
		if code != http.StatusSeeOther || loc != "/dashboard/account" {
			t.Fatalf("password change: %d %q %.300s", code, loc, body)
		}
		if code, _, loc := servertest.GetPage(t, makerA, s.URL+"/dashboard"); code != http.StatusSeeOther || loc != "/dashboard/login" {
			t.Errorf("the other session after the password change: %d to %q, want the sign-in", code, loc)
		}
		if code, _, _ := servertest.GetPage(t, makerB, s.URL+"/dashboard"); code != 200 {
			t.Errorf("the session that changed the password: %d", code)
		}

		// Disabling the viewer ends its live session; it cannot sign in again.
		if code := s.Admin(t, "POST", "/admin/v1/users/"+viewer.ID+"/disable", nil, nil); code != 200 {
			t.Fatalf("disable: %d", code)
		}
		if code, _, loc := servertest.GetPage(t, viewerC1, s.URL+"/dashboard"); code != http.StatusSeeOther || loc != "/dashboard/login" {
			t.Errorf("the disabled user's session: %d to %q", code, loc)
		}
		if code, _, raw := s.RawAdmin(t, "POST", "/admin/v1/users/"+viewer.ID+"/reset", nil); code != 409 || !strings.Contains(string(raw), "2958") {
			t.Errorf("reset of a disabled user: %d %s", code, raw)
		}

		// The operator's Users page creates a user and shows its link once.
		admin := s.Dashboard(t)
		code, body, _ = servertest.PostValues(t, admin, s.URL+"/dashboard/users", url.Values{"name": {"Olga Operadora"}, "email": {"olga@example.com"}, "role": {"operator"}})
		if code != http.StatusCreated || !strings.Contains(body, `id="setup-link"`) || !strings.Contains(body, "olga@example.com") {
			t.Errorf("Users page create: %d %.500s", code, body)
		}

		olga := regexp.MustCompile(`id="user-(u_[0-9a-f]+)"[^>]*>\s*<th[^>]*>Olga`).FindStringSubmatch(body)
		if olga == nil {
			t.Fatalf("Olga is not listed on the Users page:\n%.2000s", body)
		}
		if code, body, _ := servertest.PostValues(t, admin, s.URL+"/dashboard/users/"+olga[1]+"/reset", nil); code != 200 || !strings.Contains(body, `id="setup-link"`) {
			t.Errorf("Users page reset: %d", code)
		}
		if code, _, loc := servertest.PostValues(t, admin, s.URL+"/dashboard/users/"+olga[1]+"/disable", nil); code != http.StatusSeeOther || loc != "/dashboard/users" {
			t.Errorf("Users page disable: %d %q", code, loc)
		}
		if code, _, _ := servertest.PostValues(t, makerB, s.URL+"/dashboard/users/"+olga[1]+"/enable", nil); code != 403 {
			t.Errorf("a maker enables a user: %d, want 403", code)
		}

		// A sandbox control through the admin API is audited as the admin token.
		if code := s.Admin(t, "POST", "/admin/v1/sandbox/clock", map[string]any{"advance": "1h"}, nil); code != 200 {
			t.Fatalf("clock: %d", code)
		}

		// The audit log: JSON, newest first; a merchant user's Audit page shows its merchant only.
		var au struct {
			Entries []struct {
				Action, Actor, Principal, Target, MerchantID, RemoteAddr string
				Detail                                                   struct{ Count int }
			}
		}
		if code := s.Admin(t, "GET", "/admin/v1/audit?limit=1000", nil, &au); code != 200 {
			t.Fatalf("audit: %d", code)
		}
		seen := map[string]int{}
		for _, e := range au.Entries {
			seen[e.Action]++
			if e.Action == "signin.failure" { // one entry counts an address's refusals for an account a minute
				seen[e.Action] += e.Detail.Count - 1
			}
			if e.Principal == "" || e.RemoteAddr == "" {
				t.Errorf("an entry without its principal or address: %+v", e)
			}
		}
		for action, n := range map[string]int{"user.create": 3, "user.password.set": 2, "user.totp.enrol": 2, "signin.success": 4, // maker twice, viewer, admin token
			"signin.failure": 3, "user.password.change": 1, "user.disable": 2, "user.reset": 1,
			"merchant.create": 2, "balance.fund": 1, "sandbox.clock.advance": 1} {
			if seen[action] < n {
				t.Errorf("%d %s entries, want at least %d (all: %v)", seen[action], action, n, seen)
			}
		}
		code, hdr, raw := s.RawAdmin(t, "GET", "/admin/v1/audit?format=csv&action=user", nil)
		rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
		if code != 200 || err != nil || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") || len(rows) < 2 || strings.Join(rows[0], ",") != "id,at,principal,actor,action,target,merchantId,detail,remoteAddr,userAgent" {
			t.Fatalf("audit CSV: %d %v %q: %.300s", code, err, hdr.Get("Content-Type"), raw)
		}
		for _, row := range rows[1:] {
			if !strings.HasPrefix(row[4], "user.") {
				t.Errorf("action=user gave %q", row[4])
			}
		}
		_, body, _ = servertest.GetPage(t, makerB, s.URL+"/dashboard/audit")
		if !strings.Contains(body, "user.password.change") || strings.Contains(body, "olga@example.com") {
			t.Errorf("the maker's Audit page: its merchant's entries only:\n%.2000s", body)
		}
		code, body, _ = servertest.GetPage(t, admin, s.URL+"/dashboard/audit.csv?action=signin")
		rows, err = csv.NewReader(strings.NewReader(body)).ReadAll()
		if code != 200 || err != nil || len(rows) < 6 { // the header, 4 sign-ins and the failures' count
			t.Errorf("dashboard CSV: %d %v, %d rows", code, err, len(rows))
		}
	})
}
