package framework

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// CountLines is the number of lines of file LOG that contain every one of
// SUBSTRINGS (0 when the file is missing).
func CountLines(log string, substrings ...string) int {
	b, err := os.ReadFile(log)
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if containsAll(line, substrings) {
			n++
		}
	}
	return n
}

// Lines are the lines of file LOG that contain every one of SUBSTRINGS.
func Lines(log string, substrings ...string) []string {
	b, _ := os.ReadFile(log)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" && containsAll(line, substrings) {
			out = append(out, line)
		}
	}
	return out
}

// WaitLines waits (at most 10 s) until file LOG has at least WANT lines that
// contain every one of SUBSTRINGS, and fails t otherwise. ray-webhook writes
// its review lines from a thread of its own, at least twice a second, so a
// review's line can follow its answer by that much.
func WaitLines(t testing.TB, log string, want int, substrings ...string) {
	t.Helper()
	Eventually(t, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		n := CountLines(log, substrings...)
		return n >= want, fmt.Sprintf("%s has %d lines with %q, want %d", log, n, substrings, want)
	})
}

func containsAll(line string, substrings []string) bool {
	for _, s := range substrings {
		if !strings.Contains(line, s) {
			return false
		}
	}
	return true
}
