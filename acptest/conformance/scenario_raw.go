// This file holds the scenarios that speak raw JSON-RPC: version
// negotiation (initialize offering 1, 2 and 99, each on a fresh
// connection) and the error-code probes.

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// initInfo is what an initialize result says, in either version's shape.
type initInfo struct {
	version     int
	raw         json.RawMessage
	loadSession bool
	image       bool
	audio       bool
	embedded    bool
	list        bool
	resume      bool
	close       bool
	authMethods int
}

// clientInfo is how the grader names itself.
var clientInfo = map[string]any{"name": "acp-conformance", "version": "1"}

func initializeParams(offer int) map[string]any {
	if offer >= 2 {
		return map[string]any{"protocolVersion": offer, "info": clientInfo, "capabilities": map[string]any{}}
	}
	return map[string]any{"protocolVersion": offer, "clientInfo": clientInfo,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false}}
}

// negotiate offers 1, 2 and 99, each on its own connection, and grades
// the init rules for every version the agent answers as its own.
func (r *runner) negotiate(ctx context.Context) {
	answers := map[int]int{} // offer -> version answered; -1 error
	frames := map[int]*frame{}
	errs := map[int]string{}
	r.version = 1
	r.scenario(ctx, "negotiate", func(s *scene) {
		for _, offer := range []int{1, 2, 99} {
			conn, err := s.open()
			if err != nil {
				errs[offer] = "starting the agent: " + s.why(err)
				if s.ctx.Err() != nil {
					return
				}
				continue
			}
			p := newRawPeer(conn)
			_, f, err := p.call(s.ctx, "initialize", initializeParams(offer))
			switch {
			case err != nil:
				errs[offer] = s.why(err)
			case f.msg.Error != nil:
				answers[offer] = -1
				frames[offer] = f
			default:
				var res struct {
					ProtocolVersion json.RawMessage `json:"protocolVersion"`
				}
				json.Unmarshal(f.msg.Result, &res)
				var v int
				if json.Unmarshal(res.ProtocolVersion, &v) != nil {
					answers[offer] = 0
				} else {
					answers[offer] = v
				}
				frames[offer] = f
			}
			p.close()
			if s.ctx.Err() != nil {
				return
			}
		}
	})
	latest, hasLatest := answers[99]
	for _, v := range []int{1, 2} {
		if a, ok := answers[v]; ok && a == v {
			r.report.Offered = append(r.report.Offered, v)
		}
	}
	if len(r.report.Offered) == 0 {
		// No version answered as offered: grade v1's rules (or v2's when
		// the agent insists on 2) with what was seen.
		r.version = 1
		if a := answers[1]; a == 2 || (!hasLatest && answers[2] == 2) {
			r.version = 2
		}
		msg := "initialize got no result for any offer"
		for _, o := range []int{1, 2, 99} {
			if e, ok := errs[o]; ok {
				msg = fmt.Sprintf("initialize offering %d: %s", o, e)
				break
			}
		}
		if len(errs) == 0 {
			msg = fmt.Sprintf("the agent answered offers of 1, 2 and 99 with %v (-1: an error; 0: not an integer), none the version offered", []int{answers[1], answers[2], answers[99]})
		}
		r.fail("init.answers", msg, frames[1], frames[2])
		r.stopped = "the agent completed no initialize"
		return
	}
	for _, v := range r.report.Offered {
		r.version = v
		f := frames[v]
		r.pass("init.answers", fmt.Sprintf("initialize offering %d answered protocolVersion %d", v, v))
		info := r.checkInitShape(f, v)
		info.raw = f.msg.Result
		r.inits[v] = info
		// Negotiation: each answer is the offer, or the agent's latest
		// (what it answered to 99); an error only where it speaks nothing
		// at or below the offer.
		ok := true
		for _, o := range []int{1, 2, 99} {
			a, seen := answers[o]
			if !seen {
				continue
			}
			switch {
			case a == o:
			case a == -1 && o < slices.Min(r.report.Offered):
			case a > 0 && a <= o && hasLatest && a == latest:
			case a > 0 && !hasLatest:
			default:
				ok = false
				r.fail("init.version", fmt.Sprintf("offered %d, the agent answered %s; its latest (the answer to 99) is %d", o, answerText(a), latest), frames[o])
			}
		}
		if hasLatest && (latest < 1 || latest > 99) {
			ok = false
			r.fail("init.version", fmt.Sprintf("offered 99, the agent answered %s", answerText(latest)), frames[99])
		}
		if ok {
			r.pass("init.version", fmt.Sprintf("offers 1, 2, 99 answered %s, %s, %s", answerText(answers[1]), answerText(answers[2]), answerText(latest)))
		}
	}
	if r.report.Agent.Name == "" {
		r.report.Agent = agentInfoOf(r.inits[r.report.Offered[0]].raw)
	}
}

func answerText(a int) string {
	switch a {
	case -1:
		return "an error"
	case 0:
		return "no integer version"
	}
	return fmt.Sprint(a)
}

func agentInfoOf(raw json.RawMessage) AgentInfo {
	var res struct {
		AgentInfo *AgentInfo `json:"agentInfo"`
		Info      *AgentInfo `json:"info"`
	}
	json.Unmarshal(raw, &res)
	switch {
	case res.AgentInfo != nil:
		return *res.AgentInfo
	case res.Info != nil:
		return *res.Info
	}
	return AgentInfo{}
}

