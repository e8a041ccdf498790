package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
	// line typed after ctx ended goes to the next call. It returns io.EOF
	// at the end of input (Ctrl-D on an empty line) and errInterrupted for
	// Ctrl-C typed at a terminal's prompt.
	ReadLine(ctx context.Context, prompt string) (string, error)
	// Abandon gives up a read its caller has stopped waiting for, before
	// the command exits: a terminal is put back in cooked mode and the
	// cursor moves to a new line, off the prompt.
	Abandon()
}

// errInterrupted is ReadLine's error for Ctrl-C at a terminal's prompt:
// the terminal is raw while a line is read, so Ctrl-C arrives as a key,
// not as SIGINT, and the line editor reports it as io.EOF, like Ctrl-D.
var errInterrupted = errors.New("interrupted")

func newLineReader(stdin io.Reader, stdout io.Writer, complete func(string) []string) lineReader {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) && isTerminal(stdout) {
		r := &ttyLines{fd: int(f.Fd()), keys: &ctrlCWatch{r: f}, out: stdout, complete: completer(complete)}
		r.t = r.newTerminal()
		return r
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

func (p *pipeLines) Abandon() {}

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
	fd       int
	keys     *ctrlCWatch // stdin; read only by the goroutine of the current read
	out      io.Writer
	complete func(string, int, rune) (string, int, bool)

	mu      sync.Mutex
	t       *term.Terminal
	pending chan lineResult // a read whose caller gave up
	cooked  *term.State     // while a read has the terminal raw: its state before
}

// newTerminal returns a line editor on stdin and stdout, keeping the
// history of the one it replaces (if any).
func (r *ttyLines) newTerminal() *term.Terminal {
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{r.keys, r.out}, "")
	t.AutoCompleteCallback = r.complete
	if r.t != nil {
		t.History = r.t.History
	}
	return t
}

func (r *ttyLines) ReadLine(ctx context.Context, prompt string) (string, error) {
	r.mu.Lock()
	ch := r.pending
	r.pending = nil
	if ch == nil {
		ch = make(chan lineResult, 1)
		t := r.t
		t.SetPrompt(prompt)
		go func() {
			r.mu.Lock()
			old, err := term.MakeRaw(r.fd)
			r.cooked = old
			r.mu.Unlock()
			if err != nil {
				ch <- lineResult{err: err}
				return
			}
			line, err := t.ReadLine()
			if errors.Is(err, io.EOF) {
				if r.keys.ctrlC {
					err = errInterrupted
				}
				r.keys.ctrlC = false
				// What follows starts on a line of its own, not after
				// the prompt.
				io.WriteString(r.out, "\r\n")
				// The editor returns at Ctrl-C and Ctrl-D without
				// consuming its buffer (it would see the key again) or
				// clearing the half-typed line: start a new one.
				r.mu.Lock()
				r.t = r.newTerminal()
				r.mu.Unlock()
			}
			r.mu.Lock()
			if r.cooked != nil {
				term.Restore(r.fd, old)
				r.cooked = nil
			}
			r.mu.Unlock()
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

func (r *ttyLines) Abandon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cooked != nil {
		term.Restore(r.fd, r.cooked)
		r.cooked = nil
		io.WriteString(r.out, "\n")
	}
}

// ctrlCWatch reads stdin for the line editor and notes a Ctrl-C. A read
// ends just after the Ctrl-C (the rest is kept for the next read), so
// that the editor, which stops there, has read nothing beyond it.
type ctrlCWatch struct {
	r     io.Reader
	rest  []byte
	ctrlC bool
}

func (k *ctrlCWatch) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(k.rest) > 0 {
		n = copy(p, k.rest)
		k.rest = k.rest[n:]
	} else {
		n, err = k.r.Read(p)
	}
	if i := bytes.IndexByte(p[:n], 3); i >= 0 {
		k.rest = append(append([]byte(nil), p[i+1:n]...), k.rest...)
		n = i + 1
		k.ctrlC = true
	}
	return n, err
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
