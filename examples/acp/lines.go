package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/term"
)

// lineReader is the one reader of stdin, shared by the prompt loop and the
// permission dialogs (two readers would steal each other's input).
type lineReader interface {
	// ReadLine shows prompt and returns the next line, or ctx's error. A
	// line typed after ctx ended goes to the next call.
	ReadLine(ctx context.Context, prompt string) (string, error)
}

func newLineReader(stdin io.Reader, stdout io.Writer, complete func(string) []string) lineReader {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) && isTerminal(stdout) {
		t := term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{f, stdout}, "")
		t.AutoCompleteCallback = completer(complete)
		return &ttyLines{fd: int(f.Fd()), t: t}
	}
	ch := make(chan lineResult)
	go func() {
		in := bufio.NewScanner(stdin)
		in.Buffer(nil, 1<<20)
		for in.Scan() {
			ch <- lineResult{line: in.Text()}
		}
		ch <- lineResult{err: io.EOF}
		close(ch)
	}()
	return &pipeLines{ch: ch, out: stdout}
}

type lineResult struct {
	line string
	err  error
}

// pipeLines reads lines from a pipe or file.
type pipeLines struct {
	ch  <-chan lineResult
	out io.Writer
}

func (p *pipeLines) ReadLine(ctx context.Context, prompt string) (string, error) {
	select {
	case r, ok := <-p.ch:
		if !ok {
			return "", io.EOF
		}
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ttyLines edits lines on a terminal: the terminal is raw only while a line
// is read (the turn's output is written in cooked mode), and Tab completes
// slash commands.
type ttyLines struct {
	fd      int
	t       *term.Terminal
	mu      sync.Mutex
	pending chan lineResult // a read whose caller gave up
}

func (r *ttyLines) ReadLine(ctx context.Context, prompt string) (string, error) {
	r.mu.Lock()
	ch := r.pending
	r.pending = nil
	if ch == nil {
		ch = make(chan lineResult, 1)
		r.t.SetPrompt(prompt)
		go func() {
			old, err := term.MakeRaw(r.fd)
			if err != nil {
				ch <- lineResult{err: err}
				return
			}
			line, err := r.t.ReadLine()
			term.Restore(r.fd, old)
			ch <- lineResult{line, err}
		}()
	}
	r.mu.Unlock()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-ctx.Done():
		r.mu.Lock()
		r.pending = ch
		r.mu.Unlock()
		return "", ctx.Err()
	}
}

// completer completes the word at the start of the line when it begins
// with "/" and Tab is pressed: to the single match, else to the longest
// common prefix of the matches.
func completer(candidates func(string) []string) func(string, int, rune) (string, int, bool) {
	return func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' || !strings.HasPrefix(line, "/") || strings.Contains(line[:pos], " ") {
			return "", 0, false
		}
		prefix := line[:pos]
		var matches []string
		for _, c := range candidates(prefix) {
			if strings.HasPrefix(c, prefix) {
				matches = append(matches, c)
			}
		}
		if len(matches) == 0 {
			return "", 0, false
		}
		sort.Strings(matches)
		matches = slices.Compact(matches)
		common := matches[0]
		for _, m := range matches[1:] {
			for !strings.HasPrefix(m, common) {
				common = common[:len(common)-1]
			}
		}
		if len(matches) == 1 {
			common += " "
		}
		return common + line[pos:], len(common), true
	}
}
