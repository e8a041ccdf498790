package traceview

import (
	"fmt"
	"strings"
	"testing"
)

// Tests of what a newcomer sees first: the last turn open, a tool card
// titled as the client's state titles it, the content an update replaced,
// and permission answers coloured by what they allowed.

// traceLines joins frames (each {"dir":…,"msg":…} without "t") into a
// trace, timestamped 1, 2, 3… ms.
func traceLines(frames ...string) []byte {
	var b strings.Builder
	for i, f := range frames {
		fmt.Fprintf(&b, `{"t":%d,%s`+"\n", i+1, strings.TrimPrefix(f, "{"))
	}
	return []byte(b.String())
}

// look renders trace and returns its model, failing on a malformed line
// (a mistake in the test's trace).
func look(t *testing.T, trace []byte) *page {
	t.Helper()
	_, p := render(t, trace, Options{})
	if len(p.Bad) != 0 {
		t.Fatalf("malformed lines: %+v", p.Bad)
	}
	return p
}

func prompt(id int, sid, text string) string {
	return fmt.Sprintf(`{"dir":">","msg":{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}}`, id, sid, text)
}

func promptEnd(id int) string {
	return fmt.Sprintf(`{"dir":"<","msg":{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}}`, id)
}

func upd(sid, u string) string {
	return fmt.Sprintf(`{"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":%s}}}`, sid, u)
}

// permReq is a v1 permission request for tool call tc whose toolCall
// carries fields (`"title":…` and the like, or "").
func permReq(id int, sid, tc, fields, options string) string {
	if fields != "" {
		fields = "," + fields
	}
	return fmt.Sprintf(`{"dir":"<","msg":{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":%q,"toolCall":{"toolCallId":%q%s},"options":%s}}}`, id, sid, tc, fields, options)
}

func permAnswer(id int, outcome string) string {
	return fmt.Sprintf(`{"dir":">","msg":{"jsonrpc":"2.0","id":%d,"result":{"outcome":%s}}}`, id, outcome)
}

const fourOptions = `[{"optionId":"a1","name":"Allow once","kind":"allow_once"},{"optionId":"a2","name":"Always allow","kind":"allow_always"},{"optionId":"r1","name":"Reject","kind":"reject_once"},{"optionId":"r2","name":"Always reject","kind":"reject_always"}]`

// TestRenderLastTurnOpen: the turn whose prompt came last in the trace is
// the one segment marked open, whichever session it is in; a trace of no
// turn opens none.
func TestRenderLastTurnOpen(t *testing.T) {
	trace := traceLines(
		prompt(1, "a", "first"), promptEnd(1),
		prompt(2, "b", "second"),
		prompt(3, "a", "third"), // while b's turn runs
		promptEnd(3), promptEnd(2),
		upd("b", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}}`),
	)
	p := look(t, trace)
	var open []string
	for _, s := range p.Sessions {
		for _, g := range s.Segs {
			if g.Open {
				open = append(open, fmt.Sprintf("%s/%s %d %s", s.ID, g.Kind, g.N, g.Prompt))
			}
		}
	}
	if fmt.Sprint(open) != "[a/turn 2 third]" {
		t.Errorf("open segments %q, want only session a's turn 2 (the last prompt)", open)
	}
	p = look(t, traceLines(upd("a", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no turn"}}`)))
	for _, g := range p.Sessions[0].Segs {
		if g.Open {
			t.Errorf("a trace without turns opens %+v", g)
		}
	}
}

// TestRenderToolTitleIsTheCalls: a permission request's toolCall title is
// the question put to the user: the permission row's title, not the
// card's, which keeps the call's own title (the latest of tool_call and
// tool_call_update), as the client's fold does. A permission for a call
// never announced titles its card with what it has.
func TestRenderToolTitleIsTheCalls(t *testing.T) {
	trace := traceLines(
		prompt(1, "s", "go"),
		upd("s", `{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit","kind":"edit","status":"pending"}`),
		upd("s", `{"sessionUpdate":"tool_call_update","toolCallId":"e1","title":"Edit a.go"}`),
		permReq(7, "s", "e1", `"title":"Allow editing a.go?","status":"pending"`, fourOptions),
		permAnswer(7, `{"outcome":"selected","optionId":"a1"}`),
		permReq(8, "s", "x1", `"title":"Run make?"`, fourOptions),
		permAnswer(8, `{"outcome":"selected","optionId":"a1"}`),
		upd("s", `{"sessionUpdate":"tool_call_update","toolCallId":"x1","title":"make"}`),
		promptEnd(1),
	)
	p := look(t, trace)
	var cards, rows []string
	for _, it := range find(p, "tool") {
		cards = append(cards, it.Tool.ID+": "+it.Tool.Title)
	}
	for _, it := range find(p, "perm") {
		rows = append(rows, it.Perm.Tool+": "+it.Title)
	}
	if want := "[e1: Edit a.go x1: make]"; fmt.Sprint(cards) != want {
		t.Errorf("card titles %q, want %s", cards, want)
	}
	if want := "[e1: Allow editing a.go? x1: Run make?]"; fmt.Sprint(rows) != want {
		t.Errorf("permission rows %q, want %s", rows, want)
	}
}

