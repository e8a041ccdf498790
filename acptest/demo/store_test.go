package demo

// Tests of the demo's state directory: sessions that outlive the agent,
// its bounds, and a directory someone else wrote into.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log that the agent's goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func loadParams(sid string) map[string]any {
	return map[string]any{"sessionId": sid, "cwd": "/proj", "mcpServers": []any{}}
}

// TestSessionsOutliveTheAgent: a second agent on the same directory (a
// restarted process) lists the first one's session with its title, loads
// it replaying its history, resumes it, and numbers its turns after the
// stored ones.
func TestSessionsOutliveTheAgent(t *testing.T) {
	dir := t.TempDir()
	c := dial(t, New(&Options{StateDir: dir}), nil)
	c.answer = allow("reject")
	sid := c.newSession()
	_, first := c.call("session/prompt", prompt(sid, "/echo one"))
	c.call("session/prompt", prompt(sid, "remember me"))

	c2 := dial(t, New(&Options{StateDir: dir}), nil)
	res, _ := c2.call("session/list", map[string]any{})
	var list struct {
		Sessions []map[string]any `json:"sessions"`
	}
	json.Unmarshal(res, &list)
	if len(list.Sessions) != 1 || list.Sessions[0]["sessionId"] != sid || list.Sessions[0]["title"] != "/echo one" || list.Sessions[0]["cwd"] != "/proj" {
		t.Fatalf("list = %s", res)
	}
	_, ups := c2.call("session/load", loadParams(sid))
	if said(ups, "msg-1") != said(first, "msg-1") || said(ups, "msg-2") == "" {
		t.Errorf("replay lacks the first process's answers: %v", kinds(ups))
	}
	if ups[0]["sessionUpdate"] != "user_message_chunk" {
		t.Errorf("replay starts with %v", ups[0])
	}
	c2.answer = allow("reject")
	_, ups = c2.call("session/prompt", prompt(sid, "/echo three"))
	if said(ups, "msg-3") != "three" {
		t.Errorf("the third turn is not numbered 3: %v", ups)
	}

	c3 := dial(t, New(&Options{StateDir: dir}), nil)
	c3.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/proj"})
	_, ups = c3.call("session/load", loadParams(sid))
	if said(ups, "msg-3") != "three" {
		t.Errorf("the third process does not replay the second's turn: %v", kinds(ups))
	}
}

// TestZeroOptionsKeepNothing: without StateDir a second agent knows no
// session of the first.
func TestZeroOptionsKeepNothing(t *testing.T) {
	c := start(t, nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "/echo one"))
	c2 := start(t, nil)
	if m, _ := c2.await(c2.request("session/load", loadParams(sid))); m.Error == nil {
		t.Fatalf("a fresh in-memory agent loaded %s", sid)
	}
}

// TestKillSavesAndEnds: in-process, /kill streams, saves and ends the
// connection without a reply; a new agent resumes the session.
func TestKillSavesAndEnds(t *testing.T) {
	dir := t.TempDir()
	c := dial(t, New(&Options{StateDir: dir}), nil)
	sid := c.newSession()
	c.request("session/prompt", prompt(sid, "/kill"))
	var chunks int
	for line := range c.lines {
		var m msg
		json.Unmarshal(line, &m)
		if m.Method == "session/update" {
			chunks++
		} else {
			t.Errorf("after the chunks got %s", line)
		}
	}
	if chunks != 3 {
		t.Errorf("%d updates before the death, want 3 chunks", chunks)
	}
	c2 := dial(t, New(&Options{StateDir: dir}), nil)
	_, ups := c2.call("session/load", loadParams(sid))
	if got := said(ups, "msg-1"); !strings.Contains(got, "dying in 1") {
		t.Errorf("the killed turn's chunks were not saved: %q", got)
	}
}

