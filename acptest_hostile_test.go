package acp_test

// The hostile-agent suite: an untrusted agent must not wedge, crash or
// exhaust the client. This file runs the attacks through acptest against a
// real *acp.Client with small limits, the way an editor author can run
// them against an integration; the *_hostile_test.go files of package acp
// run the same attacks and more with a raw line agent and look inside.
// Every figure is asserted loosely, as counts and bytes, never as time.
//
// Attack → tests → what bounds it:
//
//   - Over-cap line whose id cannot be echoed (01, -, 1., 1.2.3, 0000000, a
//     300-byte string) → TestHostileOversizedLinesDoNotWedge,
//     TestHostileOversizedPromptResponse,
//     TestOversizedLineWithUnreproducibleID, TestReaderBufferShrinksAfterHugeLine
//     → Limits.MaxLineBytes.
//   - Duplicate request id, then cancel → TestHostileDuplicateIDNoAllowAfterCancel,
//     TestDuplicateRequestIDNeverAllowsAfterCancel → one request per id
//     (duplicates refused at once).
//   - Flood of requests never cancelled → TestHostilePendingRequestFlood,
//     TestMaxPendingRequests → Limits.MaxPendingRequests.
//   - Flood of requests from an agent that reads nothing →
//     TestRefusalsWaitForAnAgentThatStopsReading → Limits.MaxQueuedWriteBytes.
//   - Batch lines → TestHostileBatchFlood, TestMaxBatchItems → Limits.MaxBatchItems.
//   - Agent stops reading while asking for large file reads →
//     TestHostileStopReadingWhileReadingFiles,
//     TestRepliesWaitForAnAgentThatStopsReading, TestWriteBudgetReleasedAfterReplies
//     → Limits.MaxQueuedWriteBytes.
//   - Callback-queue flood behind a blocked OnDiagnostic / ExtNotification →
//     TestHostileCallbackQueueFlood, TestCallbackQueueIsBounded →
//     Limits.MaxQueuedEvents.
//   - Close from inside OnDiagnostic / ExtNotification → TestHostileCloseFromCallback,
//     TestCloseFromCallback → (must return; no limit).
//   - A new messageId on every chunk → TestHostileDistinctMessageIDFlood,
//     TestFoldDistinctMessageIDsIsLinear → linear folding (no limit needed).
//   - Tool calls after a cancel → TestHostileToolCallsAfterCancel,
//     TestCancelledTurnMarksNewToolCallsInConstantWork → constant work per call.
//   - Updates for many unknown session ids → TestHostileOrphanUpdates,
//     TestOrphanUpdatesBounded → Limits.MaxOrphanSessions, Limits.MaxOrphanBytes.
//   - A long session of many updates → TestLongSessionRetainsAboutTheText,
//     TestReleasedTurnsRetainNothing, TestTurnLogsPolicy, TestReleaseHistory
//     → Limits.TurnLogs, Limits.SessionLog.
//   - Updates between turns without end → TestOutsideLogBounded →
//     Limits.OutsideLog (the feed still folds to State).
//   - One turn (or the updates between turns) streaming without end →
//     TestMaxTurnBytes, TestMaxTurnBytesOutsideTurns → Limits.MaxTurnBytes.
//   - Tiny updates that each create state (a new toolCallId or messageId,
//     plans of many entries), in a turn or between turns →
//     TestMaxTurnBytesCountsRetainedHeap,
//     TestMaxTurnBytesOutsideCountsRetainedHeap,
//     BenchmarkTurnRetainedDensest → Limits.MaxTurnBytes, which counts
//     what an update retains; Limits.SessionLog (bytes) for updates past
//     it that replace session state.
//   - Many such turns, none released → TestMaxEndedTurnBytes →
//     Limits.MaxEndedTurnBytes.
//   - Terminal output without end → TestTerminalOutputCeiling,
//     TestTerminalMaxOutputBytes → workspace.Terminals.MaxOutputBytes.
//   - Terminals without end → TestTerminalMaxTerminals,
//     TestTerminalMaxTerminalsConcurrent, TestTerminalWaitHoldsNoThread →
//     workspace.Terminals.MaxTerminals.
//   - Close from inside terminal OnOutput → TestTerminalCloseFromOnOutput.
//   - Reads of huge files, or far lines → TestReadTextFileScanLimit,
//     TestReadTextFileStopsOnCancel, TestReadTextFileErrors (fs_test.go) →
//     workspace.FS.MaxScanBytes, workspace.FS.MaxReadBytes.
//   - Paths escaping the root (symlink swapped mid-write, "..", extra
//     directories) → TestWriteTextFileParentSwappedMidWrite,
//     TestHandlersCleanRootsAlike, TestAdditionalDirectoriesCleaned → the
//     workspace root.
//   - An agent that hangs, ignores EOF and SIGTERM, or outlives its host →
//     TestConnectContextEndKillsHungAgent, TestHostKilledAgentGroupDies,
//     TestAgentSurvivesRetiredStarterThread → the process group.
//   - The reader stops for any reason → TestEngineStopEndsConnection.
//   - A request for a new session on the line right after the session/new
//     answer → TestHostileRequestRightAfterNewSession → the session is
//     registered by the reader, at the answer (no limit needed).
//   - A session/new or session/fork answer naming a session already open →
//     TestHostileDuplicateSessionID → ErrDuplicateSessionID (the open
//     session is left as it was).
//   - MCP-over-ACP to servers never declared, with a request id already
//     active, malformed, or without end → TestMCPMessageNeedsADeclaredServer,
//     TestMCPEverySessionRequestDeclares, TestMCPDuplicateActiveRequestRefused,
//     TestMCPMalformedMessageRefused, TestMCPMaxRequests,
//     TestMCPWithdrawnRequestKeepsItsSlot (mcp_hostile_test.go) → the
//     declared servers and Limits.MaxMCPRequests.
//   - Errors and diagnostics that name what the agent chose (20 000
//     models, 1 000 modes or config values, 1 MB ids and method names, a 1 MB
//     error message, 1 000 auth methods, a 1 MB number in a decoding error)
//     → TestHostileSetModelErrorBounded, TestHostileAgentTextInMessagesBounded
//     (text_hostile_test.go) → internal/agenttext: 8 items of 128 bytes,
//     512 bytes of text, escapes quoted.
//   - nes/suggest answered with a malformed suggestion among valid ones, or
//     with suggestions for other documents (~/.bashrc, the same file under
//     another spelling) → TestHostileMalformedSuggestionDropped,
//     TestHostileForeignSuggestionDropped (nes/hostile_test.go) → each
//     suggestion screened alone; only nes.SuggestRequest.URI, byte for
//     byte, unless nes.SuggestRequest.AllowURI allows another.
//   - Elicitation forms whose patterns cost the client's CPU (a 1 MiB
//     pattern, ".{0,1000}" repeated, many fields' patterns together) →
//     TestHostileElicitationPatternOverLimit,
//     TestHostileElicitationPatternCompiledOnce (elicitation_hostile_test.go)
//     → Limits.MaxElicitationPatternBytes (each pattern compiled once, each
//     answer checked once).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// hostileSafety bounds waits whose failure mode is a hang; no test waits on
// it when the code is right.
const hostileSafety = 10 * time.Second

