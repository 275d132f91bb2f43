package server

import (
	"maps"
	"testing"
)

// The endpoint spans go to: the flag first, then the standard variables in the order the
// OpenTelemetry specification gives them; a base URL gets the traces path, the traces
// variable is the URL itself.
func TestTracesURLFromTheFlagOrTheStandardVariables(t *testing.T) {
	for _, tc := range []struct {
		name, flag string
		env        map[string]string
		want       string
		fails      bool
	}{
		{name: "nothing: off"},
		{name: "flag", flag: "http://collector:4318", want: "http://collector:4318/v1/traces"},
		{name: "flag with a path", flag: "https://gw.example/otlp/", want: "https://gw.example/otlp/v1/traces"},
		{name: "the flag wins", flag: "http://a:4318", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/x"},
			want: "http://a:4318/v1/traces"},
		{name: "base variable", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: "http://c:4318/v1/traces"},
		{name: "the traces variable as it is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://d:4318/custom"}, want: "http://d:4318/custom"},
		{name: "not a URL", flag: "collector:4318", fails: true},
		{name: "a grpc scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://c:4317"}, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tracesURL(tc.flag, func(k string) string { return tc.env[k] })
			if (err != nil) != tc.fails || got != tc.want {
				t.Errorf("tracesURL = %q, %v; want %q (error: %v)", got, err, tc.want, tc.fails)
			}
		})
	}
}

// The OTEL_ lists of headers and resource attributes: comma-separated, values
// percent-encoded, pairs without a key or '=' skipped.
func TestKeyValuesOfTheStandardVariables(t *testing.T) {
	got := keyValues(" api-key = s3cr%2Ct ,authorization=Bearer%20tok,broken,=nokey, deployment.environment=prod")
	want := map[string]string{"api-key": "s3cr,t", "authorization": "Bearer tok", "deployment.environment": "prod"}
	if !maps.Equal(got, want) {
		t.Errorf("keyValues = %v, want %v", got, want)
	}
}