// TestHostileStateDir: files the demo did not write, or that were
// damaged, fail their own session's load with an error naming the file,
// are left out of the list, and break nothing else.
func TestHostileStateDir(t *testing.T) {
	dir := t.TempDir()
	good := dial(t, New(&Options{StateDir: dir}), nil)
	goodID := good.newSession()

	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	valid := func(id string) string {
		return fmt.Sprintf(`{"format":1,"sessionId":%q,"cwd":"/proj","updatedAt":"x","turns":1,"history":[]}`, id)
	}
	write("trunc.json", valid("trunc")[:30])
	write("other.json", valid("someone"))
	write("relative.json", strings.Replace(valid("relative"), `"/proj"`, `"proj"`, 1))
	write("future.json", strings.Replace(valid("future"), `"format":1`, `"format":9`, 1))
	write("notupdate.json", strings.Replace(valid("notupdate"), `"history":[]`, `"history":[1]`, 1))
	write("negative.json", strings.Replace(valid("negative"), `"turns":1`, `"turns":-1`, 1))
	write("huge.json", valid("huge")+strings.Repeat(" ", MaxFileSize))
	write("with space.json", valid("with space"))
	if err := os.Mkdir(filepath.Join(dir, "adir.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(outside, []byte(valid("link")), 0o600)
	symlinks := runtime.GOOS != "windows"
	if symlinks {
		if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
			t.Fatal(err)
		}
	}

	var log syncBuffer
	c := dial(t, New(&Options{StateDir: dir, Stderr: &log}), nil)
	res, _ := c.call("session/list", map[string]any{})
	var list struct {
		Sessions []struct{ SessionID string } `json:"sessions"`
	}
	json.Unmarshal(res, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != goodID {
		t.Errorf("list = %s, want only %s", res, goodID)
	}
	for _, tc := range []struct{ id, why string }{
		{"trunc", "is corrupt (unexpected end of JSON input)"},
		{"other", `is corrupt (it holds session "someone")`},
		{"relative", `cwd "proj" is not absolute`},
		{"future", "has format 9, not 1"},
		{"notupdate", "history entry 0 is no update"},
		{"negative", "turns -1"},
		{"huge", fmt.Sprintf("is larger than %d bytes", MaxFileSize)},
		{"adir", "is not a regular file"},
	} {
		if tc.id != "adir" && !strings.Contains(log.String(), filepath.Join(dir, tc.id+".json")) {
			t.Errorf("the log does not name %s.json:\n%s", tc.id, log.String())
		}
		m, _ := loadErr(t, c, tc.id)
		if !strings.Contains(m, "demo: session "+tc.id+": state file "+filepath.Join(dir, tc.id+".json")+" ") || !strings.Contains(m, tc.why) {
			t.Errorf("load %s: error %s, want one naming the file and %q", tc.id, m, tc.why)
		}
	}
	if symlinks {
		if m, _ := loadErr(t, c, "link"); !strings.Contains(m, "is not a regular file") {
			t.Errorf("a symlink to a file outside was followed: %s", m)
		}
	}
	// Ids that cannot name a file are no sessions, and reach no file.
	for _, id := range []string{"with space", "../" + filepath.Base(dir) + "/" + goodID, strings.Repeat("a", 65), ""} {
		if m, code := loadErr(t, c, id); code != -32002 {
			t.Errorf("load %q: %s (code %d), want not found", id, m, code)
		}
	}
	// The agent lives on: the good session loads.
	c.call("session/load", loadParams(goodID))
}

// loadErr loads id on c and returns the error's message and code.
func loadErr(t *testing.T, c *client, id string) (string, int) {
	t.Helper()
	m, _ := c.await(c.request("session/load", loadParams(id)))
	if m.Error == nil {
		t.Fatalf("load %q succeeded: %s", id, m.Result)
	}
	var e struct {
		Code    int
		Message string
	}
	json.Unmarshal(m.Error, &e)
	return e.Message, e.Code
}

// TestHistoryBound: a session saved with more than MaxHistory updates
// keeps its last MaxHistory.
func TestHistoryBound(t *testing.T) {
	dir := t.TempDir()
	c := dial(t, New(&Options{StateDir: dir}), nil)
	sid := c.newSession()
	// A prompt of many blocks records one update per block.
	var blocks []any
	for range MaxHistory + 10 {
		blocks = append(blocks, map[string]any{"type": "text", "text": "/echo x"})
	}
	c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": blocks})
	c.call("session/prompt", prompt(sid, "/echo last"))
	var st stored
	b, err := os.ReadFile(filepath.Join(dir, sid+".json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &st)
	if len(st.History) != MaxHistory || st.Turns != 2 {
		t.Fatalf("%d updates and %d turns kept, want %d and 2", len(st.History), st.Turns, MaxHistory)
	}
	if !strings.Contains(string(st.History[len(st.History)-1]), `"last"`) {
		t.Errorf("the newest update was not kept: %s", st.History[len(st.History)-1])
	}
}

// TestFileSizeBound: a session whose file would pass MaxFileSize keeps
// fewer updates, oldest dropped, and its file stays loadable.
func TestFileSizeBound(t *testing.T) {
	dir := t.TempDir()
	c := dial(t, New(&Options{StateDir: dir}), nil)
	sid := c.newSession()
	big := strings.Repeat("x", MaxFileSize/5) // a turn records it twice: prompt, echo
	for range 3 {
		c.call("session/prompt", prompt(sid, "/echo "+big))
	}
	info, err := os.Stat(filepath.Join(dir, sid+".json"))
	if err != nil || info.Size() > MaxFileSize {
		t.Fatalf("file %v, %v", info, err)
	}
	c2 := dial(t, New(&Options{StateDir: dir}), nil)
	_, ups := c2.call("session/load", loadParams(sid))
	if len(ups) == 0 || len(ups) >= 7 {
		t.Errorf("replayed %d updates of 6 (and the commands), want fewer but some", len(ups))
	}
}

// TestSessionsBound: saving beyond MaxSessions removes the least recently
// written files, and no temporary file is left behind.
func TestSessionsBound(t *testing.T) {
	dir := t.TempDir()
	c := dial(t, New(&Options{StateDir: dir}), nil)
	var ids []string
	for range MaxSessions + 3 {
		ids = append(ids, c.newSession())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != MaxSessions {
		t.Fatalf("%d files kept, want %d: %v", len(names), MaxSessions, names)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "demo-") || !strings.HasSuffix(n, ".json") {
			t.Errorf("left behind: %s", n)
		}
	}
	// The one just saved is kept, though it may tie with older ones (file
	// times are coarse); which older ones went depends on that clock.
	if _, err := os.Stat(filepath.Join(dir, ids[len(ids)-1]+".json")); err != nil {
		t.Error(err)
	}
}

// TestUnwritableStateDir: a directory the agent cannot write is logged
// and the agent keeps working in memory.
func TestUnwritableStateDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	var log syncBuffer
	c := dial(t, New(&Options{StateDir: filepath.Join(file, "sub"), Stderr: &log}), nil)
	sid := c.newSession()
	_, ups := c.call("session/prompt", prompt(sid, "/echo still here"))
	if said(ups, "msg-1") != "still here" {
		t.Errorf("the turn failed: %v", ups)
	}
	if !strings.Contains(log.String(), "acp-demo: could not save session "+sid) {
		t.Errorf("log = %q", log.String())
	}
	if _, ups := c.call("session/load", loadParams(sid)); said(ups, "msg-1") != "still here" {
		t.Errorf("the session is not kept in memory: %v", ups)
	}
}

// TestPruneKeepsTheSessionJustSaved: the file just written is never the
// one pruned, even when the others look newer (file times are coarse, and
// clocks move).
func TestPruneKeepsTheSessionJustSaved(t *testing.T) {
	dir := t.TempDir()
	future := time.Now().Add(time.Hour)
	for i := range MaxSessions {
		id := fmt.Sprintf("old-%03d", i)
		p := filepath.Join(dir, id+".json")
		os.WriteFile(p, []byte(fmt.Sprintf(`{"format":1,"sessionId":%q,"cwd":"/proj","updatedAt":"x","history":[]}`, id)), 0o600)
		if err := os.Chtimes(p, future, future); err != nil {
			t.Fatal(err)
		}
	}
	c := dial(t, New(&Options{StateDir: dir}), nil)
	sid := c.newSession()
	if _, err := os.Stat(filepath.Join(dir, sid+".json")); err != nil {
		t.Fatalf("the new session's file was pruned: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != MaxSessions {
		t.Errorf("%d files, want %d", len(entries), MaxSessions)
	}
}
