package freeport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

// Asked for often, the kernel's port 0 repeats itself, and so does a random choice: with a
// few thousand asks a repeat is all but certain, so this fails if Port hands one out twice.
// Every port is below the ephemeral range, where no outgoing connection can take it.
func TestPortNeverRepeatsAndIsFree(t *testing.T) {
	const asks = 2000
	ephemeral := 65536
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if _, err := fmt.Sscan(string(b), &ephemeral); err != nil {
			t.Fatal(err)
		}
	}
	seen := make(map[int]bool, asks)
	for range asks {
		port, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		if port >= ephemeral {
			t.Fatalf("port %d is in the ephemeral range, from %d: an outgoing connection could take it", port, ephemeral)
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

// A connection to a Refusing address is refused, and no server can take its port, until it
// is released.
func TestRefusingRefusesAndKeepsItsPort(t *testing.T) {
	addr, release, err := Refusing()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("a server took %s while it was held", addr)
	}
	release()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	ln.Close()
}
