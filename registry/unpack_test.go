package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
)

// Archives that try to write outside the install directory are refused
// whole: nothing lands outside, nothing is installed.
func TestUnsafeArchivesRefused(t *testing.T) {
	tool := entry{name: "bin/tool", body: "ok", mode: 0o755}
	cases := map[string]struct {
		name string
		body func(t *testing.T) []byte
		unix bool // needs symlinks
	}{
		"tar dotdot": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "../../escaped", body: "x"})
		}, false},
		"tar dotdot inside": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "bin/../../../escaped", body: "x"})
		}, false},
		"tar absolute": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "/tmp/escaped", body: "x"})
		}, false},
		"tar symlink out": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "bin/out", typ: tar.TypeSymlink, link: "../../../escaped"})
		}, true},
		"tar symlink absolute": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "bin/out", typ: tar.TypeSymlink, link: "/etc/passwd"})
		}, true},
		// "dot" is the install directory, so "dot/../escaped" looks local
		// by its text yet resolves outside.
		"tar symlink through symlink": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool,
				entry{name: "dot", typ: tar.TypeSymlink, link: "."},
				entry{name: "bin/sub/out", typ: tar.TypeSymlink, link: "../../dot/../escaped"})
		}, true},
		// A file written after a link of the same directory name would go
		// through it.
		"tar write through symlink": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool,
				entry{name: "up", typ: tar.TypeSymlink, link: "bin"},
				entry{name: "up/x", body: "x"})
		}, true},
		"tar hard link out": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "bin/pw", typ: tar.TypeLink, link: "../../../etc/passwd"})
		}, false},
		"tar hard link absolute": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "bin/pw", typ: tar.TypeLink, link: "/etc/passwd"})
		}, false},
		"tar device": {"a.tar.gz", func(t *testing.T) []byte {
			return tarGz(t, tool, entry{name: "bin/dev", typ: tar.TypeChar})
		}, false},
		"zip dotdot": {"a.zip", func(t *testing.T) []byte {
			return zipOf(t, tool, entry{name: "../../escaped", body: "x"})
		}, false},
		"zip absolute": {"a.zip", func(t *testing.T) []byte {
			return zipOf(t, tool, entry{name: "/tmp/escaped", body: "x"})
		}, false},
		"zip symlink overlong": {"a.zip", func(t *testing.T) []byte {
			return zipOf(t, tool, entry{name: "bin/long", typ: tar.TypeSymlink, link: strings.Repeat("a/", 3000)})
		}, false},
		"zip symlink out": {"a.zip", func(t *testing.T) []byte {
			return zipOf(t, tool, entry{name: "bin/out", typ: tar.TypeSymlink, link: "../../../escaped"})
		}, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.unix && runtime.GOOS == "windows" {
				t.Skip("symlinks need a privilege on windows")
			}
			_, opts := fixture(t, true, c.name, c.body(t), nil)
			_, _, err := resolve(t, opts, "tool")
			if !errors.Is(err, ErrUnsafeArchive) {
				t.Fatalf("got %v, want ErrUnsafeArchive", err)
			}
			assertNothingInstalled(t, opts)
			filepath.WalkDir(filepath.Dir(opts.CacheDir), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "escaped" {
					t.Errorf("%s was written", p)
				}
				return nil
			})
		})
	}
}

// The size limits stop oversized downloads and decompression bombs, and
// archives with too many entries.
func TestArchiveLimits(t *testing.T) {
	bomb := func(t *testing.T) []byte { // 8 MiB of zeros in a few KiB
		return tarGz(t, entry{name: "bin/tool", body: string(make([]byte, 8<<20)), mode: 0o755})
	}
	for name, c := range map[string]struct {
		archive string
		body    func(t *testing.T) []byte
		opts    Options
	}{
		"download with Content-Length": {"tool", func(t *testing.T) []byte {
			return bytes.Repeat([]byte("x"), 1000)
		}, Options{MaxArchiveBytes: 100}},
		"download chunked": {"tool", func(t *testing.T) []byte {
			return bytes.Repeat([]byte("x"), 100_000)
		}, Options{MaxArchiveBytes: 50_000}},
		"tar bomb": {"a.tar.gz", bomb, Options{MaxUnpackedBytes: 1 << 20}},
		"gzip raw bomb": {"tool", func(t *testing.T) []byte { // no suffix: sniffed as gzip
			return bomb(t)
		}, Options{MaxUnpackedBytes: 1 << 20}},
		"zip bomb": {"a.zip", func(t *testing.T) []byte {
			return zipOf(t, entry{name: "bin/tool", body: string(make([]byte, 8<<20))})
		}, Options{MaxUnpackedBytes: 1 << 20}},
		"tar entries": {"a.tar.gz", func(t *testing.T) []byte {
			es := []entry{{name: "bin/tool", body: "x"}}
			for range 20 {
				es = append(es, entry{name: "bin/", typ: tar.TypeDir})
			}
			return tarGz(t, es...)
		}, Options{MaxArchiveEntries: 10}},
		"zip entries": {"a.zip", func(t *testing.T) []byte {
			es := []entry{{name: "bin/tool", body: "x"}}
			for range 20 {
				es = append(es, entry{name: "bin/", typ: tar.TypeDir})
			}
			return zipOf(t, es...)
		}, Options{MaxArchiveEntries: 10}},
	} {
		t.Run(name, func(t *testing.T) {
			_, opts := fixture(t, true, c.archive, c.body(t), nil)
			opts.MaxArchiveBytes, opts.MaxUnpackedBytes, opts.MaxArchiveEntries = c.opts.MaxArchiveBytes, c.opts.MaxUnpackedBytes, c.opts.MaxArchiveEntries
			_, _, err := resolve(t, opts, "tool")
			if !errors.Is(err, schema.ErrLimitExceeded) {
				t.Fatalf("got %v, want ErrLimitExceeded", err)
			}
			checkPrefix(t, err)
			assertNothingInstalled(t, opts)
		})
	}
}

// A gzip stream that is not a tar is an error, not a panic or an install.
func TestCorruptArchive(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("not a tar archive, just text that goes on for a while ....................................................................................................................................................................................................................................................................................................................................................................................................................................................................................................................."))
	zw.Close()
	_, opts := fixture(t, true, "a.tar.gz", buf.Bytes(), nil)
	if _, _, err := resolve(t, opts, "tool"); err == nil {
		t.Fatal("a corrupt archive installed")
	}
	assertNothingInstalled(t, opts)
}
