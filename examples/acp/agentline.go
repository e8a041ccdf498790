package main

// What text mode says about the agent beside its turns: the first line
// (name, pid, protocol version, session), the session's title and its
// context usage as they change, and its commands in /help.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// agentPID is the agent's process id: the one its initialize result
// reports in agentInfo._meta.pid (the demo does; it stays right after a
// restart), else that of cmd when it ran (the first connection's
// process), else 0 (a remote agent).
func agentPID(c *acp.Client, cmd *exec.Cmd) int {
	if info := c.InitializeResponse().AgentInfo; info != nil && len(info.Meta) > 0 {
		var m struct {
			PID int `json:"pid"`
		}
		if json.Unmarshal(info.Meta, &m) == nil && m.PID > 0 {
			return m.PID
		}
	}
	if cmd != nil && cmd.Process != nil {
		return cmd.Process.Pid
	}
	return 0
}

// agentLine is the text mode's first line: "ACP demo agent (pid 123),
// ACP v2, session ID" (the pid only for a local process).
func (o *output) agentLine(name string, s *acp.Session) string {
	line := cleanLine(name)
	if pid := agentPID(o.client, o.agentCmd); pid > 0 {
		line += fmt.Sprintf(" (pid %d)", pid)
	}
	return fmt.Sprintf("%s, ACP v%d, session %s", line, o.client.InitializeResponse().ProtocolVersion, cleanLine(s.ID()))
}

// infoUpdate prints the session's title and usage updates, returning
// false for any other update. o.mu is held.
func (o *output) infoUpdate(who string, u schema.Update) bool {
	switch u := u.(type) {
	case *schema.SessionInfoUpdate:
		if u.Title.Value == nil || *u.Title.Value == "" {
			return true
		}
		o.textf("info", "%s[title] %s\n", who, cleanLine(*u.Title.Value))
	case *schema.UsageUpdate:
		line := fmt.Sprintf("%s[usage] %d of %d tokens", who, u.Used, u.Size)
		if u.Cost != nil {
			line += fmt.Sprintf(", %.2f %s", u.Cost.Amount, cleanLine(u.Cost.Currency))
		}
		o.textf("info", "%s\n", line)
	default:
		return false
	}
	o.last = ""
	return true
}

// clientCommands are the names the interactive mode takes for itself.
var clientCommands = map[string]bool{"mode": true, "config": true, "help": true, "quit": true, "exit": true}

// agentHelp lists the agent's slash commands beside the client's, with
// their descriptions and input hints: "agent commands: /NAME ...", then
// one line each. One acp takes too is reached with //NAME.
func (o *output) agentHelp(s *acp.Session) {
	cmds := s.State().Commands
	if len(cmds) == 0 {
		return
	}
	var names []string
	for _, c := range cmds {
		names = append(names, "/"+cleanLine(c.Name))
	}
	o.note("agent commands: %s", strings.Join(names, " "))
	for _, c := range cmds {
		line := "  /" + cleanLine(c.Name)
		if c.Input != nil && c.Input.Hint != "" {
			line += " <" + cleanLine(c.Input.Hint) + ">"
		}
		if c.Description != "" {
			line += "  " + cleanLine(c.Description)
		}
		if clientCommands[c.Name] {
			line += " (type //" + cleanLine(c.Name) + ": /" + cleanLine(c.Name) + " is acp's)"
		}
		o.note("%s", line)
	}
}
