package framework

import (
	"testing"
	"time"
)

// Eventually calls cond every poll until it returns true, and fails t when
// timeout passes first, with the reason cond gave last (its string says what
// it saw, e.g. "1 of 2 workers Running"). cond runs at once, then after each
// poll; a cond that panics is not recovered.
func Eventually(t testing.TB, timeout, poll time.Duration, cond func() (bool, string)) {
	t.Helper()
	if reason, ok := poll1(timeout, poll, cond); !ok {
		t.Fatalf("not within %v: %s", timeout, reason)
	}
}

// poll1 is Eventually without t: the last reason and whether cond held.
func poll1(timeout, poll time.Duration, cond func() (bool, string)) (string, bool) {
	deadline := time.Now().Add(timeout)
	var reason string
	for {
		ok, why := cond()
		if ok {
			return why, true
		}
		reason = why
		if time.Now().After(deadline) {
			if reason == "" {
				reason = "(the condition gave no reason)"
			}
			return reason, false
		}
		time.Sleep(poll)
	}
}
