package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// fsEnv is a workspace layout for the adversarial tests:
//
//	base/ws/app           the root
//	base/ws/app/file.txt
//	base/ws/app-evil/x    a sibling sharing the root's prefix
//	base/outside/secret   must never be read or changed
type fsEnv struct {
	base, root, outside, sibling string
}

func newFSEnv(t *testing.T) *fsEnv {
	t.Helper()
	base := t.TempDir()
	e := &fsEnv{
		base:    base,
		root:    filepath.Join(base, "ws", "app"),
		outside: filepath.Join(base, "outside"),
		sibling: filepath.Join(base, "ws", "app-evil"),
	}
	for _, d := range []string{e.root, e.outside, e.sibling} {
		mustMkdir(t, d)
	}
	mustWrite(t, filepath.Join(e.root, "file.txt"), "inside\n")
	mustWrite(t, filepath.Join(e.outside, "secret"), "top secret\n")
	mustWrite(t, filepath.Join(e.sibling, "x"), "sibling\n")
	// Old mtimes make a rewrite detectable even within the clock's
	// resolution.
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(e.outside, "secret"), filepath.Join(e.sibling, "x")} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

type fileState struct {
	Mode    fs.FileMode
	Content string
	ModTime time.Time
}

// snapshotOutside records every file and directory of base outside the
// root, to prove a refused request changed nothing there.
func (e *fsEnv) snapshotOutside(t *testing.T) map[string]fileState {
	t.Helper()
	snap := map[string]fileState{}
	err := filepath.WalkDir(e.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == e.root {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fileState{Mode: fi.Mode(), ModTime: fi.ModTime()}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.Content = string(b)
		}
		if d.IsDir() {
			st.ModTime = time.Time{} // atime-like noise from listing is not a change
		}
		snap[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantCode checks that err is an *schema.Error with the code and a "workspace: " message.
func wantCode(t *testing.T, err error, code int64) *schema.Error {
	t.Helper()
	var e *schema.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *schema.Error with code %d", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("error code = %d (%v), want %d", e.Code, e, code)
	}
	if !strings.HasPrefix(e.Message, "workspace: ") {
		t.Errorf("error message %q lacks the \"workspace: \" prefix", e.Message)
	}
	return e
}

// tmpFiles lists leftover temporary files in dir.
func tmpFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".acp-tmp-") {
			left = append(left, e.Name())
		}
	}
	return left
}

func u32(v uint32) *uint32 { return &v }

