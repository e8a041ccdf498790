package acp

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// allTmpFiles lists temporary files left anywhere under dir.
func allTmpFiles(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".acp-tmp-") {
			left = append(left, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// A parent directory replaced by a symlink out of the root while a write
// is under way: the write completes in, or is cleaned up from, the
// directory it started in; nothing leaks out of the root and no temporary
// file is left behind.
func TestWriteTextFileParentSwappedMidWrite(t *testing.T) {
	errDisk := errors.New("disk on fire")
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "write completes", true: "write fails"}[fail]
		t.Run(name, func(t *testing.T) {
			e := newFSEnv(t)
			dir := filepath.Join(e.root, "pkg")
			mustMkdir(t, dir)
			before := e.snapshotOutside(t)
			w := &WorkspaceFS{Roots: []string{e.root}}
			w.wrapWriter = func(f io.Writer) io.Writer {
				// The temporary file exists; swap its directory away.
				if err := os.Rename(dir, dir+"-old"); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, e.outside, dir)
				if fail {
					return &failingWriter{w: f, n: 3, err: errDisk}
				}
				return f
			}
			_, err := w.WriteTextFile(context.Background(), &WriteTextFileRequest{Path: dir + "/d.txt", Content: "new\n"})
			if fail {
				wantCode(t, err, CodeInternalError)
			} else {
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				// The write lands in the directory the path named when
				// the write began.
				if got := readFile(t, dir+"-old/d.txt"); got != "new\n" {
					t.Errorf("content = %q", got)
				}
			}
			if left := allTmpFiles(t, e.base); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			if _, err := os.Lstat(filepath.Join(e.outside, "d.txt")); err == nil {
				t.Error("the write went out of the root")
			}
			after := e.snapshotOutside(t)
			delete(after, dir) // the symlink the test planted
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("outside the root changed (-before +after):\n%s", diff)
			}
		})
	}
}
