package traceview

import (
	"reflect"
)

// What a tool card and a permission row show beyond the fields of the
// wire: the content a card had before an update replaced it, and the
// tone of a permission's options and answer.

// maxContentHist bounds the earlier contents a card keeps: an agent that
// replaces a tool call's content with every line of output would
// otherwise make the page quadratic in the call's updates. The last ones
// are kept (an edit's diff is the one just before its refusal); the
// older are counted (tool.WasN), and every one is in the raw frames.
const maxContentHist = 8

// replaceContent makes next the card's content, keeping what it replaces
// as history: a content list is replaced whole by a tool_call_update
// (spec: tool-calls.mdx, "Updating"), but a reader wants to see the diff
// the user rejected, not only the agent's refusal that followed. Empty
// content, or the same content sent again (a permission request repeats
// the call's diff), adds no history.
func (tc *tool) replaceContent(next []content, t *float64) {
	if len(tc.Content) > 0 && !reflect.DeepEqual(tc.Content, next) {
		if len(tc.Was) == maxContentHist {
			tc.Was = append(tc.Was[:0], tc.Was[1:]...)
			tc.WasN++
		}
		tc.Was = append(tc.Was, version{T: t, Content: tc.Content})
	}
	tc.Content = next
}

// tone is how the page colours a permission option of kind: allow_once
// and allow_always as positive ("allow"), reject_once and reject_always
// as negative ("reject"), any other kind (the schema may add some) as
// neither ("").
func tone(kind string) string {
	switch kind {
	case "allow_once", "allow_always":
		return "allow"
	case "reject_once", "reject_always":
		return "reject"
	}
	return ""
}

// answerTone is the tone of a permission's answer: that of the option
// chosen, "reject" when the client cancelled the request (nothing was
// allowed), "" for an agent's withdrawal, an error or no answer (the page
// styles errors by themselves).
func answerTone(p *perm) string {
	switch p.Answer {
	case "selected":
		for _, o := range p.Options {
			if o.ID == p.Option {
				return o.Tone
			}
		}
	case "cancelled":
		return "reject"
	}
	return ""
}