func TestWorkspaceFSAdversarial(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, e *fsEnv)
		path  func(e *fsEnv) string
		write bool
		code  int64
	}{
		{name: "dotdot read", path: func(e *fsEnv) string { return e.root + "/../../outside/secret" }, code: schema.CodeInvalidParams},
		{name: "dotdot write", write: true, path: func(e *fsEnv) string { return e.root + "/../../outside/secret" }, code: schema.CodeInvalidParams},
		{name: "dotdot staying inside", path: func(e *fsEnv) string { return e.root + "/sub/../file.txt" }, code: schema.CodeInvalidParams},
		{name: "absolute outside read", path: func(e *fsEnv) string { return e.outside + "/secret" }, code: schema.CodeInvalidParams},
		{name: "absolute outside write", write: true, path: func(e *fsEnv) string { return e.outside + "/new.txt" }, code: schema.CodeInvalidParams},
		{name: "etc passwd", path: func(*fsEnv) string { return "/etc/passwd" }, code: schema.CodeInvalidParams},
		{name: "proc self root prefix", path: func(e *fsEnv) string { return "/proc/self/root" + e.outside + "/secret" }, code: schema.CodeInvalidParams},
		{
			name:  "proc self root link inside root",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "/proc/self/root", e.root+"/proc") },
			path:  func(e *fsEnv) string { return e.root + "/proc" + e.outside + "/secret" },
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "relative symlink to outside file read",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "../../outside/secret", e.root+"/link") },
			path:  func(e *fsEnv) string { return e.root + "/link" },
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "relative symlink to outside file write",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "../../outside/secret", e.root+"/link") },
			path:  func(e *fsEnv) string { return e.root + "/link" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "absolute symlink to outside file read",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, e.outside+"/secret", e.root+"/link") },
			path:  func(e *fsEnv) string { return e.root + "/link" },
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "absolute symlink to outside file write",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, e.outside+"/secret", e.root+"/link") },
			path:  func(e *fsEnv) string { return e.root + "/link" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "dangling symlink to outside write",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "../../outside/created", e.root+"/dangle") },
			path:  func(e *fsEnv) string { return e.root + "/dangle" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "symlinked parent dir read",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "../../outside", e.root+"/dirlink") },
			path:  func(e *fsEnv) string { return e.root + "/dirlink/secret" },
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "symlinked parent dir write existing",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "../../outside", e.root+"/dirlink") },
			path:  func(e *fsEnv) string { return e.root + "/dirlink/secret" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "symlinked parent dir write new",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, e.outside, e.root+"/dirlink") },
			path:  func(e *fsEnv) string { return e.root + "/dirlink/new.txt" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{
			name:  "symlinked parent dir write into missing dirs",
			setup: func(t *testing.T, e *fsEnv) { mustSymlink(t, "../../outside", e.root+"/dirlink") },
			path:  func(e *fsEnv) string { return e.root + "/dirlink/a/b/new.txt" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{
			name: "symlink chain leaving the root",
			setup: func(t *testing.T, e *fsEnv) {
				mustSymlink(t, "hop2", e.root+"/hop1")
				mustSymlink(t, "../app-evil/x", e.root+"/hop2")
			},
			path:  func(e *fsEnv) string { return e.root + "/hop1" },
			write: true,
			code:  schema.CodeInvalidParams,
		},
		{name: "NUL byte read", path: func(e *fsEnv) string { return e.root + "/file.txt\x00.png" }, code: schema.CodeInvalidParams},
		{name: "NUL byte write", write: true, path: func(e *fsEnv) string { return e.root + "/a\x00b" }, code: schema.CodeInvalidParams},
		{name: "relative path", path: func(*fsEnv) string { return "file.txt" }, code: schema.CodeInvalidParams},
		{name: "relative dot path write", write: true, path: func(*fsEnv) string { return "./file.txt" }, code: schema.CodeInvalidParams},
		{name: "empty path", path: func(*fsEnv) string { return "" }, code: schema.CodeInvalidParams},
		{name: "sibling sharing prefix read", path: func(e *fsEnv) string { return e.sibling + "/x" }, code: schema.CodeInvalidParams},
		{name: "sibling sharing prefix write", write: true, path: func(e *fsEnv) string { return e.sibling + "/x" }, code: schema.CodeInvalidParams},
		{name: "root itself read", path: func(e *fsEnv) string { return e.root }, code: schema.CodeInvalidParams},
		{name: "root itself write", write: true, path: func(e *fsEnv) string { return e.root }, code: schema.CodeInvalidParams},
		{name: "missing file", path: func(e *fsEnv) string { return e.root + "/nope.txt" }, code: schema.CodeResourceNotFound},
		{name: "file as directory", path: func(e *fsEnv) string { return e.root + "/file.txt/x" }, code: schema.CodeResourceNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFSEnv(t)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			before := e.snapshotOutside(t)
			w := &FS{Roots: []string{e.root}}
			ctx := context.Background()
			var err error
			if tt.write {
				_, err = w.WriteTextFile(ctx, &schema.WriteTextFileRequest{SessionID: "s", Path: tt.path(e), Content: "pwned\n"})
			} else {
				var resp *schema.ReadTextFileResponse
				resp, err = w.ReadTextFile(ctx, &schema.ReadTextFileRequest{SessionID: "s", Path: tt.path(e)})
				if resp != nil {
					t.Errorf("got content %q", resp.Content)
				}
			}
			wantCode(t, err, tt.code)
			if diff := cmp.Diff(before, e.snapshotOutside(t)); diff != "" {
				t.Errorf("outside the root changed (-before +after):\n%s", diff)
			}
			if left := tmpFiles(t, e.root); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestWorkspaceFSLinksKeptAsLinks(t *testing.T) {
	// A refused write through a link must leave the link itself alone too.
	e := newFSEnv(t)
	mustSymlink(t, "../../outside/secret", e.root+"/link")
	w := &FS{Roots: []string{e.root}}
	_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: e.root + "/link", Content: "x"})
	wantCode(t, err, schema.CodeInvalidParams)
	if target, err := os.Readlink(e.root + "/link"); err != nil || target != "../../outside/secret" {
		t.Errorf("link = %q, %v; want it unchanged", target, err)
	}
}

func TestWorkspaceFSNoRoots(t *testing.T) {
	e := newFSEnv(t)
	var w FS
	_, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: e.root + "/file.txt"})
	wantCode(t, err, schema.CodeInvalidParams)
	_, err = w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: e.root + "/new.txt"})
	wantCode(t, err, schema.CodeInvalidParams)
	if _, err := os.Stat(e.root + "/new.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("new.txt was created: %v", err)
	}
}

