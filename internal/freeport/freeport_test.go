package freeport

import (
	"net"
	"testing"
)

// Asked for often, the kernel's port 0 repeats itself: with a few thousand asks a repeat is
// all but certain, so this fails if Port hands one out twice.
func TestPortNeverRepeatsAndIsFree(t *testing.T) {
	const asks = 2000
	seen := make(map[int]bool, asks)
	for range asks {
		port, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address handed out does not bind: %v", err)
	}
	ln.Close()
}
