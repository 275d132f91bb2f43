package rules_test

import (
	"errors"
	"fmt"
	"testing"

	"payouts/rules"
)

// What a merchant reads of a failed attempt: the class, a permanent failure's own words,
// or a pointer to the server's log; never the network's or the store's error.
func TestPublicDeliveryError(t *testing.T) {
	raw := errors.New("dial tcp: lookup localhost. on 10.255.255.53:53: no such host")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"none", nil, ""},
		{"a failure's public form", &rules.DeliveryFailure{Public: "x could not be reached: name not found", Err: raw},
			"x could not be reached: name not found"},
		{"a wrapped failure", fmt.Errorf("deliver: %w", &rules.DeliveryFailure{Public: "x answered HTTP status 503"}), "x answered HTTP status 503"},
		{"a permanent failure says itself", rules.Permanent(errors.New("the payout no longer exists")), "the payout no longer exists"},
		{"a permanent failure's public form", rules.Permanent(&rules.DeliveryFailure{Public: "p", Err: raw}), "p"},
		{"any other error", raw, "the attempt failed inside the service (its log has the cause)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rules.PublicDeliveryError(tc.err); got != tc.want {
				t.Errorf("PublicDeliveryError = %q, want %q", got, tc.want)
			}
		})
	}
	f := &rules.DeliveryFailure{Public: "p", Err: raw}
	if f.Error() != "p: "+raw.Error() || !errors.Is(f, raw) {
		t.Errorf("Error() %q: the log gets the whole error, and it unwraps", f.Error())
	}
}

// An attempt stored before the classes were public is shown by its class; what is stored
// now is shown as it is.
func TestPublicAttemptErrorReadsStoredErrorsAsTheirClass(t *testing.T) {
	for _, tc := range []struct{ stored, want string }{
		{"POST to the notificationUrl of merchant 7: dial tcp: lookup localhost. on 10.255.255.53:53: no such host",
			"the notificationUrl of merchant 7 could not be reached: name not found"},
		{"POST to the notificationUrl of merchant 7: dial tcp 10.1.2.3:443: connect: connection refused",
			"the notificationUrl of merchant 7 could not be reached: connection refused"},
		{"POST to the notificationUrl of merchant 7: context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
			"the notificationUrl of merchant 7 could not be reached: timed out"},
		{"POST to the notificationUrl of merchant 7: tls: failed to verify certificate: x509: certificate signed by unknown authority",
			"the notificationUrl of merchant 7 could not be reached: TLS: certificate not trusted"},
		{"POST to the notificationUrl of merchant 7: the notification URL resolves to a private, loopback, link-local or unspecified address",
			"the notificationUrl of merchant 7 could not be reached: " + rules.FailureNotPublic},
		{"POST to the notificationUrl of merchant 7: something new", "the notificationUrl of merchant 7 could not be reached: connection failed"},
		{"the sandbox inbox of merchant 7: pq: could not connect to 10.0.0.5:5432", "the sandbox inbox of merchant 7 could not keep it"},
		{"smtp mail.internal:587: dial tcp 10.0.0.9:587: connect: connection refused", "the mail server could not be reached: connection refused"},
		{"the notificationUrl of merchant 7 could not be reached: name not found", "the notificationUrl of merchant 7 could not be reached: name not found"},
		{"the notificationUrl of merchant 7 answered HTTP status 503", "the notificationUrl of merchant 7 answered HTTP status 503"},
		{"the notificationUrl of merchant 7 answered 503 Service Unavailable", "the notificationUrl of merchant 7 answered 503 Service Unavailable"},
		{"", ""},
	} {
		if got := rules.PublicAttemptError(tc.stored); got != tc.want {
			t.Errorf("PublicAttemptError(%q) = %q, want %q", tc.stored, got, tc.want)
		}
	}
}
