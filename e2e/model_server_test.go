package e2e

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends body to the model and returns the status and the SSE data
// lines (or the whole body when it is not a stream).
func post(t *testing.T, m *Model, path, body string) (int, []string) {
	t.Helper()
	resp, err := http.Post(m.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, []string{string(b)}
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return resp.StatusCode, data
}

// TestModelRouting: Claude Code's side requests (another model, no tools,
// token counting) and codex's (another model) are answered without
// consuming the script; conversation
// requests take the scripted replies in order.
func TestModelRouting(t *testing.T) {
	m := newModel(t)
	m.Script(Reply{Text: []string{"scripted"}}, Reply{Status: 429, Error: "slow down"})

	_, side := post(t, m, "/v1/messages", `{"model":"`+SmallModel+`","messages":[{"role":"user","content":"title?"}],"stream":true}`)
	if got := strings.Join(side, "\n"); !strings.Contains(got, "Side answer") || !strings.Contains(got, `"message_stop"`) {
		t.Errorf("side request answered:\n%s", got)
	}
	if code, body := post(t, m, "/v1/messages/count_tokens", `{"model":"`+MainModel+`"}`); code != 200 || !strings.Contains(body[0], "input_tokens") {
		t.Errorf("count_tokens: %d %q", code, body)
	}
	_, main := post(t, m, "/v1/messages", `{"model":"`+MainModel+`","tools":[],"messages":[],"stream":true}`)
	if got := strings.Join(main, "\n"); !strings.Contains(got, `"text":"scripted"`) || !strings.Contains(got, `"stop_reason":"end_turn"`) {
		t.Errorf("scripted reply:\n%s", got)
	}
	if _, side := post(t, m, "/v1/responses", `{"model":"gpt-5.6-luna","input":[]}`); !strings.Contains(strings.Join(side, "\n"), "Side answer") {
		t.Errorf("codex side request answered:\n%s", side)
	}
	if code, body := post(t, m, "/v1/responses", `{"model":"`+CodexModel+`","input":[]}`); code != 429 || !strings.Contains(body[0], "slow down") {
		t.Errorf("scripted error: %d %q", code, body)
	}
	if n := len(m.Requests(true)); n != 2 {
		t.Errorf("%d scripted requests, want 2", n)
	}
	if n := len(m.Requests(false)); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
}
