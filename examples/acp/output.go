// output.go holds output, the command's one writer of stdout and stderr:
// notes, errors, the session line, history, turn ends, the spinner.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// output renders events as text for people or as NDJSON for scripts. Its
// methods are called from the turn's renderer goroutine and from permission
// handlers at once, so every write takes mu.
type output struct {
	json bool
	tty  bool // stdout is a terminal: spinner, colours of nothing fancy
	// stdout is live, stderr a beforeWriter on live: the renderer's output
	// is deferred a little, everything else is written at once, and the
	// two streams keep their order (outbuf.go).
	stdout io.Writer
	stderr io.Writer
	live   *liveWriter
	client *acp.Client
	// agentCmd is the agent's command (nil for --url), for its pid.
	agentCmd *exec.Cmd

	mu   sync.Mutex
	last string // kind of the last thing printed, for line breaks
	// rendering: the turn's renderer is in event, so textf defers what it
	// writes (liveWriter).
	rendering bool
	line      jsonLine // --json update events that are not plain text chunks
	lastDraw  time.Time
	drew      bool // textRun drew since the spinner's last tick: lastDraw is stale
	spinning  bool
	reading   int        // prompts waiting for input: the spinner must not draw over them
	lines     lineReader // stdin, shared by the prompt loop and permission dialogs

	// Where the renderers are in the turns' events (the prompted turn's
	// and its children's): a permission dialog waits until its tool
	// call's card is out (the request says which event that is). progress
	// is closed whenever shown moves, and made again only by a dialog that
	// waits: nil while none does, so a turn of 100 000 chunks does not make
	// and close a channel per chunk (a tenth of its garbage).
	shown    map[*acp.Turn]uint64
	progress chan struct{}
	// decisions carries a --json permission's outcome from its handler to
	// the renderer, which prints it at the request's place in the stream.
	decisions map[placement]chan decision

	// What the renderer printed of the commands the agent runs in
	// terminals of its own (acp.ToolCallTerminal), by tool call id, for the
	// turn termTurn: one entry per tool call of the current turn.
	termTurn  *acp.Turn
	termShown map[string]termShown
	// The tool calls of turn cancelTurn shown cancelled (cancelline.go).
	cancelTurn  *acp.Turn
	cancelShown map[string]bool
}

// termShown is how much of a command's output is out, and whether its exit.
type termShown struct {
	out     int
	exited  bool
	midLine bool // the output printed ends inside a line
}

// placement is where a permission request stands: its turn's event that
// applied its toolCall.
type placement struct {
	turn *acp.Turn
	seq  uint64
}

type decision struct {
	req       *acp.PermissionRequest
	out       schema.PermissionOutcome
	err       error
	cancelled bool
}

func newOutput(cfg *config, stdout, stderr io.Writer) *output {
	live := newLiveWriter(stdout)
	return &output{json: cfg.json, tty: isTerminal(stdout), stdout: live, stderr: beforeWriter{stderr, live}, live: live,
		decisions: map[placement]chan decision{}, shown: map[*acp.Turn]uint64{}}
}

// flush writes the renderer's deferred output, and stop does too and
// stops its timer (the session is over).
func (o *output) flush() { o.live.Flush() }
func (o *output) stop()  { o.live.Stop() }

// advanceLocked records that the renderer has shown turn's events up to
// seq. o.mu is held.
func (o *output) advanceLocked(turn *acp.Turn, seq uint64) {
	o.shown[turn] = seq
	if o.progress != nil {
		close(o.progress)
		o.progress = nil
	}
}

// progressLocked returns the channel closed when shown next moves. o.mu is
// held.
func (o *output) progressLocked() chan struct{} {
	if o.progress == nil {
		o.progress = make(chan struct{})
	}
	return o.progress
}

