package schema

import (
	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/testhook"

	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
)

// DefaultElicitationPatternBytes bounds, by default, the bytes and the
// compiled instructions of all the patterns of one form (a client's
// Limits.MaxElicitationPatternBytes defaults to it). Go's regexp matches in time
// proportional to the answer's length times the program's size: at 4096
// instructions, the costliest pattern found (\pL* repeated, then $) takes
// tens of milliseconds on a 1000-character answer, and real patterns
// (an e-mail address, a UUID, semver) compile to well under 100.
const DefaultElicitationPatternBytes = 4 << 10

// patternBudget is what the patterns of one schema may still use, in
// bytes and in estimated program instructions: together, not each, so
// that the CPU an answer costs is bounded per request however many
// fields carry a pattern.
type patternBudget struct {
	max          int
	bytes, insts int64
}

// charge charges the pattern of field name to the budget, parsing it but
// not compiling it; it fails only when the budget is spent.
func (b *patternBudget) charge(name, pattern string) error {
	b.bytes += int64(len(pattern))
	if b.bytes > int64(b.max) {
		return b.exceeded(name, fmt.Sprintf("the patterns of its string fields hold more than %d bytes", b.max))
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) && se.Code == syntax.ErrLarge {
			return b.exceeded(name, "a pattern compiles to a program too large for Go's regexp")
		}
		return nil // not Go syntax: unchecked
	}
	b.insts += programSize(re, int64(b.max)+1)
	if b.insts > int64(b.max) {
		return b.exceeded(name, fmt.Sprintf("the patterns of its string fields compile to more than %d instructions", b.max))
	}
	return nil
}

func (b *patternBudget) exceeded(name, why string) error {
	return &elicitationLimitError{&Error{
		Code: CodeInternalError,
		Message: fmt.Sprintf("%s: the elicitation form is refused at field %s: %s (Limits.MaxElicitationPatternBytes)",
			ErrLimitExceeded.Error(), agenttext.Quote(name), why),
		Data: json.RawMessage(`{"limit":"MaxElicitationPatternBytes","value":` + strconv.Itoa(b.max) + `}`),
	}}
}

// programSize estimates, from above, how many instructions Go's regexp
// compiles re to: a counted repetition is expanded in full, as the
// compiler does. Sizes saturate at limit, so that no nesting overflows.
func programSize(re *syntax.Regexp, limit int64) int64 {
	add := func(a, b int64) int64 { return min(a+b, limit) }
	n := int64(0)
	switch re.Op {
	case syntax.OpLiteral:
		return min(int64(len(re.Rune)), limit)
	case syntax.OpCapture:
		return add(2, programSize(re.Sub[0], limit))
	case syntax.OpConcat:
		for _, s := range re.Sub {
			n = add(n, programSize(s, limit))
		}
		return n
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			n = add(n, add(1, programSize(s, limit)))
		}
		return n
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return add(1, programSize(re.Sub[0], limit))
	case syntax.OpRepeat:
		times := int64(re.Max)
		if times < 0 { // x{n,}: n copies, then x*
			times = int64(re.Min) + 1
		}
		sub := add(1, programSize(re.Sub[0], limit))
		if times == 0 {
			return 1
		}
		if sub > limit/times {
			return limit
		}
		return times * sub
	}
	return 1 // a character class, an anchor, an empty match
}

// notePattern tells a test's hook (testhook.Pattern) of a pattern
// compiled or matched here.
func notePattern(event, pattern string) {
	if h := testhook.Pattern.Load(); h != nil {
		(*h)(event, pattern)
	}
}

// compilePattern compiles a pattern Go's syntax accepts, or returns nil.
func compilePattern(pattern string) *regexp.Regexp {
	notePattern("compile", pattern)
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil
	}
	return re
}

// patterns are the compiled patterns of a schema's string fields, by
// field, each with the source it was compiled from; re is nil when Go's
// regexp does not accept the pattern (ECMA-262 syntax it lacks), which is
// then not checked. The pure checks of ElicitationSchema have none, and
// compile each pattern as they match it; an ElicitationValidator has its
// own, compiled once.
type patterns map[*ElicitationString]compiledPattern

type compiledPattern struct {
	src string
	re  *regexp.Regexp
}

// compilePatterns compiles the pattern of every string field of s.
func compilePatterns(s *ElicitationSchema) patterns {
	ps := patterns{}
	for _, f := range s.Fields {
		if p, ok := f.Property.(*ElicitationString); ok && p.Pattern != "" {
			ps[p] = compiledPattern{p.Pattern, compilePattern(p.Pattern)}
		}
	}
	return ps
}

// match reports whether s matches the pattern of p: compiled in ps, or,
// for a field ps does not have or whose pattern changed since, compiled
// now.
func (ps patterns) match(p *ElicitationString, s string) bool {
	c, ok := ps[p]
	re := c.re
	if !ok || c.src != p.Pattern {
		re = compilePattern(p.Pattern)
	}
	if re == nil {
		return true // not Go syntax: unchecked
	}
	notePattern("match", p.Pattern)
	return re.MatchString(s)
}

// elicitationLimitError refuses an elicitation form over one of the
// client's limits: the agent gets the *Error (naming the limit);
// errors.Is(err, ErrLimitExceeded) holds, so the refusal is reported as a
// "limit_exceeded" diagnostic too.
type elicitationLimitError struct{ e *Error }

func (l *elicitationLimitError) Error() string   { return l.e.Message }
func (l *elicitationLimitError) Unwrap() []error { return []error{l.e, ErrLimitExceeded} }
