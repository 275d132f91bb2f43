package server

import (
	"net"
	"testing"
)

func TestReachableBase(t *testing.T) {
	cases := map[string]string{"0.0.0.0:8080": "http://127.0.0.1:8080", "[::]:9000": "http://127.0.0.1:9000", "127.0.0.1:8080": "http://127.0.0.1:8080"}
	for addr, want := range cases {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if got := reachableBase(a); got != want {
			t.Errorf("reachableBase(%s) = %s, want %s", addr, got, want)
		}
	}
}