func TestWorkspaceFSRootsFromContext(t *testing.T) {
	e := newFSEnv(t)
	var w FS // zero value: roots come from the session
	ctx := acp.ContextWithRoots(context.Background(), []string{e.root})
	resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.root + "/file.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "inside\n" {
		t.Errorf("content = %q", resp.Content)
	}
	_, err = w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.outside + "/secret"})
	wantCode(t, err, schema.CodeInvalidParams)
}

func TestWorkspaceFSSymlinkedRoot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	link := filepath.Join(base, "link")
	mustMkdir(t, real)
	mustSymlink(t, real, link)
	mustWrite(t, filepath.Join(real, "a.txt"), "a\n")
	outside := filepath.Join(base, "outside")
	mustMkdir(t, outside)

	// With the link as root, paths under the link or its target work. With
	// the target as root, a path through some link to it is outside the
	// roots as far as the agent can tell, and refused.
	for _, rootName := range []string{link, real} {
		t.Run(filepath.Base(rootName), func(t *testing.T) {
			w := &FS{Roots: []string{rootName}}
			ctx := context.Background()
			dirs := []string{link, real}
			if rootName == real {
				dirs = []string{real}
				_, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: link + "/a.txt"})
				wantCode(t, err, schema.CodeInvalidParams)
			}
			for _, dir := range dirs {
				resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: dir + "/a.txt"})
				if err != nil {
					t.Fatalf("read under %s: %v", dir, err)
				}
				if resp.Content != "a\n" {
					t.Errorf("content = %q", resp.Content)
				}
				p := dir + "/new-" + filepath.Base(rootName) + ".txt"
				if _, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: p, Content: "n"}); err != nil {
					t.Fatalf("write %s: %v", p, err)
				}
				if got := readFile(t, p); got != "n" {
					t.Errorf("%s = %q", p, got)
				}
			}
			_, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: link + "/../outside/x"})
			wantCode(t, err, schema.CodeInvalidParams)
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("outside dir got files: %v", ents)
	}
}

func TestWorkspaceFSSymlinksInsideRoot(t *testing.T) {
	e := newFSEnv(t)
	mustMkdir(t, e.root+"/sub")
	mustWrite(t, e.root+"/sub/target.txt", "target\n")
	mustSymlink(t, "sub/target.txt", e.root+"/rel")
	mustSymlink(t, e.root+"/sub/target.txt", e.root+"/abs") // os.Root alone refuses these
	mustSymlink(t, "sub", e.root+"/subdir")
	w := &FS{Roots: []string{e.root}}
	ctx := context.Background()

	for _, name := range []string{"rel", "abs", "subdir/target.txt"} {
		resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.root + "/" + name})
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if resp.Content != "target\n" {
			t.Errorf("read %s = %q", name, resp.Content)
		}
	}
	// Writing through a link updates its target and keeps the link.
	for _, name := range []string{"rel", "abs"} {
		content := "via " + name + "\n"
		if _, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: e.root + "/" + name, Content: content}); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		if got := readFile(t, e.root+"/sub/target.txt"); got != content {
			t.Errorf("after write via %s target = %q", name, got)
		}
		if fi, err := os.Lstat(e.root + "/" + name); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", name)
		}
	}
}

