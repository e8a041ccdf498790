// Package wsroot holds the one rule for workspace roots that the client (a
// session's cwd and additional directories) and package workspace (the
// directories its handlers confine the agent to) must share, so that the
// agent is told, and confined to, the same directory.
package wsroot

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Clean validates a workspace root (absolute, no NUL byte) and cleans it
// lexically, as filepath.Abs does for a session's cwd: "/ws/a/../.." is
// "/", never something under /ws/a.
func Clean(dir string) (string, error) {
	switch {
	case strings.IndexByte(dir, 0) >= 0:
		return "", fmt.Errorf("%q contains a NUL byte", dir)
	case !filepath.IsAbs(dir):
		return "", fmt.Errorf("%q is not absolute", dir)
	}
	return filepath.Clean(dir), nil
}
