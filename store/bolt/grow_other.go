//go:build !linux

package bolt

import (
	"errors"
	"os"
)

// extend is not done here: bbolt grows the file in its commits.
func extend(*os.File, int64) error { return errors.ErrUnsupported }
