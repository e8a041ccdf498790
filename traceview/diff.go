package traceview

import (
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// diff renders a v1 diff (path, oldText, newText) as unified diff lines.
// Over MaxDiffBytes it is not computed: a Myers diff of two large texts
// can take long, and the page would carry both texts twice.
func (b *builder) diff(path string, oldText, newText *string) content {
	c := content{Type: "diff", Path: path}
	var o, n string
	if oldText == nil {
		c.Note = "new file"
	} else {
		o = *oldText
	}
	if newText != nil {
		n = *newText
	}
	if len(o)+len(n) > b.opts.MaxDiffBytes {
		c.Note = strings.TrimSpace(fmt.Sprintf("%s\ndiff not computed: %d bytes before, %d after (over MaxDiffBytes, %d)", c.Note, len(o), len(n), b.opts.MaxDiffBytes))
		return c
	}
	u := udiff.Unified(path, path, o, n)
	if u == "" {
		c.Note = strings.TrimSpace(c.Note + "\nno change")
		return c
	}
	c.Diff = strings.Split(strings.TrimSuffix(u, "\n"), "\n")
	return c
}
