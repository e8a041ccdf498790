package acp

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// foldSamples holds, for every session update kind of the schema, updates
// that end with one of that kind, chosen so that the last one changes the
// folded state. Adding a kind to the schema makes
// TestEveryUpdateKindChangesState fail until the fold handles it and a
// sample is added here.
var foldSamples = map[string][]string{
	"user_message_chunk":        {`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"u"}}`},
	"agent_message_chunk":       {`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}`},
	"agent_thought_chunk":       {`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t"}}`},
	"tool_call":                 {`{"sessionUpdate":"tool_call","toolCallId":"c","title":"Read"}`},
	"tool_call_update":          {`{"sessionUpdate":"tool_call","toolCallId":"c","title":"Read"}`, `{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed"}`},
	"plan":                      {`{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}`},
	"available_commands_update": {`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"h","description":"help"}]}`},
	"current_mode_update":       {`{"sessionUpdate":"current_mode_update","currentModeId":"code"}`},
	"config_option_update":      {`{"sessionUpdate":"config_option_update","configOptions":[{"type":"boolean","id":"b","name":"B","currentValue":true}]}`},
	"session_info_update":       {`{"sessionUpdate":"session_info_update","title":"T"}`},
	"usage_update":              {`{"sessionUpdate":"usage_update","used":1,"size":10}`},
	"plan_update":               {`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}`},
	"plan_removed":              {`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}`, `{"sessionUpdate":"plan_removed","planId":"p"}`},
	"notice":                    {`{"sessionUpdate":"notice","severity":"info","title":"m"}`},
	"compaction_update":         {`{"sessionUpdate":"compaction_update","compactionId":"k","status":"started"}`},
	"compaction_summary_chunk":  {`{"sessionUpdate":"compaction_summary_chunk","compactionId":"k","content":{"type":"text","text":"s"}}`},
	"subagent_update":           {`{"sessionUpdate":"subagent_update","sessionId":"child","title":"T","state":{"state":"running"}}`},
	"session_message":           {`{"sessionUpdate":"session_message","messageId":"m","recipientSessionId":"child","content":[{"type":"text","text":"go"}]}`},
	"session_message_chunk":     {`{"sessionUpdate":"session_message_chunk","messageId":"m","content":{"type":"text","text":"go"}}`},
}

