package acp

import (
	"context"
	"log/slog"
)

// LogDiagnostics returns a function for [ClientOptions.OnDiagnostic] that
// logs each diagnostic to l at Warn level, with the message prefixed
// "acp: " and the attributes kind, session (when the diagnostic names one)
// and line (when it has one): the record [ClientOptions.Logger] writes. Use
// it to log diagnostics to a logger beside another OnDiagnostic, or to
// give them a logger of their own (l.With("agent", name)). A nil l logs to
// slog.Default().
func LogDiagnostics(l *slog.Logger) func(Diagnostic) {
	if l == nil {
		l = slog.Default()
	}
	return func(d Diagnostic) { logDiagnostic(l, d) }
}

// LogValue makes a Diagnostic a group of its fields in a log record
// ("diag", d): kind, message, and session and line when set.
func (d Diagnostic) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs, slog.String("kind", string(d.Kind)), slog.String("message", d.Message))
	if d.SessionID != "" {
		attrs = append(attrs, slog.String("session", d.SessionID))
	}
	if d.Line != "" {
		attrs = append(attrs, slog.String("line", d.Line))
	}
	return slog.GroupValue(attrs...)
}

func logDiagnostic(l *slog.Logger, d Diagnostic) {
	ctx := context.Background()
	if !l.Enabled(ctx, slog.LevelWarn) {
		return
	}
	attrs := make([]slog.Attr, 0, 3)
	attrs = append(attrs, slog.String("kind", string(d.Kind)))
	if d.SessionID != "" {
		attrs = append(attrs, slog.String("session", d.SessionID))
	}
	if d.Line != "" {
		attrs = append(attrs, slog.String("line", d.Line))
	}
	l.LogAttrs(ctx, slog.LevelWarn, "acp: "+d.Message, attrs...)
}

// diagIn reports a diagnostic about session sid ("" for none); it runs on
// the reader goroutine, so it only queues.
func (c *Client) diagIn(sid string, kind DiagnosticKind, msg string, line []byte) {
	if c.opts.Logger == nil && c.opts.OnDiagnostic == nil {
		return
	}
	if len(line) > 512 {
		line = line[:512]
	}
	d := Diagnostic{Kind: kind, Message: msg, Line: string(line), SessionID: sid}
	c.events.Push(eventDiagnostic, int64(len(d.Line)+len(d.Message)+len(sid)), func() { c.deliverDiag(d) })
}

// ReportDiagnostic delivers d as the client's own diagnostics are
// delivered: to ClientOptions.Logger and OnDiagnostic, on the callback
// goroutine and in order with the events queued before it, with d.Line cut
// to 512 bytes; nothing happens when neither is set. It never blocks: when
// the callback queue is full, d is dropped and counted, as the client's
// own diagnostics are. It exists for packages built over the client that
// screen what an agent sends and drop what they refuse (package nes drops
// malformed and foreign suggestions): the caller then learns of the drop
// in the same place as of every other agent fault.
func (c *Client) ReportDiagnostic(d Diagnostic) {
	line := d.Line
	if len(line) > 512 {
		line = line[:512] // cut before the copy: a dropped value may be large
	}
	c.diagIn(d.SessionID, d.Kind, d.Message, []byte(line))
}