func TestReadTextFileLines(t *testing.T) {
	files := map[string]string{
		"crlf.txt":    "one\r\ntwo\r\nthree",
		"lf.txt":      "a\nb\nc\n",
		"empty.txt":   "",
		"blanks.txt":  "\n\n\n",
		"unicode.txt": "héllo\nwörld €\n",
	}
	tests := []struct {
		file        string
		line, limit *uint32
		want        string
	}{
		{file: "crlf.txt", want: "one\r\ntwo\r\nthree"},
		{file: "crlf.txt", line: u32(0), want: "one\r\ntwo\r\nthree"}, // 0 is read as 1
		{file: "crlf.txt", line: u32(1), want: "one\r\ntwo\r\nthree"},
		{file: "crlf.txt", line: u32(2), want: "two\r\nthree"},
		{file: "crlf.txt", line: u32(2), limit: u32(1), want: "two\r\n"},
		{file: "crlf.txt", line: u32(3), want: "three"},
		{file: "crlf.txt", line: u32(3), limit: u32(5), want: "three"},
		{file: "crlf.txt", line: u32(4), want: ""},
		{file: "crlf.txt", line: u32(4000000000), want: ""},
		{file: "crlf.txt", limit: u32(0), want: ""}, // "at most zero lines"
		{file: "crlf.txt", limit: u32(2), want: "one\r\ntwo\r\n"},
		{file: "lf.txt", line: u32(3), want: "c\n"},
		{file: "lf.txt", line: u32(4), want: ""}, // the final newline ends line 3; there is no line 4
		{file: "lf.txt", line: u32(0), limit: u32(1), want: "a\n"},
		{file: "empty.txt", want: ""},
		{file: "empty.txt", line: u32(1), limit: u32(1), want: ""},
		{file: "blanks.txt", line: u32(2), limit: u32(1), want: "\n"},
		{file: "unicode.txt", line: u32(2), want: "wörld €\n"},
	}
	e := newFSEnv(t)
	for name, content := range files {
		mustWrite(t, filepath.Join(e.root, name), content)
	}
	w := &FS{Roots: []string{e.root}}
	for _, tt := range tests {
		name := tt.file
		if tt.line != nil {
			name += "/line=" + toJSONText(*tt.line)
		}
		if tt.limit != nil {
			name += "/limit=" + toJSONText(*tt.limit)
		}
		t.Run(name, func(t *testing.T) {
			resp, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{
				Path: filepath.Join(e.root, tt.file), Line: tt.line, Limit: tt.limit,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

func toJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestReadTextFileLongLine(t *testing.T) {
	// Lines longer than the read buffer must be kept whole, or skipped whole.
	e := newFSEnv(t)
	long := strings.Repeat("x", 200<<10)
	mustWrite(t, e.root+"/long.txt", long+"\nshort\n"+long)
	w := &FS{Roots: []string{e.root}}
	for _, tt := range []struct {
		line uint32
		want string
	}{{1, long + "\n"}, {2, "short\n"}, {3, long}} {
		resp, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: e.root + "/long.txt", Line: u32(tt.line), Limit: u32(1)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != tt.want {
			t.Errorf("line %d: got %d bytes, want %d", tt.line, len(resp.Content), len(tt.want))
		}
	}
}

func TestReadTextFileErrors(t *testing.T) {
	e := newFSEnv(t)
	mustWrite(t, e.root+"/big.txt", "0123456789\nabc\n")     // 15 bytes
	mustWrite(t, e.root+"/nul.bin", "text\x00more")          // NUL byte
	mustWrite(t, e.root+"/latin1.txt", "caf\xe9\n")          // not UTF-8
	mustWrite(t, e.root+"/late.bin", "ok\n"+"caf\xff\xfe\n") // invalid later on
	w := &FS{Roots: []string{e.root}, MaxReadBytes: 12}
	tests := []struct {
		name        string
		path        string
		line, limit *uint32
		code        int64
		msg         string
	}{
		{name: "over the cap", path: "big.txt", code: schema.CodeInvalidParams, msg: "too large"},
		{name: "window over the cap", path: "big.txt", line: u32(1), limit: u32(2), code: schema.CodeInvalidParams, msg: "exceeds"},
		{name: "binary", path: "nul.bin", code: schema.CodeInvalidParams, msg: "not a text file"},
		{name: "binary window", path: "nul.bin", line: u32(1), limit: u32(1), code: schema.CodeInvalidParams, msg: "not a text file"},
		{name: "not UTF-8", path: "latin1.txt", code: schema.CodeInvalidParams, msg: "not a text file"},
		{name: "not UTF-8 later", path: "late.bin", code: schema.CodeInvalidParams, msg: "not a text file"},
		{name: "missing", path: "missing.txt", code: schema.CodeResourceNotFound, msg: "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{
				Path: filepath.Join(e.root, tt.path), Line: tt.line, Limit: tt.limit,
			})
			got := wantCode(t, err, tt.code)
			if !strings.Contains(got.Message, tt.msg) {
				t.Errorf("message %q does not mention %q", got.Message, tt.msg)
			}
			if overCap := strings.Contains(tt.name, "over the cap"); errors.Is(err, schema.ErrLimitExceeded) != overCap {
				t.Errorf("errors.Is(err, schema.ErrLimitExceeded) = %v, want %v", !overCap, overCap)
			}
		})
	}

	// A window that fits is served even from a file over the cap.
	resp, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: e.root + "/big.txt", Line: u32(2)})
	if err != nil || resp.Content != "abc\n" {
		t.Errorf("window of a big file = %+v, %v", resp, err)
	}
}