func hostileWait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hostileSafety):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// hostileConnect connects copts's client to an acptest agent and opens a
// session, returning the client's and the agent's sides of it. The agent
// side's connection is the attacker's handle.
func hostileConnect(t *testing.T, opts *acptest.Options, copts *acp.ClientOptions) (*acp.Client, *acp.Session, *acptest.Session) {
	t.Helper()
	if opts == nil {
		opts = &acptest.Options{}
	}
	ss := make(chan *acptest.Session, 1)
	opts.OnNewSession = func(s *acptest.Session) { ss <- s }
	c, _ := acptest.Connect(t, opts, copts)
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, s, <-ss
}

// waitTurn waits for the turn to end, failing the test if it never does.
func waitTurn(t *testing.T, turn *acp.Turn) (schema.StopReason, error) {
	t.Helper()
	type result struct {
		reason schema.StopReason
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		r, err := turn.Wait()
		ch <- result{r, err}
	}()
	r := hostileWait(t, ch, "the turn to end")
	return r.reason, r.err
}

// probe makes a round trip from the agent: once it returns, the client's
// reader has taken in every line the agent wrote before it.
func probe(t *testing.T, a *acptest.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileSafety)
	defer cancel()
	if _, err := a.Call(ctx, "_acptest/probe", nil); err == nil || errors.Is(err, ctx.Err()) {
		t.Fatalf("probe: %v", err)
	}
}

