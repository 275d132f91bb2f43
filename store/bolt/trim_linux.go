package bolt

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// dropResident advises the kernel that the size bytes mapped at addr are not needed: their
// pages leave the resident set and are mapped again, from the page cache, when read.
func dropResident(addr uintptr, size int64) error {
	if size <= 0 {
		return nil
	}
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), syscall.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}

// residentFileBytes is the process's resident memory backed by files (and shared memory):
// the third field of /proc/self/statm, in pages.
func residentFileBytes() (int64, bool) {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(raw)
	if len(f) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
