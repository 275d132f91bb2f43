package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"payouts/rules"
)

// testUsers: the named users: unique emails whatever their case, lookups by id,
// email and set-up hash, updates in one transaction that keep the id and email.
func testUsers(t *testing.T, e Engine) {
	newUser := func(id, email string, d time.Duration) *rules.User {
		return &rules.User{ID: id, Name: "Ana " + id, Email: email, Role: rules.RoleMaker, MerchantID: m1,
			Status: rules.UserPending, CreatedAt: at(d), UpdatedAt: at(d), SetupHash: "setup-" + id, SetupExpires: at(72 * time.Hour)}
	}
	t.Run("a user is read back by id, by email in any case and by its set-up hash", func(t *testing.T) {
		s := e.open(t)
		u := newUser("u_1", "Ana.Rojas@Example.com", 0)
		if err := s.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		for name, read := range map[string]func() (*rules.User, error){
			"User":            func() (*rules.User, error) { return s.User(context.Background(), "u_1") },
			"UserByEmail":     func() (*rules.User, error) { return s.UserByEmail(context.Background(), "ana.rojas@EXAMPLE.com") },
			"UserBySetupHash": func() (*rules.User, error) { return s.UserBySetupHash(context.Background(), "setup-u_1") },
		} {
			got, err := read()
			if err != nil || jsonOf(t, got) != jsonOf(t, u) {
				t.Errorf("%s = %s, %v; want %s", name, jsonOf(t, got), err, jsonOf(t, u))
			}
		}
		for name, read := range map[string]func() (*rules.User, error){
			"User":            func() (*rules.User, error) { return s.User(context.Background(), "u_2") },
			"UserByEmail":     func() (*rules.User, error) { return s.UserByEmail(context.Background(), "otra@example.com") },
			"UserBySetupHash": func() (*rules.User, error) { return s.UserBySetupHash(context.Background(), "setup-u_2") },
			"UserBySetupHash empty": func() (*rules.User, error) {
				return s.UserBySetupHash(context.Background(), "")
			},
		} {
			if _, err := read(); !errors.Is(err, rules.ErrNotFound) {
				t.Errorf("%s of none: %v, want ErrNotFound", name, err)
			}
		}
	})

	t.Run("an email taken in another case, or an id taken, is ErrExists and writes nothing", func(t *testing.T) {
		s := e.open(t)
		if err := s.CreateUser(context.Background(), newUser("u_1", "ana@example.com", 0)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateUser(context.Background(), newUser("u_2", "ANA@example.COM", time.Second)); !errors.Is(err, rules.ErrExists) {
			t.Errorf("same email in another case: %v, want ErrExists", err)
		}
		if err := s.CreateUser(context.Background(), newUser("u_1", "luis@example.com", time.Second)); !errors.Is(err, rules.ErrExists) {
			t.Errorf("same id: %v, want ErrExists", err)
		}
		if _, err := s.UserByEmail(context.Background(), "luis@example.com"); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("the refused user's email was kept: %v", err)
		}
		if us, err := s.Users(context.Background()); err != nil || len(us) != 1 {
			t.Errorf("Users = %d users, %v; want 1", len(us), err)
		}
	})

	t.Run("UpdateUser changes in one transaction, keeps the id and email, and fn's error aborts", func(t *testing.T) {
		s := e.open(t)
		if err := s.CreateUser(context.Background(), newUser("u_1", "ana@example.com", 0)); err != nil {
			t.Fatal(err)
		}
		got, err := s.UpdateUser(context.Background(), "u_1", func(u *rules.User) error {
			u.Status, u.Version, u.SetupHash, u.PasswordHash = rules.UserActive, 3, "", "$argon2id$..."
			u.ID, u.Email = "other", "other@example.com"
			return nil
		})
		if err != nil || got.ID != "u_1" || got.Email != "ana@example.com" || got.Version != 3 {
			t.Fatalf("UpdateUser = %+v, %v", got, err)
		}
		if _, err := s.UserBySetupHash(context.Background(), "setup-u_1"); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("the used set-up hash still finds the user: %v", err)
		}
		boom := errors.New("no")
		if _, err := s.UpdateUser(context.Background(), "u_1", func(u *rules.User) error { u.Version = 9; return boom }); !errors.Is(err, boom) {
			t.Errorf("fn's error: %v", err)
		}
		if u, _ := s.User(context.Background(), "u_1"); u.Version != 3 || u.Status != rules.UserActive || u.PasswordHash != "$argon2id$..." {
			t.Errorf("after an aborted update: %+v", u)
		}
		if _, err := s.UpdateUser(context.Background(), "nobody", func(*rules.User) error { return nil }); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("UpdateUser of none: %v", err)
		}
	})

	t.Run("Users lists oldest first", func(t *testing.T) {
		s := e.open(t)
		for i, id := range []string{"u_c", "u_a", "u_b"} {
			if err := s.CreateUser(context.Background(), newUser(id, id+"@example.com", time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		us, err := s.Users(context.Background())
		if err != nil || len(us) != 3 || us[0].ID != "u_c" || us[1].ID != "u_a" || us[2].ID != "u_b" {
			t.Errorf("Users = %s, %v", jsonOf(t, us), err)
		}
	})
}

// auditEntries appends n entries, alternating two actors, merchants and actions, one a minute.
func auditEntries(t *testing.T, s rules.Storage, n int) []rules.AuditEntry {
	t.Helper()
	var out []rules.AuditEntry
	for i := range n {
		e := rules.AuditEntry{At: at(time.Duration(i) * time.Minute), Principal: "admin-token:ab12", ActorName: "admin token",
			Action: "merchant.update", Target: "merchant:" + m1, MerchantID: m1, Detail: json.RawMessage(`{"n":` + fmt.Sprint(i) + `}`),
			RemoteAddr: "127.0.0.1", UserAgent: "curl/8"}
		if i%2 == 1 {
			e.Principal, e.ActorName, e.Action, e.MerchantID, e.Target = "user:u_7:2", "Luisa Paz", "user.disable", m2, "user:u_8"
		}
		if err := s.AppendAudit(context.Background(), &e); err != nil {
			t.Fatal(err)
		}
		if len(out) > 0 && e.ID <= out[len(out)-1].ID {
			t.Fatalf("entry %d has id %d after %d", i, e.ID, out[len(out)-1].ID)
		}
		out = append(out, e)
	}
	return out
}

// testAudit: the audit log, appended and read back newest first, filtered and paged.
func testAudit(t *testing.T, e Engine) {
	t.Run("entries come back newest first, whole, paged by the cursor", func(t *testing.T) {
		s := e.open(t)
		if p, err := s.AuditEntries(context.Background(), rules.AuditFilter{}); err != nil || len(p.Entries) != 0 || p.Next != 0 {
			t.Fatalf("empty log: %+v %v", p, err)
		}
		all := auditEntries(t, s, 7)
		var got []rules.AuditEntry
		f := rules.AuditFilter{Limit: 3}
		for pages := 0; ; pages++ {
			if pages > 3 {
				t.Fatal("paging does not end")
			}
			p, err := s.AuditEntries(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Entries...)
			if p.Next == 0 {
				break
			}
			f.Before = p.Next
		}
		if len(got) != 7 {
			t.Fatalf("%d entries over the pages, want 7", len(got))
		}
		for i := range got {
			want := all[len(all)-1-i]
			if jsonOf(t, got[i]) != jsonOf(t, want) {
				t.Errorf("entry %d:\n got  %s\n want %s", i, jsonOf(t, got[i]), jsonOf(t, want))
			}
		}
	})

	t.Run("filters by actor (principal, its prefix, name), action (or its first part), merchant and time", func(t *testing.T) {
		s := e.open(t)
		auditEntries(t, s, 6) // even: admin/M1/merchant.update at 0,2,4 min; odd: Luisa/M2/user.disable at 1,3,5
		for _, tc := range []struct {
			name string
			f    rules.AuditFilter
			want int
		}{
			{"principal", rules.AuditFilter{Actor: "user:u_7:2"}, 3},
			{"principal prefix", rules.AuditFilter{Actor: "user:u_7"}, 3},
			{"not a prefix at a colon", rules.AuditFilter{Actor: "user:u_"}, 0},
			{"name in another case", rules.AuditFilter{Actor: "luisa paz"}, 3},
			{"action", rules.AuditFilter{Action: "merchant.update"}, 3},
			{"action's first part", rules.AuditFilter{Action: "user"}, 3},
			{"not a prefix at a dot", rules.AuditFilter{Action: "use"}, 0},
			{"merchant", rules.AuditFilter{MerchantID: m2}, 3},
			{"from", rules.AuditFilter{From: at(2 * time.Minute)}, 4},
			{"to, excluded", rules.AuditFilter{To: at(2 * time.Minute)}, 2},
			{"all together", rules.AuditFilter{Actor: "admin token", Action: "merchant", MerchantID: m1, From: at(time.Minute), To: at(5 * time.Minute)}, 2},
		} {
			p, err := s.AuditEntries(context.Background(), tc.f)
			if err != nil || len(p.Entries) != tc.want {
				t.Errorf("%s: %d entries, %v; want %d", tc.name, len(p.Entries), err, tc.want)
			}
			for _, en := range p.Entries {
				if !tc.f.Match(&en) {
					t.Errorf("%s: an entry the filter does not match: %+v", tc.name, en)
				}
			}
		}
	})

	t.Run("users and entries go through Dump and Restore, and new entries number after them", func(t *testing.T) {
		s := e.open(t)
		u := &rules.User{ID: "u_1", Name: "Ana", Email: "Ana@example.com", Role: rules.RoleOperator, Status: rules.UserActive,
			CreatedAt: T0, UpdatedAt: T0, Version: 2, PasswordHash: "$argon2id$v=19$...", TOTPSealed: []byte("sealed"), TOTPLastStep: 42}
		if err := s.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		all := auditEntries(t, s, 3)
		recs := dumpOf(t, s)
		var users, entries []string
		for _, r := range recs {
			switch r.Kind {
			case rules.DumpUser:
				users = append(users, jsonOf(t, decode[rules.User](t, r)))
			case rules.DumpAudit:
				entries = append(entries, jsonOf(t, decode[rules.AuditEntry](t, r)))
			}
		}
		if len(users) != 1 || users[0] != jsonOf(t, u) {
			t.Errorf("dumped users %v, want %s", users, jsonOf(t, u))
		}
		if len(entries) != 3 || entries[0] != jsonOf(t, all[0]) || entries[2] != jsonOf(t, all[2]) {
			t.Errorf("dumped entries %v", entries)
		}
		r := e.open(t)
		if err := r.Restore(context.Background(), recs); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		if got, err := r.UserByEmail(context.Background(), "ana@example.com"); err != nil || jsonOf(t, got) != jsonOf(t, u) {
			t.Errorf("restored user %s, %v", jsonOf(t, got), err)
		}
		p, err := r.AuditEntries(context.Background(), rules.AuditFilter{})
		if err != nil || len(p.Entries) != 3 || jsonOf(t, p.Entries[0]) != jsonOf(t, all[2]) {
			t.Fatalf("restored entries %s, %v", jsonOf(t, p.Entries), err)
		}
		next := rules.AuditEntry{At: at(time.Hour), Principal: "admin-token:ab12", ActorName: "admin token", Action: "user.reset"}
		if err := r.AppendAudit(context.Background(), &next); err != nil || next.ID <= all[2].ID {
			t.Errorf("an entry after the restore has id %d (%v), want above %d", next.ID, err, all[2].ID)
		}
	})
}