// lockAfterShown takes o.mu once the renderer has shown the events of
// req's turn up to the request's own (its tool call's card), or once that
// cannot happen any more (the turn is over, ctx ended).
func (o *output) lockAfterShown(ctx context.Context, req *acp.PermissionRequest) {
	target := req.Seq
	if o.json {
		// The renderer stops at the request's own event until it is
		// decided (see event): what precedes it is what must be out.
		target--
	}
	for {
		o.mu.Lock()
		if req.Turn == nil || o.shown[req.Turn] >= target {
			return
		}
		progress := o.progressLocked()
		o.mu.Unlock()
		select {
		case <-progress:
		case <-req.Turn.Done():
			o.mu.Lock()
			return
		case <-ctx.Done():
			o.mu.Lock()
			return
		}
	}
}

// decisionChan returns the channel that carries the decision on the
// request placed at p, made by whichever side gets there first.
func (o *output) decisionChan(p placement) chan decision {
	o.mu.Lock()
	defer o.mu.Unlock()
	ch, ok := o.decisions[p]
	if !ok {
		ch = make(chan decision, 1)
		o.decisions[p] = ch
	}
	return ch
}

func isTerminal(w any) bool {
	switch lw := w.(type) {
	case *liveWriter:
		w = lw.w
	case beforeWriter:
		w = lw.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// updateEvent is the update event, the bulk of the output: a struct, not
// a map, so a long turn does not allocate a map per update. Its fields are
// in the order json.Marshal writes a map's keys (sorted), which the other
// events use: the bytes are the same.
type updateEvent struct {
	Event  string          `json:"event"`
	Origin acp.EventOrigin `json:"origin,omitempty"`
	// ParentSessionID is set on a child session's events.
	ParentSessionID string        `json:"parentSessionId,omitempty"`
	Seq             uint64        `json:"seq"`
	SessionID       string        `json:"sessionId"`
	Update          schema.Update `json:"update"`
}

// emit writes one NDJSON event. An Encoder writes the line from its own
// pooled buffer, newline included, in one Write, and nothing when the
// encoding fails: a turn_end holding a long message is not copied twice
// more (out of json.Marshal, then to append the newline).
func (o *output) emit(v any) {
	if err := json.NewEncoder(o.stdout).Encode(v); err != nil {
		json.NewEncoder(o.stdout).Encode(map[string]any{"event": "error", "message": "encoding an event: " + err.Error()})
	}
}

// textf writes human output of a given kind, starting a new line when the
// kind changes.
func (o *output) textf(kind, format string, args ...any) {
	if o.spinning {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.spinning = false
	}
	var w io.Writer = o.stdout
	if o.rendering {
		w = o.live.later
	}
	if o.last != "" && o.last != kind {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, format, args...)
	o.last = kind
	if o.tty {
		o.lastDraw = time.Now() // only the spinner reads it, only on a terminal
	}
}

// textRun is textf(kind, "%s", prefixFirst(prefix, s, o.last == kind))
// for the renderer's text chunks, without fmt: the bytes are deferred
// (liveWriter), nothing is allocated.
func (o *output) textRun(kind, prefix, s string) {
	if o.spinning {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.spinning = false
	}
	b := o.live.begin()
	if o.last != kind {
		if o.last != "" {
			b = append(b, '\n')
		}
		b = append(b, prefix...)
	}
	o.live.end(append(b, s...))
	o.last = kind
	o.drew = true // the spinner's tick reads the clock, not every chunk
}

func (o *output) note(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if o.json {
		o.emit(map[string]any{"event": "note", "message": msg})
		return
	}
	if o.last != "" {
		fmt.Fprintln(o.stdout)
		o.last = ""
	}
	fmt.Fprintln(o.stderr, "acp: "+cleanText(strings.TrimPrefix(msg, "acp: ")))
}

// diagnostic prints one of the client's diagnostics (--diagnostics). It
// runs on the client's callback goroutine.
func (o *output) diagnostic(d acp.Diagnostic) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		o.emit(map[string]any{"event": "diagnostic", "kind": d.Kind, "message": d.Message})
		return
	}
	if o.spinning {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.spinning = false
	}
	fmt.Fprintf(o.stderr, "acp: %s: %s\n", cleanLine(string(d.Kind)), cleanText(d.Message))
}

