// This file holds the report's renderings: the terminal summary grouped
// by area, and JUnit XML for CI systems.

package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// WriteText writes a summary for a terminal: one line per result, grouped
// by area in rule order, then the counts. Strings the agent chose are
// quoted with their control characters escaped.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	name := r.Agent.Name
	if r.Agent.Version != "" {
		name += " " + r.Agent.Version
	}
	fmt.Fprintf(&b, "agent %s, protocol versions offered %v, graded %v\n", quoteAgent(name), r.Offered, r.Versions)
	area := ""
	counts := map[Status]int{}
	for _, res := range r.Results {
		if res.Area != area {
			area = res.Area
			fmt.Fprintf(&b, "\n%s\n", area)
		}
		counts[res.Status]++
		fmt.Fprintf(&b, "  %-14s v%d %-6s %-26s %s\n", statusLabel(res.Status), res.Protocol, res.Level, res.ID, res.Title)
		if res.Status != Pass && res.Message != "" {
			fmt.Fprintf(&b, "  %14s %s\n", "", quoteAgent(res.Message))
		}
	}
	fmt.Fprintf(&b, "\n%d pass, %d fail (%d MUST), %d warn, %d not exercised, %d skipped\n",
		counts[Pass], counts[Fail], r.Failures(Must), counts[Warn], counts[NotExercised], counts[Skipped])
	_, err := io.WriteString(w, b.String())
	return err
}

func statusLabel(s Status) string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Warn:
		return "WARN"
	case NotExercised:
		return "NOT EXERCISED"
	case Skipped:
		return "SKIPPED"
	}
	return string(s)
}

// quoteAgent escapes control characters, so that an agent's strings
// cannot drive the terminal.
func quoteAgent(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a testsuite per protocol
// version, a testcase per rule (classname its area). A failed MUST rule
// is a failure, and with strict a failed SHOULD rule too; other failures
// and warnings pass with their message as system-out; not exercised and
// skipped rules are skipped.
func (r *Report) WriteJUnit(w io.Writer, strict bool) error {
	var doc junitSuites
	for _, v := range r.Versions {
		s := junitSuite{Name: fmt.Sprintf("acp conformance v%d: %s", v, r.Agent.Name)}
		for _, res := range r.Results {
			if res.Protocol != v {
				continue
			}
			c := junitCase{Name: res.ID, Classname: res.Area}
			detail := fmt.Sprintf("%s %s (%s): %s", res.Level, res.Title, res.Spec, res.Message)
			for _, e := range res.Evidence {
				detail += "\n" + string(e)
			}
			switch {
			case res.Status == Fail && (res.Level == Must || strict && res.Level == Should):
				c.Failure = &junitMessage{Message: res.Message, Type: string(res.Level), Text: detail}
				s.Failures++
			case res.Status == NotExercised || res.Status == Skipped:
				c.Skipped = &junitMessage{Message: string(res.Status) + ": " + res.Message}
				s.Skipped++
			case res.Status != Pass:
				c.SystemOut = string(res.Status) + ": " + detail
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteMarkdown writes the report as a Markdown page: the agent, a table
// per protocol version (rule, level, status, message), then the findings:
// every failed or warned rule with its spec link and first evidence frame.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	name := r.Agent.Name
	if r.Agent.Version != "" {
		name += " " + r.Agent.Version
	}
	fmt.Fprintf(&b, "Agent: `%s`; versions offered %v, graded %v; %d MUST failures.\n", mdCell(name), r.Offered, r.Versions, r.Failures(Must))
	for _, v := range r.Versions {
		fmt.Fprintf(&b, "\n### Protocol v%d\n\n| rule | level | status | message |\n| --- | --- | --- | --- |\n", v)
		for _, res := range r.Results {
			if res.Protocol == v {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", res.ID, res.Level, res.Status, mdCell(res.Message))
			}
		}
	}
	b.WriteString("\n### Findings\n\n")
	n := 0
	for _, res := range r.Results {
		if res.Status != Fail && res.Status != Warn {
			continue
		}
		n++
		fmt.Fprintf(&b, "- **v%d `%s`** (%s, %s; [spec](https://agentclientprotocol.com/%s)): %s\n", res.Protocol, res.ID, res.Level, res.Status, res.Spec, mdCell(res.Message))
		if len(res.Evidence) > 0 {
			ev := string(res.Evidence[0])
			if len(ev) > 600 {
				ev = ev[:600] + "…"
			}
			fmt.Fprintf(&b, "  ```json\n  %s\n  ```\n", strings.ReplaceAll(ev, "\n", " "))
		}
	}
	if n == 0 {
		b.WriteString("None: every rule observed was kept.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes s safe inside a Markdown table cell.
func mdCell(s string) string {
	s = quoteAgent(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
