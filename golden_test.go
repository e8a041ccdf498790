package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	name string
	data []byte
}

// parseTxtar reads the txtar format: a comment, then files, each introduced
// by a line "-- name --".
func parseTxtar(data []byte) (comment []byte, files []txtarFile) {
	var cur *txtarFile
	for line := range bytes.Lines(data) {
		l := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(l, []byte("-- ")) && bytes.HasSuffix(l, []byte(" --")) && len(l) > 6 {
			files = append(files, txtarFile{name: string(l[3 : len(l)-3])})
			cur = &files[len(files)-1]
			continue
		}
		if cur == nil {
			comment = append(comment, line...)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	return comment, files
}

func formatTxtar(comment []byte, files []txtarFile) []byte {
	var b bytes.Buffer
	b.Write(comment)
	for _, f := range files {
		b.WriteString("-- " + f.name + " --\n")
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestGoldenTurns replays testdata/turns/*.txtar: the updates in
// updates.jsonl are sent as one turn, then the folded turn and session state
// are compared with turn.json and session.json (rewritten with -update).
func TestGoldenTurns(t *testing.T) {
	paths, _ := filepath.Glob("testdata/turns/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(data)
			var updates []byte
			for _, f := range files {
				if f.name == "updates.jsonl" {
					updates = f.data
				}
			}
			turnJSON, sessionJSON := runGoldenTurn(t, updates)
			if *update {
				out := []txtarFile{{"updates.jsonl", updates}, {"turn.json", turnJSON}, {"session.json", sessionJSON}}
				if err := os.WriteFile(path, formatTxtar(comment, out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := map[string][]byte{}
			for _, f := range files {
				want[f.name] = f.data
			}
			compareJSON(t, "turn.json", want["turn.json"], turnJSON)
			compareJSON(t, "session.json", want["session.json"], sessionJSON)
		})
	}
}

func runGoldenTurn(t *testing.T, updates []byte) (turnJSON, sessionJSON []byte) {
	t.Helper()
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	sc := bufio.NewScanner(bytes.NewReader(updates))
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		a.update("s1", json.RawMessage(bytes.Clone(sc.Bytes())))
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	st := turn.State()
	var kinds []string
	for u := range turn.Updates() {
		kinds = append(kinds, u.UpdateKind())
	}
	// TurnState's own MarshalJSON would swallow an embedding struct's
	// fields, so the update kinds are added to the decoded object.
	var obj map[string]any
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &obj)
	obj["updateKinds"] = kinds
	tj, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	sj, err := json.MarshalIndent(s.State(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(tj, '\n'), append(sj, '\n')
}

func compareJSON(t *testing.T, name string, want, got []byte) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("%s missing from the golden file; run go test -run TestGoldenTurns -update", name)
		return
	}
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s (got): %v", name, err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}