// TestRenderContentHistory: content a tool_call_update replaces stays on
// the card as history, so the diff of a rejected edit is still there
// after the agent's refusal; the same content sent again (by the
// permission request), empty content and null add none; null leaves the
// content as it is.
func TestRenderContentHistory(t *testing.T) {
	diff := `{"type":"diff","path":"/w/f.txt","oldText":"one\n","newText":"two\n"}`
	trace := traceLines(
		prompt(1, "s", "edit"),
		upd("s", `{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit f.txt","kind":"edit","status":"pending","content":[]}`),
		upd("s", `{"sessionUpdate":"tool_call_update","toolCallId":"e1","content":[`+diff+`]}`),
		permReq(7, "s", "e1", `"content":[`+diff+`]`, fourOptions),
		permAnswer(7, `{"outcome":"selected","optionId":"r1"}`),
		upd("s", `{"sessionUpdate":"tool_call_update","toolCallId":"e1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"refused"}}]}`),
		upd("s", `{"sessionUpdate":"tool_call_update","toolCallId":"e1","content":null}`),
		promptEnd(1),
	)
	p := look(t, trace)
	tc := find(p, "tool")[0].Tool
	if len(tc.Content) != 1 || tc.Content[0].Text != "refused" {
		t.Errorf("content now %+v, want the refusal", tc.Content)
	}
	if len(tc.Was) != 1 || tc.WasN != 0 || len(tc.Was[0].Content) != 1 || !strings.Contains(strings.Join(tc.Was[0].Content[0].Diff, "\n"), "+two") {
		t.Fatalf("history %+v (%d not kept), want the diff once", tc.Was, tc.WasN)
	}
	if tc.Was[0].T == nil || *tc.Was[0].T != 6 {
		t.Errorf("the diff was replaced at %v, want 6 (the failed update's time)", tc.Was[0].T)
	}
}

// TestRenderContentHistoryBound: a card keeps the last maxContentHist
// contents replaced and counts the older ones.
func TestRenderContentHistoryBound(t *testing.T) {
	frames := []string{prompt(1, "s", "go"), upd("s", `{"sessionUpdate":"tool_call","toolCallId":"c","title":"Run","status":"in_progress"}`)}
	const n = 20
	for i := 0; i <= n; i++ {
		frames = append(frames, upd("s", fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"text","text":"out %d"}}]}`, i)))
	}
	p := look(t, traceLines(append(frames, promptEnd(1))...))
	tc := find(p, "tool")[0].Tool
	var was []string
	for _, v := range tc.Was {
		was = append(was, v.Content[0].Text)
	}
	if len(tc.Was) != maxContentHist || tc.WasN != n-maxContentHist || was[0] != fmt.Sprintf("out %d", n-maxContentHist) || was[len(was)-1] != fmt.Sprintf("out %d", n-1) || tc.Content[0].Text != fmt.Sprintf("out %d", n) {
		t.Errorf("history %q, %d older not kept, now %+v; want out %d…%d, %d, out %d", was, tc.WasN, tc.Content, n-maxContentHist, n-1, n-maxContentHist, n)
	}
}

// TestRenderPermissionTones: every option is toned by its kind (allow_*
// positive, reject_* negative, another kind neither), and so is the
// answer, on the permission row and on its tool card; a request the
// client cancelled is negative, one the agent withdrew neither.
func TestRenderPermissionTones(t *testing.T) {
	opts := strings.TrimSuffix(fourOptions, "]") + `,{"optionId":"o1","name":"Later","kind":"ask_later"}]`
	frames := []string{prompt(1, "s", "go")}
	answers := map[string]string{
		"a1": "allow", "a2": "allow", "r1": "reject", "r2": "reject", "o1": "",
	}
	id := 10
	for _, opt := range []string{"a1", "a2", "r1", "r2", "o1"} {
		tc := "tc-" + opt
		frames = append(frames, upd("s", `{"sessionUpdate":"tool_call","toolCallId":"`+tc+`","title":"T","status":"pending"}`),
			permReq(id, "s", tc, "", opts), permAnswer(id, `{"outcome":"selected","optionId":"`+opt+`"}`))
		id++
	}
	frames = append(frames, permReq(20, "s", "tc-cancel", "", opts), permAnswer(20, `{"outcome":"cancelled"}`),
		permReq(21, "s", "tc-withdrawn", "", opts), `{"dir":"<","msg":{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":21}}}`,
		promptEnd(1))
	answers["cancel"], answers["withdrawn"] = "reject", ""
	p := look(t, traceLines(frames...))
	cards := map[string]*tool{}
	for _, it := range find(p, "tool") {
		cards[it.Tool.ID] = it.Tool
	}
	perms := find(p, "perm")
	if len(perms) != 7 {
		t.Fatalf("%d permission rows, want 7", len(perms))
	}
	for _, it := range perms {
		pm := it.Perm
		key := strings.TrimPrefix(pm.Tool, "tc-")
		if want := answers[key]; pm.Tone != want {
			t.Errorf("%s (answer %s %s): tone %q, want %q", pm.Tool, pm.Answer, pm.Option, pm.Tone, want)
		}
		if pm.Answer != "withdrawn" && cards[pm.Tool].PermTone != pm.Tone {
			t.Errorf("%s: card's tone %q, the row's %q", pm.Tool, cards[pm.Tool].PermTone, pm.Tone)
		}
		var tones []string
		for _, o := range pm.Options {
			tones = append(tones, o.Kind+"="+o.Tone)
		}
		if want := "[allow_once=allow allow_always=allow reject_once=reject reject_always=reject ask_later=]"; fmt.Sprint(tones) != want {
			t.Errorf("%s: option tones %q, want %s", pm.Tool, tones, want)
		}
	}
}