// checkInitShape grades init.shape and init.agent-info on an initialize
// result of version v and returns what it advertises.
func (r *runner) checkInitShape(f *frame, v int) *initInfo {
	info := &initInfo{version: v}
	var res map[string]json.RawMessage
	if json.Unmarshal(f.msg.Result, &res) != nil {
		r.fail("init.shape", "the initialize result is not an object", f)
		return info
	}
	var problems []string
	isBool := func(raw json.RawMessage, name string) bool {
		if raw == nil {
			return false
		}
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			problems = append(problems, name+" is not a boolean")
		}
		return b
	}
	// present reads a v2 capability marker: an object (or true) means on.
	present := func(raw json.RawMessage, name string) bool {
		switch {
		case raw == nil || string(raw) == "null" || string(raw) == "false":
			return false
		case raw[0] == '{' || string(raw) == "true":
			return true
		}
		problems = append(problems, name+" is not an object")
		return false
	}
	obj := func(raw json.RawMessage, name string) map[string]json.RawMessage {
		if raw == nil || string(raw) == "null" {
			return nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			problems = append(problems, name+" is not an object")
		}
		return m
	}
	var methods []map[string]json.RawMessage
	if raw := res["authMethods"]; raw != nil && string(raw) != "null" {
		if json.Unmarshal(raw, &methods) != nil {
			problems = append(problems, "authMethods is not an array of objects")
		}
	}
	info.authMethods = len(methods)
	idField := "id"
	if v == 2 {
		idField = "methodId"
	}
	for i, m := range methods {
		var id, name string
		if json.Unmarshal(m[idField], &id) != nil || id == "" {
			problems = append(problems, fmt.Sprintf("authMethods[%d] has no string %s", i, idField))
		}
		if json.Unmarshal(m["name"], &name) != nil || name == "" {
			problems = append(problems, fmt.Sprintf("authMethods[%d] has no string name", i))
		}
	}
	if v == 1 {
		caps := obj(res["agentCapabilities"], "agentCapabilities")
		info.loadSession = isBool(caps["loadSession"], "agentCapabilities.loadSession")
		pc := obj(caps["promptCapabilities"], "promptCapabilities")
		info.image = isBool(pc["image"], "promptCapabilities.image")
		info.audio = isBool(pc["audio"], "promptCapabilities.audio")
		info.embedded = isBool(pc["embeddedContext"], "promptCapabilities.embeddedContext")
		sc := obj(caps["sessionCapabilities"], "sessionCapabilities")
		info.list = present(sc["list"], "sessionCapabilities.list")
		info.resume = present(sc["resume"], "sessionCapabilities.resume")
		info.close = present(sc["close"], "sessionCapabilities.close")
		var ai struct{ Name, Version string }
		if json.Unmarshal(res["agentInfo"], &ai) == nil && ai.Name != "" && ai.Version != "" {
			r.pass("init.agent-info", fmt.Sprintf("agentInfo %s %s", ai.Name, ai.Version))
		} else {
			r.fail("init.agent-info", "the initialize result has no agentInfo with a name and a version", f)
		}
	} else {
		var ai struct{ Name, Version string }
		if json.Unmarshal(res["info"], &ai) != nil || ai.Name == "" || ai.Version == "" {
			problems = append(problems, "info with a name and a version is required in v2")
		}
		caps := obj(res["capabilities"], "capabilities")
		sc := obj(caps["session"], "capabilities.session")
		// An agent advertising session supports new, list, resume,
		// close, prompt and cancel (v2 SessionCapabilities).
		info.list = sc != nil
		info.resume, info.close = info.list, info.list
		pc := obj(sc["prompt"], "capabilities.session.prompt")
		info.image = present(pc["image"], "prompt.image")
		info.audio = present(pc["audio"], "prompt.audio")
		info.embedded = present(pc["embeddedContext"], "prompt.embeddedContext")
	}
	if len(problems) > 0 {
		r.fail("init.shape", fmt.Sprint(problems), f)
	} else {
		r.pass("init.shape", "the initialize result has the schema's shape")
	}
	return info
}

// probes sends what the acp client never would: an unknown method and
// session/new with invalid params.
func (r *runner) probes(s *scene) {
	conn, err := s.open()
	if err != nil {
		r.fail("jsonrpc.method-not-found", "starting the agent: "+s.why(err))
		return
	}
	p := newRawPeer(conn)
	defer p.close()
	if _, f, err := p.call(s.ctx, "initialize", initializeParams(r.version)); err != nil || f.msg.Error != nil {
		msg := "initialize failed"
		if err != nil {
			msg = "initialize: " + s.why(err)
		}
		r.fail("jsonrpc.method-not-found", msg, f)
		return
	}
	r.expectCode(s, p, "jsonrpc.method-not-found", "conformance/no_such_method", map[string]any{}, -32601)
	r.expectCode(s, p, "jsonrpc.invalid-params", "session/new", map[string]any{"cwd": 42, "mcpServers": "none"}, -32602)
}

func (r *runner) expectCode(s *scene, p *rawPeer, id, method string, params any, code int) {
	_, f, err := p.call(s.ctx, method, params)
	if err != nil {
		r.fail(id, fmt.Sprintf("%s: %s", method, s.why(err)))
		return
	}
	e, isErr := errorOf(f)
	switch {
	case !isErr:
		r.fail(id, fmt.Sprintf("%s was answered with a result, not error %d", method, code), f)
	case e.Code == nil:
		r.fail(id, fmt.Sprintf("%s was answered with an error without an integer code", method), f)
	case *e.Code == -32000 && method == "session/new":
		r.notExercised(id, "session/new needs authentication first (-32000)")
	case *e.Code != code:
		r.fail(id, fmt.Sprintf("%s was answered with error %d, not %d", method, *e.Code, code), f)
	default:
		r.pass(id, fmt.Sprintf("%s answered error %d", method, code))
	}
}
