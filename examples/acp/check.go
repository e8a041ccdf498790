// This file holds `acp check`: it grades an agent against the protocol
// with package acptest/conformance and prints the report (a summary, or
// with --json one document), optionally JUnit XML and the wire trace.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/acpclient/acp/acptest/conformance"
	"github.com/acpclient/acp/acptest/demo"
)

const checkUsageHead = `usage: acp check [flags] [--agent ID | --url URL | -- AGENT_COMMAND [ARGS...]]

Grades the agent (the demo agent by default) against the ACP spec: it
drives it through scripted scenarios, each on a fresh connection (a new
process for a command) with a deadline, and grades every rule it can
observe, in each protocol version the agent offers. Rules that need
something no scenario saw (a tool call the model did not make, a
capability the agent does not advertise) are "not exercised", never
passed. The rules: docs/CHECK.md. The grader offers no terminals, serves
fs requests only inside a temporary workspace it removes, and rejects
every permission request except a read or edit tool call's in the tool
scenario.

exit status:
  0    no MUST rule failed (with --strict: no SHOULD rule either)
  1    a MUST rule failed (with --strict: or a SHOULD rule)
  2    bad flags, or the agent could not be named (no such command)

flags:
`

type checkConfig struct {
	json     bool
	junit    string
	trace    string
	strict   bool
	skip     string
	protocol int
	timeout  time.Duration
	auth     string
	prompts  conformance.Prompts
	agent    config // the agent: --agent, --url, --header, or after --
}

func parseCheckFlags(args []string, stderr io.Writer) (*checkConfig, error) {
	cc := &checkConfig{}
	fs := flag.NewFlagSet("acp check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&cc.json, "json", false, "print the report as one JSON document: agent, versions, and each rule's id, level, spec, status, message and evidence frames")
	fs.StringVar(&cc.junit, "junit", "", "also write the report as JUnit XML to this file (a testcase per rule; failed MUST rules, and SHOULD with --strict, are failures)")
	fs.StringVar(&cc.trace, "trace", "", "write the wire trace of every scenario to this file (acp view renders it)")
	fs.BoolVar(&cc.strict, "strict", false, "fail on SHOULD rules too")
	fs.StringVar(&cc.skip, "skip", "", "rule ids not to grade, comma-separated")
	fs.IntVar(&cc.protocol, "protocol", 0, "grade only this ACP version, 1 or 2 (default: every version the agent offers)")
	fs.DurationVar(&cc.timeout, "timeout", conformance.DefaultScenarioTimeout, "the deadline of each scenario")
	fs.StringVar(&cc.auth, "auth", "", "authenticate with this method id when the agent requires it")
	fs.StringVar(&cc.prompts.Hello, "prompt", "", "the ordinary prompt (default: a request for a one-sentence greeting)")
	fs.StringVar(&cc.prompts.Cancel, "cancel-prompt", "", "the prompt the cancel scenario cancels at once; it should keep the agent busy (default: a request for a long essay)")
	fs.StringVar(&cc.prompts.Tool, "tool-prompt", "", "the prompt meant to make the agent use a file tool, in the tool scenario (default: a request to write conformance.txt)")
	fs.StringVar(&cc.prompts.Background, "background-prompt", "", "the prompt meant to make a v2 agent leave a terminal or tool call running after the turn, in the background scenario (default: none, and background work is not exercised; the demo's is /background)")
	cc.agent.registry.register(fs, stderr)
	cc.agent.remote.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, checkUsageHead)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cc.agent.agent = fs.Args()
	if cc.agent.registry.listAgents {
		return nil, errors.New("acp check takes no --list-agents")
	}
	if err := cc.agent.registry.validate(&cc.agent); err != nil {
		return nil, err
	}
	if err := cc.agent.remote.validate(&cc.agent); err != nil {
		return nil, err
	}
	if cc.protocol != 0 && cc.protocol != 1 && cc.protocol != 2 {
		return nil, fmt.Errorf("--protocol must be 1 or 2, not %d", cc.protocol)
	}
	if cc.timeout <= 0 {
		return nil, fmt.Errorf("--timeout must be positive, not %v", cc.timeout)
	}
	return cc, nil
}

func (cc *checkConfig) options() *conformance.Options {
	o := &conformance.Options{ScenarioTimeout: cc.timeout, AuthMethod: cc.auth, Prompts: cc.prompts}
	if cc.protocol != 0 {
		o.Protocol = []int{cc.protocol}
	}
	for id := range strings.SplitSeq(cc.skip, ",") {
		if id = strings.TrimSpace(id); id != "" {
			o.Skip = append(o.Skip, id)
		}
	}
	return o
}

// target names the agent; the demo agent runs in-process, so that the
// sessions it keeps in memory outlive a connection as a real agent's on
// disk do.
func (cc *checkConfig) target(ctx context.Context, opts *conformance.Options) (conformance.Target, func(), error) {
	cfg := &cc.agent
	switch {
	case cfg.remote.url != "":
		tr, err := cfg.remote.transport()
		if err != nil {
			return conformance.Target{}, nil, err
		}
		return conformance.Target{Dial: func(ctx context.Context) (io.ReadWriteCloser, error) { return tr.Connect(ctx) }}, func() {}, nil
	case cfg.registry.agentID != "":
		cmd, err := cfg.registry.command(ctx)
		if err != nil {
			return conformance.Target{}, nil, err
		}
		return conformance.Target{Command: append([]string{cmd.Path}, cmd.Args[1:]...), Env: cmd.Env}, func() {}, nil
	case len(cfg.agent) > 0:
		return conformance.Target{Command: cfg.agent}, func() {}, nil
	}
	a := demo.New(nil) // sessions in memory: a check leaves nothing behind
	if opts.Prompts.Cancel == "" {
		opts.Prompts.Cancel = "/slow"
	}
	if opts.Prompts.Background == "" {
		opts.Prompts.Background = "/background"
	}
	return conformance.PipeTarget(a.Pipe), func() { a.Close() }, nil
}

func check(args []string, stdout, stderr io.Writer) int {
	cc, err := parseCheckFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "acp check:", err)
		return 2
	}
	ctx := context.Background()
	opts := cc.options()
	target, done, err := cc.target(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "acp check:", err)
		return 1
	}
	defer done()
	if cc.trace != "" {
		f, err := os.Create(cc.trace)
		if err != nil {
			fmt.Fprintln(stderr, "acp check:", err)
			return 1
		}
		defer f.Close()
		opts.Trace = f
	}
	rep, err := conformance.Run(ctx, target, opts)
	if err != nil {
		fmt.Fprintln(stderr, "acp check:", err)
		return 2
	}
	if cc.junit != "" {
		f, err := os.Create(cc.junit)
		if err == nil {
			err = rep.WriteJUnit(f, cc.strict)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "acp check: --junit:", err)
			return 1
		}
	}
	if cc.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // evidence frames keep "<" and ">" readable
		err = enc.Encode(struct {
			*conformance.Report
			Passed bool `json:"passed"`
			Strict bool `json:"strict"`
		}{rep, rep.Passed(cc.strict), cc.strict})
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "acp check:", err)
		return 1
	}
	if !rep.Passed(cc.strict) {
		return 1
	}
	return 0
}
