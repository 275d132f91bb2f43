package main

import (
	"reflect"
	"testing"
)

func TestParseMerchants(t *testing.T) {
	for _, tc := range []struct {
		s       string
		want    []merchant
		wantErr bool
	}{
		{"1:pk_a:c2VjcmV0", []merchant{{"1", "pk_a", "c2VjcmV0"}}, false},
		{"1:pk_a:s1+/=,2:pk_b:s2", []merchant{{"1", "pk_a", "s1+/="}, {"2", "pk_b", "s2"}}, false},
		{"M1::,M2::", []merchant{{"M1", "", ""}, {"M2", "", ""}}, false}, // the bare stacks sign nothing
		{"1:pk_a", nil, true},
		{":pk_a:s", nil, true},
		{"1:pk_a:s,", nil, true},
	} {
		got, err := parseMerchants(tc.s)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseMerchants(%q) = %v, %v; want %v (an error: %v)", tc.s, got, err, tc.want, tc.wantErr)
		}
	}
}
