package bolt

import (
	"os"
	"syscall"
)

// extend makes the file at least size bytes long, with its blocks allocated; it never
// shortens it.
func extend(f *os.File, size int64) error {
	return syscall.Fallocate(int(f.Fd()), 0, 0, size)
}
