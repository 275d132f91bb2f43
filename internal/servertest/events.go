package servertest

import (
	"encoding/json"
	"net/http"
	"testing"

	"payouts/internal/apicontract"
	"payouts/web/notify"
)

// Inbox is the sandbox inbox of a merchant (GET sandbox/inbox): what the notifications
// to sandbox:inbox delivered, newest first.
type Inbox struct {
	Items []struct {
		EventID        string            `json:"eventId"`
		ReceivedAt     string            `json:"receivedAt"`
		Headers        map[string]string `json:"headers"`
		Body           string            `json:"body"`
		SignatureValid bool              `json:"signatureValid"`
	} `json:"items"`
}

// Event is one event of the event log, with its attempts.
type Event struct {
	EventID     string  `json:"eventId"`
	Cursor      string  `json:"cursor"`
	Type        string  `json:"type"`
	PayoutID    int64   `json:"payoutId"`
	DeliveredAt *string `json:"deliveredAt"`
	Body        *string `json:"body"`
	Attempts    []struct {
		At         string `json:"at"`
		Status     int    `json:"status"`
		Error      string `json:"error"`
		DurationMS int64  `json:"durationMs"`
		Cause      string `json:"cause"`
	} `json:"attempts"`
}

// Events is a page of the event log.
type Events struct {
	Items      []Event `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// GetJSON GETs path (relative to the merchant's) with query and decodes the 200 answer
// into out, or fails the test.
func (c *Merchant) GetJSON(t testing.TB, path, query string, out any) {
	t.Helper()
	code, _, raw := c.Do(t, "GET", path, nil, query)
	if code != 200 {
		t.Fatalf("GET %s?%s: %d %s", path, query, code, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
}

// Inbox reads the merchant's sandbox inbox.
func (c *Merchant) Inbox(t testing.TB) Inbox {
	t.Helper()
	var in Inbox
	c.GetJSON(t, "sandbox/inbox", "", &in)
	return in
}

// Event reads one event of the merchant's event log.
func (c *Merchant) Event(t testing.TB, id string) Event {
	t.Helper()
	var e Event
	c.GetJSON(t, "events/"+id, "", &e)
	return e
}

// CheckNotification checks a notification the server sent for merchantID as the merchant's
// endpoint would: its signature (the verification header) verifies with the key the server
// serves, and its body is what the served document's webhook declares.
func (s *Server) CheckNotification(t testing.TB, merchantID string, body []byte, sig string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/api/v1/notifications/public-key", nil)
	code, _, pem := Send(t, s.HTTP, req)
	pub, err := notify.ParsePublicKeyPEM(pem)
	if code != 200 || err != nil {
		t.Fatalf("the served public key: %d %v", code, err)
	}
	if err := notify.Verify(pub, merchantID, body, sig); err != nil {
		t.Errorf("a notification does not verify with the served key: %v: %.300s", err, body)
	}
	doc := s.contract.Document()
	if doc == nil {
		t.Fatalf("the server serves no OpenAPI document to check a notification against")
	}
	if problem := doc.CheckWebhook(apicontract.WebhookOf(body), body); problem != "" {
		t.Error(problem)
	}
}
