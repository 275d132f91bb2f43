package servertest

import (
	"flag"
	"runtime"
	"strconv"
)

// Parallel sets how many of a package's parallel tests run at once to n (at least
// GOMAXPROCS), unless -test.parallel was given. A test of a served application mostly
// waits (a settlement, a commit, a poll, a server's stop), so go test's default of
// GOMAXPROCS leaves a 2-core machine half idle while the package holds one of go test's
// slots. TestMain calls it before m.Run.
func Parallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}
