package registry

import (
	"os"
	"path/filepath"
	"testing"
)

// A cached install whose executable was deleted, changed or made
// non-executable is installed again on the next Command, not refused with
// "file exists" forever.
func TestHostileCachedInstallBroken(t *testing.T) {
	for name, breakIt := range map[string]func(exe string) error{
		"deleted": os.Remove,
		"changed": func(exe string) error { return os.WriteFile(exe, []byte("truncated"), 0o755) },
		"mode":    func(exe string) error { return os.Chmod(exe, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			s, opts := fixture(t, true, "tool.tar.gz", tarGz(t, entry{name: "bin/tool", body: "v1 binary", mode: 0o755}), nil)
			first, _, err := resolve(t, opts, "tool")
			if err != nil {
				t.Fatal(err)
			}
			if err := breakIt(first); err != nil {
				t.Fatal(err)
			}
			again, _, err := resolve(t, opts, "tool")
			if err != nil {
				t.Fatalf("after the executable was %s: %v", name, err)
			}
			checkInstalled(t, again, "v1 binary")
			if n := s.count("/dl/tool.tar.gz"); n != 2 {
				t.Errorf("%d downloads, want 2 (the install, the reinstall)", n)
			}
			if third, _, err := resolve(t, opts, "tool"); err != nil || third != again || s.count("/dl/tool.tar.gz") != 2 {
				t.Errorf("the reinstall is not used as cached: %s %v", third, err)
			}
			assertOnlyInstall(t, opts)
		})
	}
}

// assertOnlyInstall checks the version directory holds the install and
// nothing else: no download, unpack directory or moved-aside install.
func assertOnlyInstall(t *testing.T, opts *Options) {
	t.Helper()
	left, _ := os.ReadDir(filepath.Join(opts.CacheDir, "agents", "tool", "1.2.3"))
	if len(left) != 1 || left[0].Name()[0] == '.' {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("version directory holds %v, want the install alone", names)
	}
}

// What an installer killed mid-download leaves (a 49 MiB .download-*
// stands for it here, with its .unpack-* directory, and an orphan
// .unpack-*) is removed by the next install; a running install's files,
// whose download is locked, are left alone.
func TestHostileKilledInstallLeftovers(t *testing.T) {
	_, opts := fixture(t, true, "tool.tar.gz", tarGz(t, entry{name: "bin/tool", body: "ok", mode: 0o755}), nil)
	dir := filepath.Join(opts.CacheDir, "agents", "tool", "1.2.3")
	if err := os.MkdirAll(filepath.Join(dir, ".unpack-dead", "files", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".download-dead", ".unpack-dead/files/bin/tool", ".unpack-orphan/files/x", ".download-live", ".unpack-live/files/x"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := os.OpenFile(filepath.Join(dir, ".download-live"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if ok, err := tryLock(live); !ok || err != nil {
		t.Fatalf("locking the live download: %v %v", ok, err)
	}

	if _, _, err := resolve(t, opts, "tool"); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{".download-dead": false, ".unpack-dead": false, ".unpack-orphan": false, ".download-live": true, ".unpack-live": true} {
		if _, err := os.Lstat(filepath.Join(dir, f)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", f, err == nil, want)
		}
	}
}