func permissionParams(sessionID, toolCallID string) map[string]any {
	return map[string]any{
		"sessionId": sessionID,
		"toolCall":  map[string]any{"toolCallId": toolCallID, "title": "rm -rf"},
		"options":   acptest.DefaultPermissionOptions,
	}
}

func goroutines() int {
	runtime.GC()
	return runtime.NumGoroutine()
}

func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// Lines over MaxLineBytes, requests and responses, with ids the client
// cannot echo into a valid frame: each is reported and skipped, and the
// connection keeps serving.
func TestHostileOversizedLinesDoNotWedge(t *testing.T) {
	var d diags
	c, _, a := hostileConnect(t, nil, &acp.ClientOptions{OnDiagnostic: d.add, Limits: acp.Limits{MaxLineBytes: 1 << 10}})
	ids := []string{`01`, `-`, `1.`, `1.2.3`, `"` + strings.Repeat("i", 300) + `"`, `0000000`}
	for _, id := range ids {
		for _, method := range []string{"fs/read_text_file", ""} {
			if err := a.OversizedLine(json.RawMessage(id), method, 4<<10); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.NewSession(context.Background(), nil); err != nil {
		t.Fatalf("a call after the oversized lines: %v", err)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("the connection ended: %v", err)
	}
	probe(t, a)
	c.Close() // delivers the queued diagnostics
	n := 0
	for _, k := range d.kinds() {
		if k == string(acp.DiagLineTooLong) {
			n++
		}
	}
	if n != 2*len(ids) {
		t.Errorf("%d line_too_long diagnostics for %d oversized lines (all: %v)", n, 2*len(ids), d.kinds())
	}
}

// An over-cap answer to a prompt fails that turn with ErrLineTooLong, and
// only it: the connection keeps serving.
func TestHostileOversizedPromptResponse(t *testing.T) {
	c, s, _ := hostileConnect(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		t.OversizedLine(t.RequestID(), "", 4<<10)
		t.Hang() // the oversized line was the answer
		return "", nil
	}}, &acp.ClientOptions{Limits: acp.Limits{MaxLineBytes: 1 << 10}})
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitTurn(t, turn); !errors.Is(err, acp.ErrLineTooLong) {
		t.Errorf("turn ended with %v, want ErrLineTooLong", err)
	}
	if _, err := c.NewSession(context.Background(), nil); err != nil {
		t.Fatalf("a call after the oversized answer: %v", err)
	}
}

// Two permission requests with one id: the second is refused at once, and
// once the turn is cancelled the first is answered "cancelled" even though
// the user's handler said allow.
func TestHostileDuplicateIDNoAllowAfterCancel(t *testing.T) {
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	type answer struct {
		res json.RawMessage
		err error
	}
	answers := make(chan answer, 2)
	script := func(t *acptest.Turn) (schema.StopReason, error) {
		id := json.RawMessage(`"perm"`)
		first, err := t.StartWithID(id, "session/request_permission", permissionParams(t.SessionID(), "t1"))
		if err != nil {
			return "", err
		}
		select {
		case <-entered:
		case <-t.Context().Done():
			return "", nil
		}
		second, err := t.StartWithID(id, "session/request_permission", permissionParams(t.SessionID(), "t2"))
		if err != nil {
			return "", err
		}
		// Answers to a shared id resolve the requests in order: the first
		// answer (the refusal of the duplicate) resolves first.
		for _, r := range []*acptest.Request{first, second} {
			res, err := r.Wait(t.Context())
			answers <- answer{res, err}
		}
		return "", nil
	}
	_, s, _ := hostileConnect(t, &acptest.Options{OnPrompt: script}, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			entered <- struct{}{}
			<-release
			return acp.AllowAll(ctx, req)
		},
	})
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	refusal := hostileWait(t, answers, "the answer to the duplicate")
	var e *acptest.Error
	if !errors.As(refusal.err, &e) || e.Code != acptest.CodeInvalidRequest {
		t.Errorf("the duplicate got %s, %v; want an invalid-request error", refusal.res, refusal.err)
	}
	turn.Cancel()
	close(release)
	last := hostileWait(t, answers, "the answer to the first request")
	if last.err != nil {
		t.Fatalf("first request: %v", last.err)
	}
	if strings.Contains(string(last.res), "selected") {
		t.Errorf("the agent got an allow after the cancel: %s", last.res)
	}
	if _, err := waitTurn(t, turn); err != nil {
		t.Fatal(err)
	}
}