func TestReadTextFileNotFoundData(t *testing.T) {
	e := newFSEnv(t)
	w := &FS{Roots: []string{e.root}}
	p := e.root + "/no such.txt"
	_, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: p})
	if !errors.Is(err, schema.ErrResourceNotFound) {
		t.Errorf("errors.Is(err, schema.ErrResourceNotFound) = false for %v", err)
	}
	got := wantCode(t, err, schema.CodeResourceNotFound)
	var data map[string]string
	if err := json.Unmarshal(got.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"uri": "file://" + strings.ReplaceAll(p, " ", "%20")}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestReadTextFileOverlay(t *testing.T) {
	e := newFSEnv(t)
	mustSymlink(t, "../../outside", e.root+"/dirlink")
	var asked []string
	w := &FS{
		Roots: []string{e.root},
		Overlay: func(p string) (string, bool) {
			asked = append(asked, p)
			switch p {
			case e.root + "/file.txt":
				return "unsaved 1\r\nunsaved 2\r\n", true
			case e.root + "/new/buffer.txt":
				return "not on disk yet", true
			case e.root + "/dirlink/secret":
				return "overlay must not serve this", true
			}
			return "", false
		},
	}
	ctx := context.Background()
	tests := []struct {
		path        string
		line, limit *uint32
		want        string
	}{
		{path: e.root + "//file.txt", want: "unsaved 1\r\nunsaved 2\r\n"}, // cleaned before asking
		{path: e.root + "/./file.txt", line: u32(2), want: "unsaved 2\r\n"},
		{path: e.root + "/file.txt", limit: u32(1), want: "unsaved 1\r\n"},
		{path: e.root + "/new/buffer.txt", want: "not on disk yet"},
	}
	for _, tt := range tests {
		resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: tt.path, Line: tt.line, Limit: tt.limit})
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		if resp.Content != tt.want {
			t.Errorf("%s: content = %q, want %q", tt.path, resp.Content, tt.want)
		}
	}
	// Files the overlay does not know come from disk.
	mustWrite(t, e.root+"/disk.txt", "disk\n")
	if resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.root + "/disk.txt"}); err != nil || resp.Content != "disk\n" {
		t.Errorf("disk.txt = %+v, %v", resp, err)
	}
	// Confinement comes first: the overlay is not even asked about paths
	// outside the roots.
	asked = nil
	_, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.root + "/dirlink/secret"})
	wantCode(t, err, schema.CodeInvalidParams)
	_, err = w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.outside + "/secret"})
	wantCode(t, err, schema.CodeInvalidParams)
	if len(asked) != 0 {
		t.Errorf("overlay asked about %v", asked)
	}
}

