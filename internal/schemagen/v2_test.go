package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpclient/acp/internal/v2wire"
)

// TestV2GeneratedFileIsFresh fails when internal/v2wire/wire_gen.go or
// wire_unstable_gen.go is not what `go generate ./...` writes from the
// pinned v2 schemas (stable and unstable).
func TestV2GeneratedFileIsFresh(t *testing.T) {
	for file, gen := range map[string]func(string) ([]byte, error){v2OutFile: generateV2, v2UnstableOutFile: generateV2Unstable} {
		want, err := gen(root)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(v2OutDir), file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./...` in the repository root and commit the result\n%s",
				file, firstDiff(got, want))
		}
	}
}

// TestV2PatchTellsOmittedNullValue holds the rule v2's upserts rest on: an
// omitted field keeps, null clears, a value replaces. The generated types
// must carry the three apart for nullable optional fields.
func TestV2PatchTellsOmittedNullValue(t *testing.T) {
	for _, c := range []struct {
		in        string
		set, null bool
		title     string
	}{
		{`{"toolCallId":"a"}`, false, false, ""},
		{`{"toolCallId":"a","title":null}`, true, true, ""},
		{`{"toolCallId":"a","title":"T"}`, true, false, "T"},
	} {
		var u v2wire.ToolCallUpdate
		if err := json.Unmarshal([]byte(c.in), &u); err != nil {
			t.Fatal(err)
		}
		if u.Title.Set != c.set || u.Title.Null != c.null || u.Title.V != c.title {
			t.Errorf("%s: title = %+v", c.in, u.Title)
		}
		out, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != c.in {
			t.Errorf("round trip of %s = %s", c.in, out)
		}
	}
}

// TestV2UnionKinds checks that the discriminators of the unions the client
// dispatches on are read from the schema.
func TestV2UnionKinds(t *testing.T) {
	has := func(l []string, k string) bool {
		for _, x := range l {
			if x == k {
				return true
			}
		}
		return false
	}
	for _, k := range []string{"state_update", "agent_message", "user_message", "agent_thought", "tool_call_content_chunk", "terminal_update", "terminal_output_chunk", "agent_message_chunk"} {
		if !has(v2wire.SessionUpdateKinds, k) {
			t.Errorf("SessionUpdateKinds lacks %q: %v", k, v2wire.SessionUpdateKinds)
		}
	}
	for _, k := range []string{"running", "idle", "requires_action"} {
		if !has(v2wire.StateUpdateKinds, k) {
			t.Errorf("StateUpdateKinds lacks %q", k)
		}
	}
}
