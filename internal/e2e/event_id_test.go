package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// An event is read and resent by its id as a client sends it: a new id needs no encoding
// in a path, and an id stored with ":" is found whether the client sends ":" or %3A and
// whether it signed the path as sent (percent-encoded, as generated clients do) or decoded.
func TestEventsReadAndResentByIDSignedAsSent(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	p := c.create(t, perBankRequest("EVID-1"))
	c.waitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
	var listed struct {
		Items []struct{ EventID string }
	}
	waitFor(t, "the payout's notification in the event log", 15*time.Second, func() bool {
		_, _, raw := c.do(t, "GET", "events", nil, "")
		return json.Unmarshal(raw, &listed) == nil && len(listed.Items) > 0
	})
	id := listed.Items[0].EventID
	if want := fmt.Sprintf("merchant.notification.%d.PROCESSED", p.Payout.ID); id != want {
		t.Errorf("the event id is %q, want %q", id, want)
	}
	if url.PathEscape(id) != id || strings.ContainsAny(id, ":/?#[]@!$&'()*+,;=% ") {
		t.Errorf("the event id %q needs encoding in a path", id)
	}
	if code, _, raw := c.do(t, "GET", "events/"+id, nil, ""); code != 200 {
		t.Errorf("read %s: %d %s", id, code, raw)
	}
	if code, _, raw := c.do(t, "POST", "events/"+id+"/resend", nil, ""); code != 202 {
		t.Errorf("resend %s: %d %s", id, code, raw)
	}

	// An event stored before, with ":" in its id.
	old := fmt.Sprintf("merchant.notification:%d:PROCESSED", p.Payout.ID+1000)
	s.Stop(t)
	logOldEvent(t, s.Data, rules.LoggedEvent{ID: old, MerchantID: c.MerchantID, PayoutID: p.Payout.ID + 1000, Type: "payout.PROCESSED",
		Body: []byte(`{"old":true}`), CreatedAt: time.Now().UTC()}, rules.DeliveryAttempt{At: time.Now().UTC(), Status: 200})
	s2 := startServer(t, s.Data)
	c = c.with(func(m *merchantClient) { m.Base = s2.URL })
	encoded := "/api/v1/" + c.MerchantID + "/events/" + strings.ReplaceAll(old, ":", "%3A")
	decoded := "/api/v1/" + c.MerchantID + "/events/" + old
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
		t.Run(tc.name, func(t *testing.T) {
			method := "GET"
			if strings.HasSuffix(tc.sent, "/resend") {
				method = "POST"
			}
			req := signedAs(c, method, tc.sent, tc.signed)
			resp, err := c.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				EventID string
				Code    string
			}
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || tc.want < 300 && body.EventID != old || tc.want == 401 && body.Code != rules.CodeAuthentication {
				t.Errorf("%s %s signed as %s: %d %+v, want %d for %s", method, tc.sent, tc.signed, resp.StatusCode, body, tc.want, old)
			}
		})
	}
	// The resends were delivered: the inbox holds the old id's body.
	waitFor(t, "the old event's resends in the inbox", 15*time.Second, func() bool {
		n := 0
		for _, it := range c.inbox(t).Items {
			if it.EventID == old && it.Body == `{"old":true}` {
				n++
			}
		}
		return n == 3
	})
}

// signedAs is a request to sent (a path, percent-encoded as the client sends it) signed
// over signed.
func signedAs(c *merchantClient, method, sent, signed string) *http.Request {
	ts := time.Now().UnixMilli()
	u := fmt.Sprintf("%s%s?timestamp=%d&signature=%s", c.Base, sent, ts, rules.Signature(c.Secret, method, signed, ts, nil))
	req, _ := http.NewRequest(method, u, nil)
	req.Header.Set("monnet-api-key", c.Key)
	return req
}