func TestWorkspaceFSPathMapper(t *testing.T) {
	e := newFSEnv(t)
	w := &FS{
		Roots: []string{e.root},
		PathMapper: func(p string) (string, error) {
			if rest, ok := strings.CutPrefix(p, "/workspace/"); ok {
				return e.root + "/" + rest, nil
			}
			if p == "/escape" {
				return e.outside + "/secret", nil
			}
			return "", errors.New("not a container path")
		},
	}
	ctx := context.Background()
	resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: "/workspace/file.txt"})
	if err != nil || resp.Content != "inside\n" {
		t.Fatalf("mapped read = %+v, %v", resp, err)
	}
	if _, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: "/workspace/out/new.txt", Content: "new"}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, e.root+"/out/new.txt"); got != "new" {
		t.Errorf("mapped write = %q", got)
	}
	before := e.snapshotOutside(t)
	_, err = w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: e.root + "/file.txt"}) // a host path is not a container path
	wantCode(t, err, schema.CodeInvalidParams)
	_, err = w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: "/escape", Content: "x"})
	wantCode(t, err, schema.CodeInvalidParams)
	_, err = w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: "/workspace/../outside/secret", Content: "x"})
	wantCode(t, err, schema.CodeInvalidParams)
	if diff := cmp.Diff(before, e.snapshotOutside(t)); diff != "" {
		t.Errorf("outside changed:\n%s", diff)
	}
}

func TestWriteTextFile(t *testing.T) {
	e := newFSEnv(t)
	mustWrite(t, e.root+"/script.sh", "#!/bin/sh\n")
	if err := os.Chmod(e.root+"/script.sh", 0o751); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, e.root+"/private", "p")
	if err := os.Chmod(e.root+"/private", 0o600); err != nil {
		t.Fatal(err)
	}
	w := &FS{Roots: []string{e.root}}
	tests := []struct {
		name, path, content string
		mode                fs.FileMode
	}{
		{name: "new file", path: "new.txt", content: "hello\n", mode: 0o644},
		{name: "new file in missing dirs", path: "a/b/c/new.txt", content: "deep", mode: 0o644},
		{name: "replace keeps exec mode", path: "script.sh", content: "#!/bin/sh\necho hi\n", mode: 0o751},
		{name: "replace keeps private mode", path: "private", content: "q", mode: 0o600},
		{name: "CRLF and no final newline kept", path: "crlf.txt", content: "a\r\nb", mode: 0o644},
		{name: "empty content", path: "file.txt", content: "", mode: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(e.root, tt.path)
			resp, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{SessionID: "s", Path: p, Content: tt.content})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(resp); string(b) != "{}" {
				t.Errorf("response marshals as %s, want {}", b)
			}
			if got := readFile(t, p); got != tt.content {
				t.Errorf("content = %q, want %q", got, tt.content)
			}
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.mode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.mode)
			}
			if left := tmpFiles(t, filepath.Dir(p)); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
	if fi, err := os.Stat(e.root + "/a/b"); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("created parent = %v, %v", fi, err)
	}
}