func (o *output) fail(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msg := err.Error()
	var ee *acp.ExitError
	if !errors.As(err, &ee) && o.client != nil {
		if tail := lastLines(o.client.StderrTail(), 10); tail != "" {
			msg += "\nagent stderr (last lines):\n" + tail
		}
	}
	if o.json {
		o.emit(map[string]any{"event": "error", "message": msg})
		return
	}
	if o.last != "" {
		fmt.Fprintln(o.stdout)
	}
	// The SDK's errors start with "acp: " already.
	fmt.Fprintln(o.stderr, "acp: "+cleanText(strings.TrimPrefix(msg, "acp: ")))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func (o *output) sessionStarted(s *acp.Session) {
	o.mu.Lock()
	defer o.mu.Unlock()
	info := o.client.InitializeResponse().AgentInfo
	if o.json {
		// protocolVersion is the ACP version negotiated (added with v2;
		// the event's other fields are unchanged).
		ev := map[string]any{"event": "session", "sessionId": s.ID(), "protocolVersion": o.client.InitializeResponse().ProtocolVersion}
		if info != nil {
			ev["agent"] = info
		}
		if pid := agentPID(o.client, o.agentCmd); pid > 0 {
			ev["pid"] = pid // the agent's process, when it is local (added with the demo's /kill)
		}
		o.emit(ev)
		return
	}
	name := "agent"
	if info != nil {
		name = info.Name
		if info.Title != "" {
			name = info.Title
		}
	}
	fmt.Fprintf(o.stderr, "acp: %s\n", o.agentLine(name, s)) // agentline.go
}

// history prints what a session/load replayed.
func (o *output) history(s *acp.Session) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := s.State()
	// A long history is written as a turn's stream is (liveWriter): a
	// few writes, not one per update.
	o.rendering = true
	defer func() { o.rendering = false; o.flush() }()
	if o.json {
		for _, u := range st.Outside {
			b := o.live.begin()
			b, ok := appendReplayEvent(b, s.ID(), u.Update)
			var err error
			if !ok {
				b, err = o.line.appendTo(b, map[string]any{"event": "update", "sessionId": s.ID(), "replay": true, "update": u.Update})
			}
			o.live.end(b)
			if err != nil {
				o.emit(map[string]any{"event": "error", "message": "encoding an event: " + err.Error()})
			}
		}
		return
	}
	for _, u := range st.Outside {
		switch u := u.Update.(type) {
		case *schema.UserMessageChunk:
			if t, ok := u.Content.(*schema.TextContent); ok {
				o.textf("user", "%s", prefixFirst("> ", cleanText(t.Text), o.last == "user"))
			}
		case *schema.AgentMessageChunk:
			if t, ok := u.Content.(*schema.TextContent); ok {
				o.textf("agent", "%s", cleanText(t.Text))
			}
		}
	}
	if o.last != "" {
		fmt.Fprintln(o.stdout)
		o.last = ""
	}
	fmt.Fprintln(o.stderr, "acp: (history above)")
}

func prefixFirst(prefix, s string, continuing bool) string {
	if continuing {
		return s
	}
	return prefix + s
}

func (o *output) sessionInfo(info schema.SessionInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		o.emit(map[string]any{"event": "session_info", "session": info})
		return
	}
	title, updated := "", ""
	if info.Title != nil {
		title = *info.Title
	}
	if info.UpdatedAt != nil {
		updated = *info.UpdatedAt
	}
	fmt.Fprintf(o.stdout, "%s\t%s\t%s\t%s\n", cleanLine(info.SessionID), cleanLine(updated), cleanLine(info.Cwd), cleanLine(title))
}

// event renders one event of a turn as it is applied. It is called from
// the turn's renderer goroutine, in order.
func (o *output) event(s *acp.Session, turn *acp.Turn, ev acp.Event) {
	if ev.Kind != acp.EventUpdate {
		o.mu.Lock()
		o.advanceLocked(turn, ev.Seq)
		o.mu.Unlock()
		return
	}
	if ev.Origin == acp.OriginPermission && o.json {
		// The permission event goes here, in order, once decided: folding
		// the events then gives what State gives.
		p := placement{turn, ev.Seq}
		ch := o.decisionChan(p)
		o.flush() // what precedes the request is out while it is decided
		var d decision
		select {
		case d = <-ch:
		case <-o.client.Done():
			d.err = o.client.Err()
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.decisions, p)
		o.emitPermission(d, ev.Update, ev.Seq)
		o.advanceLocked(turn, ev.Seq)
		return
	}
	o.mu.Lock()
	o.rendering = true
	o.render(s, turn, ev)
	o.rendering = false
	o.advanceLocked(turn, ev.Seq)
	o.mu.Unlock()
}

