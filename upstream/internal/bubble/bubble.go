// Package bubble runs a program's work inside testing/synctest bubbles, whose fake clock and
// idleness check (synctest.Wait) the reference scheduler runs on. synctest only opens a bubble
// for a *testing.T, so Main starts the testing package's runner with one test, the program.
package bubble

import (
	"os"
	"testing"
	"testing/synctest"
)

// Main runs body with a function that runs f in a fresh bubble (as many as body likes, one
// after another), then exits with the code body returns. Call it from main after the program's
// own flags are parsed: the testing package's flags are not offered.
func Main(body func(inBubble func(f func())) int) {
	os.Args = []string{os.Args[0], "-test.run=^Program$"}
	testing.Main(
		func(pat, str string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "Program", F: func(t *testing.T) {
			code := body(func(f func()) {
				synctest.Test(t, func(*testing.T) { f() })
			})
			// Exit here: the runner would print PASS on standard output after the test.
			os.Exit(code)
		}}},
		nil, nil)
}