// Requests past MaxPendingRequests are refused at once and cost no
// goroutines while the handlers sit on the first ones.
func TestHostilePendingRequestFlood(t *testing.T) {
	const limit, flood = 16, 1000
	release := make(chan struct{})
	var d diags
	var entered atomic.Int64
	_, s, a := hostileConnect(t, nil, &acp.ClientOptions{
		OnDiagnostic: d.add,
		Limits:       acp.Limits{MaxPendingRequests: limit},
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			entered.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return acp.RejectAll(ctx, req)
		},
	})
	defer close(release)
	before := goroutines()
	rs, err := a.FloodRequests("session/request_permission", permissionParams(s.ID(), "t"), flood)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range rs[limit:] {
		err := hostileWait(t, doneResult(r), "a refusal")
		if err != nil && strings.Contains(err.Error(), schema.ErrLimitExceeded.Error()) {
			refused++
		}
	}
	grown := goroutines() - before
	t.Logf("%d of %d requests refused, %d handlers entered, %d more goroutines", refused, flood, entered.Load(), grown)
	if refused != flood-limit {
		t.Errorf("%d requests refused, want %d", refused, flood-limit)
	}
	if grown > 4*limit+20 {
		t.Errorf("%d more goroutines while %d requests are pending", grown, limit)
	}
	for _, r := range rs[:limit] {
		select {
		case <-r.Done():
			t.Errorf("request %s answered while its handler waits", r.ID())
		default:
		}
	}
}

// doneResult delivers r's error once r is answered.
func doneResult(r *acptest.Request) <-chan error {
	ch := make(chan error, 1)
	go func() { _, err := r.Result(); ch <- err }()
	return ch
}

// Batch lines past MaxBatchItems have their extra requests refused, one
// diagnostic per batch; the connection keeps serving.
func TestHostileBatchFlood(t *testing.T) {
	const batches, items, limit = 20, 50, 4
	var d diags
	c, _, a := hostileConnect(t, nil, &acp.ClientOptions{OnDiagnostic: d.add, Limits: acp.Limits{MaxBatchItems: limit}})
	before := goroutines()
	for b := range batches {
		var msgs []any
		for i := range items {
			msgs = append(msgs, acptest.BatchItem(json.RawMessage(fmt.Sprint(b*items+i+1000)), "no/such", nil))
		}
		if err := a.Batch(msgs...); err != nil {
			t.Fatal(err)
		}
	}
	probe(t, a)
	grown := goroutines() - before
	if _, err := c.NewSession(context.Background(), nil); err != nil {
		t.Fatalf("a call after the batches: %v", err)
	}
	c.Close()
	refused := 0
	for _, f := range a.Agent().Transcript() {
		if f.Dir == ">" && strings.Contains(string(f.Msg), "Limits.MaxBatchItems") {
			refused++
		}
	}
	limited := 0
	for _, k := range d.kinds() {
		if k == string(acp.DiagLimitExceeded) {
			limited++
		}
	}
	t.Logf("%d refusals, %d limit diagnostics, %d more goroutines", refused, limited, grown)
	if refused != batches*(items-limit) {
		t.Errorf("%d requests refused, want %d", refused, batches*(items-limit))
	}
	if limited != batches {
		t.Errorf("%d limit_exceeded diagnostics for %d batches", limited, batches)
	}
	if grown > 50 {
		t.Errorf("%d more goroutines after the batches", grown)
	}
}

type bigFile struct {
	calls   atomic.Int64
	content string
}

func (f *bigFile) ReadTextFile(context.Context, *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	f.calls.Add(1)
	return &schema.ReadTextFileResponse{Content: f.content}, nil
}