// authStatus shows an auth status the agent notified. It runs on the
// client's callback goroutine.
func (o *output) authStatus(st schema.AuthStatus) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		ev := map[string]any{"event": "auth_status", "state": st.State}
		if len(st.Accounts) > 0 {
			ev["accounts"] = st.Accounts
		}
		o.emit(ev)
		return
	}
	if o.spinning {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.spinning = false
	}
	msg := "acp: auth: " + cleanLine(string(st.State))
	var active []string
	for _, a := range st.Accounts {
		if a.Active != nil && *a.Active {
			active = append(active, cleanLine(a.Label))
		}
	}
	if len(active) > 0 {
		msg += " (" + strings.Join(active, ", ") + ")"
	}
	fmt.Fprintln(o.stderr, msg)
}

// failure is why a failed tool call failed, as ": reason" on its status
// line: the first line of its last text content (where agents say why:
// "Rejected by the user.", "the client does not offer fs/write_text_file"),
// at most maxReason runes. Otherwise "", and for any other status.
func failure(status schema.ToolCallStatus, content []schema.ToolCallContent) string {
	if status != schema.ToolCallStatusFailed {
		return ""
	}
	for i := len(content) - 1; i >= 0; i-- {
		tc, ok := content[i].(*schema.ToolContent)
		if !ok {
			continue
		}
		why := strings.TrimSpace(schema.TextOf(tc.Content))
		if why == "" {
			continue
		}
		first, _, more := strings.Cut(why, "\n")
		first = strings.TrimSpace(first)
		if r := []rune(first); len(r) > maxReason {
			first, more = string(r[:maxReason]), true
		}
		if more {
			first += " …"
		}
		return ": " + cleanLine(first)
	}
	return ""
}

// maxReason bounds the reason shown for a failed tool call: one line.
const maxReason = 120

// agentTerminal prints, indented and sanitized, the output a tool call
// event added to a command the agent runs in a terminal of its own
// (codex-acp reports it only in _meta; the library folds it into
// acp.ToolCallState.AgentTerminal), and returns its exit status for the
// status line (" (exit 0)"), once. The output printed is what the library
// kept, so Limits.MaxTurnBytes bounds it as it bounds the agent's text;
// what this keeps is one entry per tool call of the turn. o.mu is held.
func (o *output) agentTerminal(turn *acp.Turn, tc *acp.ToolCallState) (exit string) {
	if tc == nil || tc.AgentTerminal == nil {
		return ""
	}
	if o.termTurn != turn {
		o.termTurn, o.termShown = turn, nil
	}
	if o.termShown == nil {
		o.termShown = map[string]termShown{}
	}
	at, sh := tc.AgentTerminal, o.termShown[tc.ToolCallID]
	if len(at.Output) < sh.out {
		sh = termShown{} // a new tool_call for the id started afresh
	}
	if more := at.Output[sh.out:]; more != "" {
		var b strings.Builder
		for i, l := range strings.SplitAfter(cleanText(more), "\n") {
			if l != "" && (i > 0 || !sh.midLine) {
				b.WriteString("  ")
			}
			b.WriteString(l)
		}
		o.textf("tool-output", "%s", b.String())
		sh.out, sh.midLine = len(at.Output), !strings.HasSuffix(more, "\n")
		if !sh.midLine {
			o.last = ""
		}
	}
	if at.Exited && !sh.exited {
		sh.exited = true
		switch {
		case at.ExitCode != nil:
			exit = fmt.Sprintf(" (exit %d)", *at.ExitCode)
		case at.Signal != nil:
			exit = " (signal " + cleanLine(*at.Signal) + ")"
		default:
			exit = " (exited)"
		}
	}
	o.termShown[tc.ToolCallID] = sh
	return exit
}

