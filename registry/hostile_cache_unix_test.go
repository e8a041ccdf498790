//go:build unix

package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cached install that another user owns, or that sits in a directory
// others can write to, is refused with ErrUnsafeCache and not run; a
// sticky world-writable directory (as /tmp) is accepted.
func TestHostileCachedInstallNotOurs(t *testing.T) {
	_, opts := fixture(t, true, "tool.tar.gz", tarGz(t, entry{name: "bin/tool", body: "ok", mode: 0o755}), nil)
	exe, _, err := resolve(t, opts, "tool")
	if err != nil {
		t.Fatal(err)
	}

	uid := os.Geteuid()
	currentUID = func() int { return uid + 1 }
	_, _, err = resolve(t, opts, "tool")
	currentUID = os.Geteuid
	if !errors.Is(err, ErrUnsafeCache) || !strings.Contains(err.Error(), "not to this user") {
		t.Fatalf("another user's install: %v, want ErrUnsafeCache", err)
	}
	checkPrefix(t, err)

	version := filepath.Join(opts.CacheDir, "agents", "tool", "1.2.3")
	if err := os.Chmod(version, 0o777); err != nil {
		t.Fatal(err)
	}
	_, _, err = resolve(t, opts, "tool")
	if !errors.Is(err, ErrUnsafeCache) || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable directory: %v, want ErrUnsafeCache", err)
	}
	if err := os.Chmod(version, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if again, _, err := resolve(t, opts, "tool"); err != nil || again != exe {
		t.Fatalf("a sticky world-writable directory: %s %v, want the cached install", again, err)
	}
	if err := os.Chmod(exe, 0o777); err != nil {
		t.Fatal(err)
	}
	// A changed mode no longer matches the manifest: installed again.
	if again, _, err := resolve(t, opts, "tool"); err != nil || again != exe {
		t.Fatalf("a world-writable executable: %s %v, want it installed again", again, err)
	}
}