// An agent that asks for many large file reads and stops reading its
// input: once MaxQueuedWriteBytes of replies wait, the handlers wait too,
// so the heap holds about the budget, not every file.
func TestHostileStopReadingWhileReadingFiles(t *testing.T) {
	const fileSize, reads, budget = 1 << 20, 100, 1 << 20
	ss := make(chan *acptest.Session, 1)
	agent := acptest.New(&acptest.Options{DisableTranscript: true, OnNewSession: func(s *acptest.Session) { ss <- s }})
	fromAgent, toAgent := agent.Pipe()
	stall := acptest.NewStall(toAgent)
	probed := make(chan struct{}, 1)
	fs := &bigFile{content: strings.Repeat("a", fileSize)}
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: stall}, &acp.ClientOptions{
		FS:     acp.FileSystemHandlers{ReadTextFile: fs.ReadTextFile},
		Limits: acp.Limits{MaxQueuedWriteBytes: budget},
		OnDiagnostic: func(d acp.Diagnostic) {
			if d.Kind == acp.DiagJunkLine {
				probed <- struct{}{}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		stall.Close() // the client's blocked writes fail; the agent sees EOF
		c.Close()
		agent.Close()
	}()
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := <-ss
	before := heapInUse()

	blocked := stall.Waiting()
	stall.Stop()
	if _, err := a.FloodRequests("fs/read_text_file", map[string]any{"sessionId": s.ID(), "path": "/f"}, reads); err != nil {
		t.Fatal(err)
	}
	a.Junk("probe") // the client has read every request once this is reported
	hostileWait(t, probed, "the client to read every request")
	hostileWait(t, blocked, "the client to write into the stalled input")

	grown := heapInUse() - before
	served := fs.calls.Load()
	writes, held := stall.Blocked()
	t.Logf("%d of %d reads served; heap in use grew by %d MiB; %d writes (%d KiB) blocked", served, reads, grown>>20, writes, held>>10)
	if grown > 48<<20 {
		t.Errorf("heap in use grew by %d MiB with a write budget of %d MiB", grown>>20, budget>>20)
	}
	if served > reads/4 {
		t.Errorf("%d reads served for an agent that reads nothing", served)
	}
}

// A blocked OnDiagnostic and a flood of junk lines: at most
// MaxQueuedEvents diagnostics wait, the rest are dropped, and one
// limit_exceeded diagnostic says how many once the queue drains.
func TestHostileCallbackQueueFlood(t *testing.T) {
	const limit, flood = 10, 2000
	release := make(chan struct{})
	report := make(chan acp.Diagnostic, 1)
	var junk atomic.Int64
	var once sync.Once
	_, _, a := hostileConnect(t, &acptest.Options{DisableTranscript: true}, &acp.ClientOptions{
		Limits: acp.Limits{MaxQueuedEvents: limit},
		OnDiagnostic: func(d acp.Diagnostic) {
			<-release
			switch d.Kind {
			case acp.DiagJunkLine:
				junk.Add(1)
			case acp.DiagLimitExceeded:
				once.Do(func() { report <- d })
			}
		},
	})
	for i := range flood {
		if err := a.Junk(fmt.Sprint("junk ", i)); err != nil {
			t.Fatal(err)
		}
	}
	probe(t, a) // the client's reader has taken in every junk line
	close(release)
	d := hostileWait(t, report, "the dropped-callbacks diagnostic")
	delivered := junk.Load()
	t.Logf("%d of %d junk diagnostics delivered; %s", delivered, flood, d.Message)
	if delivered > limit+1 {
		t.Errorf("%d diagnostics delivered with a queue of %d", delivered, limit)
	}
	if !strings.Contains(d.Message, "diagnostics") || !strings.Contains(d.Message, "MaxQueuedEvents") {
		t.Errorf("report %q does not say what was dropped and why", d.Message)
	}
}

// Close from inside the callbacks that run on the callback goroutine
// returns, and ends the client.
func TestHostileCloseFromCallback(t *testing.T) {
	for _, from := range []string{"OnDiagnostic", "ExtNotification"} {
		t.Run(from, func(t *testing.T) {
			clientc := make(chan *acp.Client, 1)
			closed := make(chan error, 1)
			var once sync.Once
			closeIt := func() { once.Do(func() { closed <- (<-clientc).Close() }) }
			copts := &acp.ClientOptions{}
			if from == "OnDiagnostic" {
				copts.OnDiagnostic = func(acp.Diagnostic) { closeIt() }
			} else {
				copts.ExtNotification = func(string, json.RawMessage) { closeIt() }
			}
			c, _, a := hostileConnect(t, nil, copts)
			clientc <- c
			if from == "OnDiagnostic" {
				a.Junk("junk")
			} else {
				a.Notify("_acptest/note", map[string]any{})
			}
			if err := hostileWait(t, closed, "Close called from "+from); err != nil {
				t.Fatal(err)
			}
			hostileWait(t, c.Done(), "Done")
			if _, err := c.NewSession(context.Background(), nil); err == nil {
				t.Error("a call succeeded after Close")
			}
		})
	}
}

// Every chunk with a new messageId: the turn keeps every message, and
// folding twice the chunks costs about twice the allocations. (That the
// work is linear is counted inside the fold by
// TestFoldDistinctMessageIDsIsLinear.)
func TestHostileDistinctMessageIDFlood(t *testing.T) {
	const n = 2000
	_, s, _ := hostileConnect(t, &acptest.Options{
		DisableTranscript: true,
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			var k int
			fmt.Sscan(t.PromptText(), &k)
			return "", t.FloodUpdates(t.SessionID(), k, true)
		},
	}, nil)
	run := func(k int) uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		turn, err := s.Prompt(context.Background(), schema.Text(fmt.Sprint(k)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := waitTurn(t, turn); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		if got := len(turn.State().Messages); got != k {
			t.Fatalf("%d messages from %d distinct messageIds", got, k)
		}
		turn.Release()
		return ms.Mallocs - before
	}
	run(100) // warm up
	small, large := run(n), run(2*n)
	t.Logf("%d chunks: %d allocations; %d chunks: %d", n, small, 2*n, large)
	if large > 3*small {
		t.Errorf("folding %d distinct messageIds allocated %d times, %d ids %d: worse than linear", 2*n, large, n, small)
	}
}

// Updates for many session ids nobody opened: the client keeps at most
// MaxOrphanSessions ids and MaxOrphanBytes, and reports every drop.
func TestHostileOrphanUpdates(t *testing.T) {
	const ids, size, maxIDs, maxBytes = 3000, 4 << 10, 10, 8 << 10
	var drops atomic.Int64
	c, _, a := hostileConnect(t, &acptest.Options{DisableTranscript: true}, &acp.ClientOptions{
		Limits: acp.Limits{MaxOrphanSessions: maxIDs, MaxOrphanBytes: maxBytes},
		OnDiagnostic: func(d acp.Diagnostic) {
			if d.Kind == acp.DiagLimitExceeded {
				drops.Add(1)
			}
		},
	})
	before := heapInUse()
	if err := a.OrphanUpdates(ids, size); err != nil {
		t.Fatal(err)
	}
	probe(t, a)
	grown := heapInUse() - before
	if err := c.Err(); err != nil {
		t.Fatalf("the connection ended: %v", err)
	}
	c.Close() // delivers the queued diagnostics
	t.Logf("%d MiB of orphan updates: heap in use grew by %d KiB; %d drops reported", ids*size>>20, grown>>10, drops.Load())
	if grown > 4<<20 {
		t.Errorf("heap in use grew by %d KiB for orphan limits of %d ids, %d KiB", grown>>10, maxIDs, maxBytes>>10)
	}
	if n := drops.Load(); n < ids-maxIDs {
		t.Errorf("%d drops reported, want at least %d", n, ids-maxIDs)
	}
}

// Tool calls announced after the client cancelled the turn: every one is
// folded as cancelled, none is lost, and the turn ends cancelled.
func TestHostileToolCallsAfterCancel(t *testing.T) {
	const n = 2000
	_, s, _ := hostileConnect(t, &acptest.Options{
		DisableTranscript: true,
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			select {
			case <-t.Cancelled():
			case <-t.Context().Done():
				return "", nil
			}
			for i := range n {
				if err := t.ToolCall(acptest.ToolCallSpec{ID: fmt.Sprint("late-", i), Title: "rm -rf", Status: "pending"}); err != nil {
					return "", err
				}
			}
			return schema.StopReasonEndTurn, nil // agents often say so
		},
	}, nil)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Cancel()
	reason, err := waitTurn(t, turn)
	if err != nil {
		t.Fatal(err)
	}
	st := turn.State()
	if reason != schema.StopReasonCancelled || !st.Cancelled {
		t.Errorf("stop reason %q, cancelled %v", reason, st.Cancelled)
	}
	if len(st.ToolCalls) != n {
		t.Fatalf("%d tool calls folded, want %d", len(st.ToolCalls), n)
	}
	for _, tc := range st.ToolCalls {
		if tc.Status != schema.ToolCallStatusCancelled {
			t.Fatalf("tool call %s announced after the cancel is %s", tc.ToolCallID, tc.Status)
		}
	}
}
