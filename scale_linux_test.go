package acp

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// osThreads is the number of OS threads of this process.
func osThreads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Threads:\s+(\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no Threads line in /proc/self/status")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