func blockText(b schema.ContentBlock) string {
	if img, ok := b.(*schema.ImageContent); ok {
		return "[image " + img.MimeType + "]"
	}
	return schema.TextOf(b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// turnEnd prints the turn's end: the stop reason (and for --json the
// folded state).
func (o *output) turnEnd(turn *acp.Turn, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		// turn_end is the largest thing the command writes: State joins
		// the turn's text (writeTurnEnd then writes it out in pieces).
		// Collecting the garbage of the streamed events first keeps the
		// joined copy from raising the heap's goal (and the peak RSS of a
		// long turn) by its size; one collection per turn costs nothing a
		// user would notice.
		runtime.GC()
	}
	stop, _ := turn.Wait()
	if o.json {
		// Only --json needs the folded state: State joins the turn's text,
		// a copy as large as the turn's messages, which text mode (which
		// has printed them as they came) would allocate for nothing.
		st := turn.State()
		ev := map[string]any{"event": "turn_end", "stopReason": stop, "state": st}
		if err != nil {
			ev["error"] = err.Error()
		}
		// The session's plans (plan operations keep several by id): the
		// turn's state shows only the one it updated last.
		if plans := turn.Session().State().Plans; len(plans) > 0 {
			ev["plans"] = plans
		}
		if err := writeTurnEnd(o.stdout, ev, st); err != nil {
			o.emit(map[string]any{"event": "error", "message": "encoding an event: " + err.Error()})
		}
		return
	}
	if o.last != "" {
		fmt.Fprintln(o.stdout)
		o.last = ""
	}
	msg := "[" + cleanLine(string(stop)) + "]"
	if stop == schema.StopReasonError && err == nil {
		msg += " the agent reported a failure"
	}
	if err != nil {
		msg += " " + cleanText(err.Error())
	}
	fmt.Fprintln(o.stderr, msg)
}

// spin shows a working indicator on a terminal while the agent is silent.
func (o *output) spin(turn *acp.Turn) (stop func()) {
	if o.json || !o.tty {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		frames := `|/-\`
		tick := time.NewTicker(120 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-turn.Done():
				return
			case <-tick.C:
			}
			o.mu.Lock()
			if o.drew {
				o.lastDraw, o.drew = time.Now(), false
			}
			if time.Since(o.lastDraw) > 300*time.Millisecond && o.last == "" && o.reading == 0 {
				fmt.Fprintf(o.stderr, "\r%c working", frames[i%len(frames)])
				o.spinning = true
			}
			o.mu.Unlock()
		}
	})
	return func() {
		close(done)
		wg.Wait()
		o.mu.Lock()
		if o.spinning {
			fmt.Fprint(o.stderr, "\r\033[K")
			o.spinning = false
		}
		o.mu.Unlock()
	}
}

func (o *output) help(s *acp.Session) {
	o.note("commands: /mode [ID], /config [ID=VALUE], /help, /quit; Ctrl-C cancels a turn")
	o.agentHelp(s) // agentline.go
}

func (o *output) modes(s *acp.Session) {
	m := s.State().Modes
	if m == nil {
		o.note("the agent offers no modes")
		return
	}
	var ids []string
	for _, md := range m.AvailableModes {
		ids = append(ids, cleanLine(md.ID))
	}
	o.note("mode %s (available: %s)", cleanLine(m.CurrentModeID), strings.Join(ids, ", "))
}

func (o *output) configs(s *acp.Session) {
	opts := s.State().ConfigOptions
	if len(opts) == 0 {
		o.note("the agent offers no config options")
		return
	}
	for _, opt := range opts {
		switch opt := opt.(type) {
		case *schema.SelectConfigOption:
			var vals []string
			for _, v := range opt.Values() {
				vals = append(vals, cleanLine(v.Value))
			}
			o.note("%s = %s (values: %s)", cleanLine(opt.ID), cleanLine(opt.CurrentValue), strings.Join(vals, ", "))
		case *schema.BooleanConfigOption:
			o.note("%s = %v", cleanLine(opt.ID), opt.CurrentValue)
		default:
			o.note("%s (unsupported kind)", cleanLine(opt.OptionID()))
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "the request was not decided"
	}
	return err.Error()
}
