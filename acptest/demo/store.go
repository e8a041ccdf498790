package demo

// The demo's sessions on disk: one JSON file per session in
// Options.StateDir, written atomically, bounded, and read defensively.

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp/acptest"
)

// The bounds of the state directory. What exceeds them is dropped
// quietly, oldest first: the demo is a demo, not an archive.
const (
	// MaxHistory is the number of updates kept per session: a session
	// saved with more keeps its last MaxHistory, so a load replays the end
	// of a very long conversation only.
	MaxHistory = 2000
	// MaxSessions is the number of session files kept: saving a new
	// session beyond it removes the least recently written ones.
	MaxSessions = 100
	// MaxFileSize bounds a session file, written or read: a session whose
	// file would be larger keeps fewer updates (oldest dropped); a larger
	// file found in the directory fails its session's load with an error.
	MaxFileSize = 4 << 20
)

// stored is a session file's content.
type stored struct {
	// Format is 1; a file of another format is refused.
	Format    int               `json:"format"`
	SessionID string            `json:"sessionId"`
	Cwd       string            `json:"cwd"`
	Title     string            `json:"title,omitempty"`
	UpdatedAt string            `json:"updatedAt"`
	Turns     int               `json:"turns"`
	History   []json.RawMessage `json:"history"`
}

// store keeps sessions in dir ("" keeps none). Its methods are safe for
// concurrent use; saves are serialised.
type store struct {
	dir  string
	logf func(format string, args ...any)
	mu   sync.Mutex
}

// validID says whether id can name a session file: ASCII letters,
// digits, '-' and '_', at most 64 bytes. Any other id (a client's "../x")
// is no session of the demo's.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (s *store) path(id string) string { return filepath.Join(s.dir, id+".json") }

// save writes the session's file: to a temporary file first, renamed over
// the old one, so that a process killed mid-write leaves the old file or
// the new one, never half of one. Failures are logged, not returned: the
// turn goes on in memory.
func (s *store) save(sess *acptest.Session, turns int) {
	if s.dir == "" || !validID(sess.SessionID()) {
		return
	}
	st := stored{Format: 1, SessionID: sess.SessionID(), Cwd: sess.Cwd(), Title: sess.Title(),
		UpdatedAt: time.Now().UTC().Format(time.RFC3339), Turns: turns, History: sess.History()}
	if n := len(st.History); n > MaxHistory {
		st.History = st.History[n-MaxHistory:]
	}
	b, err := json.Marshal(st)
	for err == nil && len(b) > MaxFileSize && len(st.History) > 0 {
		st.History = st.History[(len(st.History)+1)/2:]
		b, err = json.Marshal(st)
	}
	if err == nil && len(b) > MaxFileSize {
		err = fmt.Errorf("larger than %d bytes", MaxFileSize)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = s.write(st.SessionID, b)
	}
	if err != nil {
		s.logf("could not save session %s: %v", st.SessionID, err)
		return
	}
	s.prune(st.SessionID)
}

func (s *store) write(id string, b []byte) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(s.dir, "."+id+"."+hex.EncodeToString(rnd[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path(id))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// prune removes the least recently written session files beyond
// MaxSessions, never keep's (the one just written: file times are coarse,
// so it may tie with older ones). s.mu is held.
func (s *store) prune(keep string) {
	files := slices.DeleteFunc(s.files(), func(f fs.FileInfo) bool { return f.Name() == keep+".json" })
	if len(files) < MaxSessions {
		return
	}
	for _, f := range files[MaxSessions-1:] {
		if err := os.Remove(filepath.Join(s.dir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.logf("could not remove an old session: %v", err)
		}
	}
}

// files returns the directory's regular session files, newest first.
func (s *store) files() []fs.FileInfo {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.logf("reading the state directory: %v", err)
		}
		return nil
	}
	var out []fs.FileInfo
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID(id) || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b fs.FileInfo) int {
		return cmp.Or(b.ModTime().Compare(a.ModTime()), strings.Compare(a.Name(), b.Name()))
	})
	return out
}

// list returns the SessionInfo of each readable session file, newest
// first, for session/list; a file it cannot read is logged and left out
// (its session's load says why).
func (s *store) list() []any {
	s.mu.Lock()
	files := s.files()
	s.mu.Unlock()
	var out []any
	for _, f := range files[:min(len(files), MaxSessions)] {
		id := strings.TrimSuffix(f.Name(), ".json")
		st, err := s.read(id)
		if err != nil {
			s.logf("%v", err)
			continue
		}
		info := map[string]any{"sessionId": st.SessionID, "cwd": st.Cwd, "updatedAt": st.UpdatedAt}
		if st.Title != "" {
			info["title"] = st.Title
		}
		out = append(out, info)
	}
	return out
}

// open is acptest.Options.OpenSession: the session's file, or nil for a
// session that has none.
func (s *store) open(id string) (*acptest.StoredSession, error) {
	if !validID(id) {
		return nil, nil
	}
	st, err := s.read(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &acptest.StoredSession{Cwd: st.Cwd, Title: st.Title, History: st.History, Turns: st.Turns}, nil
}

// read reads and checks a session file. Its errors name the session and
// the file, and wrap fs.ErrNotExist when there is none.
func (s *store) read(id string) (*stored, error) {
	p := s.path(id)
	fail := func(format string, args ...any) (*stored, error) {
		return nil, fmt.Errorf("demo: session %s: state file %s %s; delete it to forget the session", id, p, fmt.Sprintf(format, args...))
	}
	// Lstat first: a symlink in the directory is no session of ours.
	if info, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, err
	} else if err == nil && !info.Mode().IsRegular() {
		return fail("is not a regular file")
	}
	f, err := os.Open(p)
	if err != nil {
		return fail("cannot be read (%v)", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return fail("is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return fail("cannot be read (%v)", err)
	}
	if len(b) > MaxFileSize {
		return fail("is larger than %d bytes", MaxFileSize)
	}
	var st stored
	if err := json.Unmarshal(b, &st); err != nil {
		return fail("is corrupt (%v)", err)
	}
	switch {
	case st.Format != 1:
		return fail("has format %d, not 1", st.Format)
	case st.SessionID != id:
		return fail("is corrupt (it holds session %q)", st.SessionID)
	case !filepath.IsAbs(st.Cwd):
		return fail("is corrupt (cwd %q is not absolute)", st.Cwd)
	case st.Turns < 0:
		return fail("is corrupt (turns %d)", st.Turns)
	case len(st.History) > MaxHistory:
		return fail("is corrupt (%d updates, more than %d)", len(st.History), MaxHistory)
	}
	for i, u := range st.History {
		var obj struct {
			Kind string `json:"sessionUpdate"`
		}
		if json.Unmarshal(u, &obj) != nil || obj.Kind == "" {
			return fail("is corrupt (history entry %d is no update)", i)
		}
	}
	return &st, nil
}
