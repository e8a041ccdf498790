package acp

import (
	"os"
	"path/filepath"
	"strings"
)

// lastLines returns at most n final lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	i := len(s)
	for range n {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

// absCwd makes a session directory absolute (the spec requires absolute
// paths); empty means the current directory.
func absCwd(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}
