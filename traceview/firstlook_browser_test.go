package traceview

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// firstLookTrace runs three turns of an acptest agent against the client
// and returns the agent's transcript: a read allowed once; an edit asked
// as "Allow editing f.txt?", rejected, after which the agent replaces the
// call's diff with its refusal; two edits, one allowed always and one
// rejected always. Every request offers the four option kinds.
func firstLookTrace(t *testing.T) []byte {
	t.Helper()
	four := []schema.PermissionOption{
		{OptionID: "allow", Name: "Allow", Kind: schema.PermissionAllowOnce},
		{OptionID: "always", Name: "Always allow", Kind: schema.PermissionAllowAlways},
		{OptionID: "reject", Name: "Reject", Kind: schema.PermissionRejectOnce},
		{OptionID: "never", Name: "Always reject", Kind: schema.PermissionRejectAlways},
	}
	old := "one\n"
	ask := func(tu *acptest.Turn, id, question string) (schema.PermissionOutcome, error) {
		return tu.AskPermission(acptest.ToolCallSpec{ID: id, Title: question}, four...)
	}
	edit := func(tu *acptest.Turn, id, file, question string) error {
		tu.ToolCall(acptest.ToolCallSpec{ID: id, Title: "Edit " + file, Kind: schema.ToolKindEdit, Status: schema.ToolCallStatusPending,
			Content: []any{acptest.Diff("/w/"+file, &old, "two\n")}})
		out, err := ask(tu, id, question)
		if err != nil {
			return err
		}
		if out.OptionID == "reject" || out.OptionID == "never" {
			tu.UpdateToolCall(acptest.ToolCallSpec{ID: id, Status: schema.ToolCallStatusFailed,
				Content: []any{acptest.ToolContent(acptest.Text("The user refused the edit."))}})
			return nil
		}
		tu.UpdateToolCall(acptest.ToolCallSpec{ID: id, Status: schema.ToolCallStatusCompleted})
		return nil
	}
	// The client answers the requests in turn: allow once, reject once,
	// allow always, reject always.
	var mu sync.Mutex
	answers := []schema.PermissionOptionKind{schema.PermissionAllowOnce, schema.PermissionRejectOnce, schema.PermissionAllowAlways, schema.PermissionRejectAlways}
	c, a := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(tu *acptest.Turn) (schema.StopReason, error) {
			switch tu.PromptText() {
			case "read it":
				tu.ToolCall(acptest.ToolCallSpec{ID: "r1", Title: "Read f.txt", Kind: schema.ToolKindRead, Status: schema.ToolCallStatusPending})
				if _, err := ask(tu, "r1", "Allow reading f.txt?"); err != nil {
					return "", err
				}
				tu.UpdateToolCall(acptest.ToolCallSpec{ID: "r1", Status: schema.ToolCallStatusCompleted,
					Content: []any{acptest.ToolContent(acptest.Text("one"))}})
				tu.Say("f.txt says one.")
			case "edit it":
				if err := edit(tu, "e1", "f.txt", "Allow editing f.txt?"); err != nil {
					return "", err
				}
				tu.Say("I did not edit f.txt.")
			default:
				for _, f := range []string{"g.txt", "h.txt"} {
					if err := edit(tu, "e-"+f, f, "Allow editing "+f+"?"); err != nil {
						return "", err
					}
				}
				tu.Say("g.txt edited, h.txt not.")
			}
			return schema.StopReasonEndTurn, nil
		},
	}, &acp.ClientOptions{Permission: func(_ context.Context, r *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		mu.Lock()
		defer mu.Unlock()
		o := r.Option(answers[0])
		answers = answers[1:]
		return acp.SelectedOutcome(o.OptionID), nil
	}})
	ctx := context.Background()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"read it", "edit it", "edit both"} {
		turn, err := s.Prompt(ctx, schema.Text(p))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	var rec bytes.Buffer
	if err := a.WriteTranscript(&rec); err != nil {
		t.Fatal(err)
	}
	return rec.Bytes()
}