func TestWriteTextFileFailureKeepsOldContent(t *testing.T) {
	errDisk := errors.New("disk on fire")
	tests := []struct {
		name  string
		setup func(t *testing.T, w *FS, dir string)
		code  int64
		msg   string // the exact message, when it is not the package's own
	}{
		{
			name: "writer fails midway",
			setup: func(t *testing.T, w *FS, dir string) {
				w.wrapWriter = func(f io.Writer) io.Writer { return &failingWriter{w: f, n: 3, err: errDisk} }
			},
			code: schema.CodeInternalError,
		},
		{
			name: "review refuses",
			setup: func(t *testing.T, w *FS, dir string) {
				w.ReviewWrite = func(context.Context, string, string, string, bool) error {
					return &schema.Error{Code: schema.CodeInvalidRequest, Message: "editor: user rejected the edit"}
				}
			},
			code: schema.CodeInvalidRequest,
			msg:  "editor: user rejected the edit", // the review's own error passes through
		},
		{
			name: "read-only directory",
			setup: func(t *testing.T, w *FS, dir string) {
				if os.Geteuid() == 0 {
					t.Skip("root ignores directory permissions")
				}
				if err := os.Chmod(dir, 0o555); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Chmod(dir, 0o755) })
			},
			code: schema.CodeInternalError,
		},
		{
			name: "target is a directory",
			setup: func(t *testing.T, w *FS, dir string) {
				mustMkdir(t, filepath.Join(dir, "d.txt"))
			},
			code: schema.CodeInvalidParams,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFSEnv(t)
			dir := filepath.Join(e.root, "pkg")
			mustMkdir(t, dir)
			p := filepath.Join(dir, "d.txt")
			w := &FS{Roots: []string{e.root}}
			tt.setup(t, w, dir)
			var old string
			if fi, err := os.Stat(p); err != nil {
				old = "old content\n"
				mustWrite(t, p, old)
			} else if !fi.IsDir() {
				t.Fatal("unexpected file")
			}
			_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: p, Content: "new content that is longer\n"})
			if tt.msg != "" {
				var e *schema.Error
				if !errors.As(err, &e) || e.Code != tt.code || e.Message != tt.msg {
					t.Fatalf("error = %v, want code %d and message %q", err, tt.code, tt.msg)
				}
			} else {
				wantCode(t, err, tt.code)
			}
			if old != "" {
				if got := readFile(t, p); got != old {
					t.Errorf("content = %q, want the old %q", got, old)
				}
			}
			if left := tmpFiles(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

type failingWriter struct {
	w   io.Writer
	n   int
	err error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n, _ := f.w.Write(p[:f.n])
		return n, f.err
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestWriteTextFileReview(t *testing.T) {
	type call struct {
		Path, Old, New string
		Exists         bool
	}
	e := newFSEnv(t)
	var calls []call
	w := &FS{
		Roots: []string{e.root},
		ReviewWrite: func(_ context.Context, p, old, new string, exists bool) error {
			calls = append(calls, call{p, old, new, exists})
			return nil
		},
	}
	ctx := context.Background()
	if _, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: e.root + "/file.txt", Content: "edited\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: e.root + "//fresh.txt", Content: "fresh"}); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{Path: e.root + "/file.txt", Old: "inside\n", New: "edited\n", Exists: true},
		{Path: e.root + "/fresh.txt", Old: "", New: "fresh", Exists: false},
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("review calls (-want +got):\n%s", diff)
	}
}

func TestWriteTextFileReviewBlocksUntilCancel(t *testing.T) {
	e := newFSEnv(t)
	entered := make(chan struct{})
	w := &FS{
		Roots: []string{e.root},
		ReviewWrite: func(ctx context.Context, _, _, _ string, _ bool) error {
			close(entered)
			<-ctx.Done() // the user never answers
			return ctx.Err()
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: e.root + "/file.txt", Content: "never"})
		done <- err
	}()
	<-entered
	select {
	case err := <-done:
		t.Fatalf("write returned before the review ended: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if got := readFile(t, e.root+"/file.txt"); got != "inside\n" {
		t.Errorf("content = %q, want it unchanged", got)
	}
}

func TestWriteTextFileReviewApprovedTooLate(t *testing.T) {
	// The agent withdrew the request while the user was approving: the
	// approval must not be applied.
	e := newFSEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	w := &FS{
		Roots: []string{e.root},
		ReviewWrite: func(context.Context, string, string, string, bool) error {
			cancel()
			return nil
		},
	}
	_, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: e.root + "/file.txt", Content: "late"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if got := readFile(t, e.root+"/file.txt"); got != "inside\n" {
		t.Errorf("content = %q, want it unchanged", got)
	}
}

func TestWriteTextFileConcurrent(t *testing.T) {
	e := newFSEnv(t)
	w := &FS{Roots: []string{e.root}}
	contents := map[string]bool{}
	for i := range 16 {
		contents[strings.Repeat(string(rune('a'+i)), 10000)] = true
	}
	var wg sync.WaitGroup
	for c := range contents {
		wg.Go(func() {
			if _, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: e.root + "/same.txt", Content: c}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			// Readers see a whole version or none, never a torn one.
			resp, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: e.root + "/same.txt"})
			if err == nil && !contents[resp.Content] && resp.Content != "" {
				t.Errorf("torn read: %d bytes", len(resp.Content))
			}
		})
	}
	wg.Wait()
	if got := readFile(t, e.root+"/same.txt"); !contents[got] {
		t.Errorf("final content is none of the writes")
	}
	if left := tmpFiles(t, e.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func ptr[T any](v T) *T { return &v }
