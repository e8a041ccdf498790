package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp"
)

// restartFlag is --restart: a boolean that remembers whether it was given,
// because its default depends on the mode (on when interactive, off with
// -p prompts and --list).
type restartFlag struct{ set, on bool }

func (f *restartFlag) String() string {
	// The usage states both defaults; the flag package shows none for a
	// value that prints as its zero value does.
	return strconv.FormatBool(f != nil && f.on)
}

func (f *restartFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	f.set, f.on = true, b
	return nil
}

func (f *restartFlag) IsBoolFlag() bool { return true }

// enabled says whether the agent is supervised. A script's -p prompts keep
// the behaviour they had before supervision (an agent that dies ends the
// command at once) unless --restart asks for more; a person at the prompt
// gets the restart.
func (f *restartFlag) enabled(cfg *config) bool {
	if f.set {
		return f.on
	}
	return len(cfg.prompts) == 0 && !cfg.list
}

// restartPolicy is the supervision the command asks for: the library's
// defaults (5 restarts a minute, backoff from 500 ms to 30 s). Tests make
// the backoff short.
var restartPolicy = func() *acp.RestartPolicy { return &acp.RestartPolicy{} }

// errTurnFailed ends a run of -p prompts one of which was interrupted by
// the agent's death: the interrupted turn was reported already (an error
// event), so run exits 1 without printing more.
var errTurnFailed = errors.New("a turn failed")

// supervision tracks, for the command, what the restarts did to its one
// session.
type supervision struct {
	mu      sync.Mutex
	session string        // the command's session, once open
	lost    chan struct{} // closed when a restart lost the session
	once    sync.Once

	// deaths counts the died events printed; shown, those the interrupted
	// turns have waited for; died is signalled at each.
	deaths, shown int
	died          chan struct{}
	// backs counts the restarts that ended (restored or gave up), one
	// per death; back is signalled at each.
	backs int
	back  chan struct{}
}

func newSupervision() *supervision {
	return &supervision{lost: make(chan struct{}), died: make(chan struct{}, 1), back: make(chan struct{}, 1)}
}

// backShown waits until every death reported so far has been followed
// by the end of its restart (the "back" line printed) or the client gave
// up, so that the interactive prompt is drawn after that line, not under
// it. Call it after diedShown.
func (v *supervision) backShown(c *acp.Client) {
	for {
		v.mu.Lock()
		if v.backs >= v.deaths {
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		select {
		case <-v.back:
		case <-c.Done():
			return
		}
	}
}

// diedShown waits until the death that interrupted a turn has been
// reported, so that its line (or event) comes before the turn's error:
// the library fails the turn first and reports the death on its callback
// goroutine just after. It gives up when the client ends or, as a safety
// net, after a second (the report is then simply later in the output).
func (v *supervision) diedShown(c *acp.Client) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		v.mu.Lock()
		if v.deaths > v.shown {
			v.shown++
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		select {
		case <-v.died:
		case <-c.Done():
			return
		case <-t.C:
			return
		}
	}
}

func (v *supervision) setSession(id string) {
	v.mu.Lock()
	v.session = id
	v.mu.Unlock()
}

// observe sees every restart event before it is printed.
func (v *supervision) observe(ev acp.RestartEvent) {
	if ev.Phase != acp.RestartRestored {
		return
	}
	v.mu.Lock()
	id := v.session
	v.mu.Unlock()
	if id != "" && slices.Contains(ev.Lost, id) {
		v.once.Do(func() { close(v.lost) })
	}
}

// restartHandler reports each step of a restart (RestartPolicy.OnRestart):
// one line on stderr as text, or one {"event":"restart",...} with --json.
func (o *output) restartHandler(v *supervision) func(acp.RestartEvent) {
	return func(ev acp.RestartEvent) {
		v.observe(ev)
		o.restart(ev)
		if ev.Phase == acp.RestartDied {
			v.mu.Lock()
			v.deaths++
			v.mu.Unlock()
			select {
			case v.died <- struct{}{}:
			default:
			}
		}
		if ev.Phase == acp.RestartRestored || ev.Phase == acp.RestartGaveUp {
			v.mu.Lock()
			v.backs++
			v.mu.Unlock()
			select {
			case v.back <- struct{}{}:
			default:
			}
		}
	}
}

func (o *output) restart(ev acp.RestartEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ee *acp.ExitError
	exited := errors.As(ev.Err, &ee)
	if o.json {
		e := map[string]any{"event": "restart", "phase": ev.Phase, "connection": ev.Connection, "attempt": ev.Attempt}
		if ev.Err != nil {
			e["message"] = ev.Err.Error()
		}
		if exited {
			e["exitStatus"] = ee.Status
			e["exitCode"] = ee.ExitCode
			if tail := lastLines(ee.StderrTail, 10); tail != "" {
				e["stderrTail"] = tail
			}
		}
		switch ev.Phase {
		case acp.RestartWaiting:
			e["delayMs"] = ev.Delay.Milliseconds()
		case acp.RestartRestored:
			e["restored"] = nonNil(ev.Restored)
			e["lost"] = nonNil(ev.Lost)
		}
		o.emit(e)
		return
	}
	var msg string
	switch ev.Phase {
	case acp.RestartDied:
		why := "its connection ended"
		if exited {
			why = ee.Status
		} else if ev.Err != nil {
			why = strings.TrimPrefix(ev.Err.Error(), "acp: ")
		}
		msg = "the agent died (" + why + "); restarting it"
		if exited {
			if tail := lastLines(ee.StderrTail, 5); tail != "" {
				msg += "\nagent stderr (last lines):\n" + tail
			}
		}
	case acp.RestartWaiting:
		msg = fmt.Sprintf("restarting the agent in %v (attempt %d)", ev.Delay, ev.Attempt)
	case acp.RestartFailed:
		msg = fmt.Sprintf("restart attempt %d failed: %s", ev.Attempt, strings.TrimPrefix(errString(ev.Err), "acp: "))
	case acp.RestartRestored:
		msg = fmt.Sprintf("the agent is back (connection %d)", ev.Connection)
		if pid := agentPID(o.client, nil); pid > 0 {
			msg = fmt.Sprintf("the agent is back (connection %d, pid %d)", ev.Connection, pid)
		}
		if len(ev.Restored) > 0 {
			msg += "; restored session " + strings.Join(ev.Restored, ", ")
		}
		if len(ev.Lost) > 0 {
			msg += "; lost session " + strings.Join(ev.Lost, ", ")
		}
	case acp.RestartGaveUp:
		// The command ends with Client.Err, printed as its error.
		return
	default:
		msg = string(ev.Phase)
	}
	if o.spinning {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.spinning = false
	}
	if o.last != "" {
		fmt.Fprintln(o.stdout)
		o.last = ""
	}
	fmt.Fprintln(o.stderr, "acp: "+cleanText(msg))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// sessionLostError reports the session a restart could not bring back:
// its error wraps acp.ErrSessionLost and names it.
func sessionLostError(s *acp.Session) error {
	if err := s.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q", acp.ErrSessionLost, s.ID())
}

// interrupted says whether err is that of a turn the agent's death
// interrupted while the client lives on (it restarts the agent). A client
// that gave up fails its calls with ErrConnClosed; the check for it keeps
// this right whatever the cause of the give-up wraps.
func interrupted(err error) bool {
	return errors.Is(err, acp.ErrAgentRestarted) && !errors.Is(err, acp.ErrConnClosed)
}