// TestBrowserFirstLook loads the page of firstLookTrace in Chromium, as a
// newcomer opens it: only the last turn is open; the rejected edit's card
// is titled as the tool call ("Edit f.txt"), the question is its
// permission row's, and the card shows the diff above the refusal that
// replaced it; each chip is coloured by what it allowed: green for the
// allow kinds, red for the reject kinds, chosen or not. Screenshots of
// the page at load and of the rejected edit go to the artifacts.
func TestBrowserFirstLook(t *testing.T) {
	c := chrome(t)
	trace := firstLookTrace(t)
	p := look(t, trace)
	if p.Stats.Turns != 3 {
		t.Fatalf("%d turns, want 3", p.Stats.Turns)
	}
	tb := c.open(t, writePageFile(t, t.TempDir(), "firstlook", trace, Options{Title: "three turns"}), 1100, 1400)
	var atLoad struct {
		Open  []string
		Items int
	}
	tb.eval(`(() => ({
		Open: [...document.querySelectorAll('section.turn.open')].map(s => s.getAttribute('data-turn')),
		Items: document.querySelectorAll('section.turn.open > .body .item').length,
	}))()`, &atLoad)
	if fmt.Sprint(atLoad.Open) != "[3]" || atLoad.Items == 0 {
		t.Errorf("at load: open turns %q with %d items; want only turn 3, rendered", atLoad.Open, atLoad.Items)
	}
	writeArtifact(t, "firstlook-load.png", tb.screenshot())

	var edit struct {
		Card, Row, Now string
		Was, Add       []string
		Order          []string
	}
	tb.eval(`(() => {
		const s = document.querySelector('section.turn[data-turn="2"]');
		s.querySelector(':scope > button.head').click();
		s.scrollIntoView();
		const card = [...s.querySelectorAll('.tool-card')].find(c => c.querySelector('.diff'));
		const q = (e, sel) => [...e.querySelectorAll(sel)].map(e => e.textContent);
		return {
			Card: card.querySelector('.tool-title').textContent,
			Row: s.querySelector('.k-perm .title').textContent,
			Now: q(card, ':scope > pre.text').join('|'),
			Was: q(card, '.was > .hist'),
			Add: q(card, '.was .diff .l.add'),
			// what the card shows, top to bottom: the diff, then the refusal
			Order: [...card.querySelectorAll('.was .diff, :scope > pre.text')].map(e => e.className),
		};
	})()`, &edit)
	if edit.Card != "Edit f.txt" || edit.Row != "Allow editing f.txt?" {
		t.Errorf("rejected edit: card titled %q, permission row %q; want the call's title and the question", edit.Card, edit.Row)
	}
	if len(edit.Was) != 1 || !strings.HasPrefix(edit.Was[0], "earlier content, replaced at +") || !contains(edit.Add, "+two") || edit.Now != "The user refused the edit." ||
		fmt.Sprint(edit.Order) != "[diff text]" {
		t.Errorf("rejected edit's card: history %q, added lines %q, now %q, order %q; want the diff, then the refusal", edit.Was, edit.Add, edit.Now, edit.Order)
	}
	writeArtifact(t, "firstlook-rejected-edit.png", tb.screenshot())

	// Every chip of every permission row, and every answer, by kind.
	tb.eval(`document.querySelectorAll('section.turn:not(.open) > button.head').forEach(h => h.click())`, nil)
	var chips []struct {
		Kind, Chosen, Color, Background string
	}
	tb.eval(`(() => {
		const out = [];
		const cs = e => getComputedStyle(e);
		document.querySelectorAll('.k-perm').forEach(row => {
			const chosen = row.querySelector('.opts li.chosen');
			row.querySelectorAll('.opts li').forEach(li => out.push({
				Kind: li.textContent.match(/, ([a-z_]+)\)/)[1], Chosen: li === chosen ? 'chosen' : '',
				Color: cs(li).color, Background: cs(li).backgroundColor}));
			const a = row.querySelector('.answer .badge');
			out.push({Kind: chosen.textContent.match(/, ([a-z_]+)\)/)[1], Chosen: 'answer', Color: cs(a).color, Background: cs(a).backgroundColor});
		});
		document.querySelectorAll('.tool-card .answer-chip').forEach(b => out.push({Kind: b.textContent, Chosen: 'card', Color: cs(b).color, Background: cs(b).backgroundColor}));
		return out;
	})()`, &chips)
	seen := map[string]int{}
	for _, ch := range chips {
		kind := ch.Kind
		if ch.Chosen == "card" { // the card's chip says the option's name: "Always allow after 2 ms"
			kind = map[string]string{"Allow": "allow_once", "Always allow": "allow_always", "Reject": "reject_once", "Always reject": "reject_always"}[strings.Split(ch.Kind, " after ")[0]]
		}
		want := "green"
		if strings.HasPrefix(kind, "reject") {
			want = "red"
		}
		got := hue(ch.Color)
		if ch.Chosen != "" && hue(ch.Background) != want {
			got = "background " + hue(ch.Background)
		}
		if got != want {
			t.Errorf("%s chip of kind %s: color %s, background %s; want %s", firstNonEmpty(ch.Chosen, "option"), kind, ch.Color, ch.Background, want)
		}
		seen[ch.Chosen+" "+kind]++
	}
	for _, k := range []string{"allow_once", "allow_always", "reject_once", "reject_always"} {
		if seen[" "+k] == 0 || seen["chosen "+k] != 1 || seen["answer "+k] != 1 || seen["card "+k] != 1 {
			t.Errorf("chips of kind %s checked: %d options, %d chosen, %d answers, %d on cards; want some, 1, 1, 1", k, seen[" "+k], seen["chosen "+k], seen["answer "+k], seen["card "+k])
		}
	}
}

// hue says whether a CSS rgb() colour is "green" or "red" (the channel
// that dominates), else "neutral".
func hue(css string) string {
	var r, g, b int
	if _, err := fmt.Sscanf(css, "rgb(%d, %d, %d)", &r, &g, &b); err != nil {
		return "unreadable " + css
	}
	switch {
	case g > r+8 && g > b:
		return "green"
	case r > g+8 && r > b:
		return "red"
	}
	return "neutral"
}
