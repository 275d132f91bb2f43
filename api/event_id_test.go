package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/store"
)

// An event is read and resent by its id as a client sends it: a new id needs no encoding
// in a path, and an id stored with ":" is found whether the client sends ":" or %3A and
// whether it signed the path as sent (percent-encoded, as generated clients do) or decoded.
func TestEventsReadAndResentByIDSignedAsSent(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
		p := c.Create(t, servertest.PerBankRequest("EVID-1"))
		c.WaitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
		var listed struct {
			Items []struct{ EventID string }
		}
		servertest.Eventually(t, 15*time.Second, "the payout's notification in the event log", func() bool {
			_, _, raw := c.Do(t, "GET", "events", nil, "")
			return json.Unmarshal(raw, &listed) == nil && len(listed.Items) > 0
		})
		id := listed.Items[0].EventID
		if want := fmt.Sprintf("merchant.notification.%d.PROCESSED", p.Payout.ID); id != want {
			t.Errorf("the event id is %q, want %q", id, want)
		}
		if url.PathEscape(id) != id || strings.ContainsAny(id, ":/?#[]@!$&'()*+,;=% ") {
			t.Errorf("the event id %q needs encoding in a path", id)
		}
		s.Run(t, []servertest.Scenario{
			{Name: "read a new id", Path: "events/" + id, As: c, WantStatus: 200},
			{Name: "resend a new id", Method: "POST", Path: "events/" + id + "/resend", As: c, WantStatus: 202},
		})

		// An event stored before, with ":" in its id.
		old := fmt.Sprintf("merchant.notification:%d:PROCESSED", p.Payout.ID+1000)
		s.Restart(t, func(db rules.Storage, _ *store.Sealer) {
			ev := rules.LoggedEvent{ID: old, MerchantID: c.MerchantID, PayoutID: p.Payout.ID + 1000, Type: "payout.PROCESSED",
				Body: []byte(`{"old":true}`), CreatedAt: time.Now().UTC()}
			if err := db.LogAttempt(context.Background(), ev, rules.DeliveryAttempt{At: time.Now().UTC(), Status: 200}); err != nil {
				t.Fatal(err)
			}
		})
		encoded := "/api/v1/" + c.MerchantID + "/events/" + strings.ReplaceAll(old, ":", "%3A")
		decoded := "/api/v1/" + c.MerchantID + "/events/" + old
		var cases []servertest.Scenario
		for _, tc := range []struct {
			name, sent, signed string
			want               int
		}{
			{"sent and signed encoded, as generated clients do", encoded, encoded, 200},
			{"sent encoded, signed decoded", encoded, decoded, 200},
			{"sent and signed as it is", decoded, decoded, 200},
			{"resent, sent and signed encoded", encoded + "/resend", encoded + "/resend", 202},
			{"resent, sent encoded, signed decoded", encoded + "/resend", decoded + "/resend", 202},
			{"resent as it is", decoded + "/resend", decoded + "/resend", 202},
			{"sent encoded, signed for another path", encoded, "/api/v1/" + c.MerchantID + "/events", 401},
		} {
			method := "GET"
			if strings.HasSuffix(tc.sent, "/resend") {
				method = "POST"
			}
			sc := servertest.Scenario{Name: tc.name, Method: method, Path: tc.sent, WantStatus: tc.want,
				Request: func() *http.Request { return signedAs(c, method, tc.sent, tc.signed) }}
			if tc.want == 401 {
				sc.WantCode = rules.CodeAuthentication
			} else {
				sc.Then = func(t *testing.T, _ http.Header, raw []byte) {
					var body struct{ EventID string }
					if json.Unmarshal(raw, &body); body.EventID != old {
						t.Errorf("%s, want the event %s", raw, old)
					}
				}
			}
			cases = append(cases, sc)
		}
		s.Run(t, cases)

		// The resends were delivered: the inbox holds the old id's body.
		servertest.Eventually(t, 15*time.Second, "the old event's resends in the inbox", func() bool {
			var in struct {
				Items []struct {
					EventID string `json:"eventId"`
					Body    string `json:"body"`
				} `json:"items"`
			}
			_, _, raw := c.Do(t, "GET", "sandbox/inbox", nil, "")
			json.Unmarshal(raw, &in)
			n := 0
			for _, it := range in.Items {
				if it.EventID == old && it.Body == `{"old":true}` {
					n++
				}
			}
			return n == 3
		})
	})
}

// signedAs is a request to sent (a path, percent-encoded as the client sends it) signed
// over signed.
func signedAs(c *servertest.Merchant, method, sent, signed string) *http.Request {
	ts := time.Now().UnixMilli()
	u := fmt.Sprintf("%s%s?timestamp=%d&signature=%s", c.Base, sent, ts, rules.Signature(c.Secret, method, signed, ts, nil))
	req, _ := http.NewRequest(method, u, nil)
	req.Header.Set("monnet-api-key", c.Key)
	return req
}