// TestEveryUpdateKindChangesState reads the update kinds from the pinned
// unstable schema (a superset of the stable one and of the kinds
// internal/schemagen/stabilised.json promotes) and checks that each
// decodes as its own type and changes the session's folded state, both
// inside a turn and outside one (the session's history).
func TestEveryUpdateKindChangesState(t *testing.T) {
	raw, err := os.ReadFile("schema/sdk-2.4.0/v1/schema.unstable.json")
	if err != nil {
		t.Fatal(err)
	}
	var sch struct {
		Defs map[string]struct {
			OneOf []struct {
				Properties struct {
					SessionUpdate struct {
						Const string `json:"const"`
					} `json:"sessionUpdate"`
				} `json:"properties"`
			} `json:"oneOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, b := range sch.Defs["SessionUpdate"].OneOf {
		kinds = append(kinds, b.Properties.SessionUpdate.Const)
	}
	if len(kinds) < 10 {
		t.Fatalf("read only %d kinds from the schema: %v", len(kinds), kinds)
	}
	for k := range foldSamples {
		if !slices.Contains(kinds, k) {
			t.Errorf("foldSamples has %q, which the schema does not", k)
		}
	}
	c := &Client{}
	c.opts.Limits = c.opts.Limits.withDefaults()
	for _, kind := range kinds {
		samples := foldSamples[kind]
		if len(samples) == 0 {
			t.Errorf("%s: no sample in foldSamples; fold the new kind, then add one", kind)
			continue
		}
		var ups []schema.Update
		for _, s := range samples {
			u, err := testDecodeUpdate([]byte(s))
			if err != nil {
				t.Fatalf("%s: %s: %v", kind, s, err)
			}
			ups = append(ups, u)
		}
		last := ups[len(ups)-1]
		if _, unknown := last.(*schema.UnknownUpdate); unknown || last.UpdateKind() != kind {
			t.Errorf("%s decodes as %T (kind %q)", kind, last, last.UpdateKind())
			continue
		}
		// It encodes with its kind (the --json output and acptest send
		// updates this way) and decodes back to the same value.
		if b, err := json.Marshal(last); err != nil {
			t.Errorf("%s: encoding: %v", kind, err)
		} else if again, err := testDecodeUpdate(b); err != nil || again.UpdateKind() != kind ||
			!cmp.Equal(again, last, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })) {
			t.Errorf("%s re-encoded as %s decodes as %T %v", kind, b, again, err)
		}
		for _, inTurn := range []bool{true, false} {
			s := newSession(c, "s", "/w", nil)
			var turn *Turn
			if inTurn {
				turn = &Turn{s: s, done: make(chan struct{}), call: promptCall{sent: make(chan error, 1)}}
				s.turn = turn
			}
			state := func() any {
				if turn != nil {
					return []any{s.State(), turn.State()}
				}
				return s.State()
			}
			for _, u := range ups[:len(ups)-1] {
				s.apply(u, nil, 0)
			}
			before := state()
			s.apply(last, nil, 0)
			// The logs of raw updates always grow; the folded fields are
			// what must change.
			logs := cmpopts.IgnoreFields(SessionState{}, "Outside")
			raw := cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })
			changed := !cmp.Equal(before, state(), logs, raw)
			if !changed {
				t.Errorf("%s (in a turn: %v) changed no state", kind, inTurn)
			}
		}
	}
}

// Order numbers a fold's items — messages, thoughts, user messages, tool
// calls — in the order each started, across the lists; later chunks and
// updates of an item keep its number.
func TestStateOrderInterleaves(t *testing.T) {
	var tf TurnFold
	seq := uint64(0)
	for _, s := range []string{
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"think"}}`,                // 0
		`{"sessionUpdate":"tool_call","toolCallId":"a","title":"Read"}`,                                   // 1
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"one"}}`,                  // 2
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" more"}}`,                // continues 2
		`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"completed"}`,                      // a stays 1
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"you"}}`,                   // 3
		`{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"two"}}`, // 4
		`{"sessionUpdate":"tool_call_update","toolCallId":"b","status":"in_progress"}`,                    // 5, unannounced
		`{"sessionUpdate":"tool_call","toolCallId":"a","title":"Read again"}`,                             // replaces a, stays 1
	} {
		u, err := testDecodeUpdate([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		seq++
		tf.Apply(Event{Seq: seq, Kind: EventUpdate, Origin: OriginAgent, Update: u})
	}
	st := tf.State()
	got := map[string]int{}
	for _, m := range st.Thoughts {
		got["thought "+m.Text] = m.Order
	}
	for _, m := range st.Messages {
		got["message "+m.Text] = m.Order
	}
	for _, m := range st.UserMessages {
		got["user "+m.Text] = m.Order
	}
	for _, tc := range st.ToolCalls {
		got["tool "+tc.ToolCallID] = tc.Order
	}
	want := map[string]int{"thought think": 0, "tool a": 1, "message one more": 2, "user you": 3, "message two": 4, "tool b": 5}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("orders (-want +got):\n%s", d)
	}

	// Items interleaves the lists by Order.
	var kinds []string
	for i, it := range st.Items() {
		if it.Order() != i {
			t.Errorf("item %d has Order %d", i, it.Order())
		}
		kinds = append(kinds, string(it.Kind))
	}
	wantKinds := []string{"thought", "tool_call", "message", "user_message", "message", "tool_call"}
	if d := cmp.Diff(wantKinds, kinds); d != "" {
		t.Errorf("Items kinds (-want +got):\n%s", d)
	}
}
