package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// The permission requests the agent sends, as the command answers them:
// by --permission's policy or by asking on the terminal, each request and
// its outcome printed (in --json mode as a "permission" event).

// permissionHandler returns the handler --permission asks for. Every
// request (and its outcome) is printed; in --json mode as a "permission"
// event.
func (o *output) permissionHandler(cfg *config, stdin io.Reader) acp.PermissionHandler {
	_ = stdin
	mode := cfg.permission
	if mode == "" {
		mode = "reject"
		if !cfg.json && isTerminal(stdin) && o.tty {
			mode = "ask"
		}
	}
	var h acp.PermissionHandler
	switch mode {
	case "allow":
		h = acp.AllowAll
	case "cancel":
		h = acp.CancelAll
	case "ask":
		h = acp.OneAtATime(func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			return o.ask(ctx, req)
		})
	default:
		h = acp.RejectAll
	}
	return func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		out, err := h(ctx, req)
		d := decision{req: req, out: out, err: err, cancelled: ctx.Err() != nil}
		if o.json && req.Turn != nil {
			// The renderer prints it at the request's place.
			o.decisionChan(placement{req.Turn, req.Seq}) <- d
			return out, err
		}
		o.lockAfterShown(ctx, req)
		defer o.mu.Unlock()
		if o.json {
			o.emitPermission(d, &req.Raw.ToolCall, 0)
		} else {
			o.printPermission(d)
		}
		return out, err
	}
}

// emitPermission writes a --json "permission" event: the request, the
// toolCall patch it applied to the tool call (so that folding the events
// rebuilds the state) and its outcome. o.mu is held.
func (o *output) emitPermission(d decision, patch schema.Update, seq uint64) {
	if d.req == nil {
		o.emit(map[string]any{"event": "permission", "toolCall": patch, "seq": seq, "error": errString(d.err)})
		return
	}
	out := d.out
	if d.cancelled {
		out = acp.CancelledOutcome()
	}
	ev := map[string]any{"event": "permission", "toolCallId": d.req.ToolCall.ToolCallID, "options": d.req.Options, "outcome": out, "toolCall": patch}
	if seq != 0 {
		ev["seq"] = seq
	}
	if d.req.Title != "" {
		ev["title"] = d.req.Title
	}
	if d.err != nil && !d.cancelled {
		ev["error"] = d.err.Error()
	}
	o.emit(ev)
}

// printPermission prints a decided request. o.mu is held.
func (o *output) printPermission(d decision) {
	out := d.out
	if d.cancelled {
		out = acp.CancelledOutcome()
	}
	what := string(out.Kind)
	if out.Kind == schema.OutcomeSelected {
		what = out.OptionID
	}
	o.textf("perm", "[permission] %s: %s\n", cleanLine(question(d.req)), cleanLine(what))
	o.last = ""
}

// question is what the request asks: its own wording, else the tool's title.
func question(req *acp.PermissionRequest) string {
	if req.Title != "" {
		return req.Title
	}
	return req.ToolCall.Title
}

// ask shows the request and reads the user's choice.
func (o *output) ask(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
	o.lockAfterShown(ctx, req)
	tc := req.ToolCall
	o.textf("perm", "\n[permission] %s (%s)\n", cleanLine(question(req)), cleanLine(orDash(string(tc.Kind))))
	for _, c := range tc.Content {
		if d, ok := c.(*schema.DiffContent); ok && d.Changes != nil {
			// v2: the changes, then the agent's patch text if any.
			for _, ch := range d.Changes {
				fmt.Fprintf(o.stdout, "  %s %s\n", cleanLine(ch.Operation), cleanLine(ch.Path))
			}
			if d.Patch != nil {
				for _, l := range strings.Split(d.Patch.Text, "\n") {
					fmt.Fprintf(o.stdout, "  %s\n", cleanText(l))
				}
			}
		} else if ok {
			fmt.Fprintf(o.stdout, "  --- %s\n", cleanLine(d.Path))
			if d.OldText != nil {
				for _, l := range strings.Split(*d.OldText, "\n") {
					fmt.Fprintf(o.stdout, "  - %s\n", cleanText(l))
				}
			}
			for _, l := range strings.Split(d.NewText, "\n") {
				fmt.Fprintf(o.stdout, "  + %s\n", cleanText(l))
			}
		}
	}
	for i, opt := range req.Options {
		fmt.Fprintf(o.stdout, "  %d) %s [%s]\n", i+1, cleanLine(opt.Name), cleanLine(string(opt.Kind)))
	}
	o.last = ""
	o.reading++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.reading--
		o.lastDraw = time.Now()
		o.mu.Unlock()
	}()
	prompt := "choose: "
	for {
		line, err := o.lines.ReadLine(ctx, prompt)
		if ctx.Err() != nil {
			return acp.CancelledOutcome(), nil
		}
		if errors.Is(err, errInterrupted) && req.Turn != nil {
			// Ctrl-C here does what it does anywhere in a turn: cancel
			// it. Turn.Cancel answers this request cancelled and the
			// turn ends; a second Ctrl-C (now a signal, the terminal
			// is no longer raw) exits.
			o.note("cancelling (Ctrl-C again to exit)")
			req.Turn.Cancel()
			return acp.CancelledOutcome(), nil
		}
		if err != nil {
			return acp.RejectAll(ctx, req)
		}
		var n int
		if _, err := fmt.Sscan(line, &n); err == nil && n >= 1 && n <= len(req.Options) {
			return acp.SelectedOutcome(req.Options[n-1].OptionID), nil
		}
		prompt = fmt.Sprintf("choose 1-%d: ", len(req.Options))
	}
}
