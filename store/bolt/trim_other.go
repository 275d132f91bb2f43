//go:build !linux

package bolt

// Elsewhere the map's pages are left to the kernel.
func dropResident(uintptr, int64) error { return nil }

func residentFileBytes() (int64, bool) { return 0, false }
