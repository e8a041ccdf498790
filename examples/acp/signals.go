package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/acpclient/acp"
	"golang.org/x/term"
)

// signals turns the signals that end a command line tool into a clean
// shutdown. SIGTERM and SIGHUP (sent by timeout, kill, a closed terminal)
// and SIGINT outside a turn cancel the command's context and close the
// client: the agent gets the SDK's full staged shutdown (stdin closed, then
// SIGTERM, then SIGKILL to its process group), so neither it nor its
// children outlive the command. During a turn, SIGINT goes to the turn
// instead (see runTurn).
type signals struct {
	ch     chan os.Signal
	cancel context.CancelFunc
	done   chan struct{} // the dispatcher has ended
	tty    int           // stdin's descriptor if it is a terminal
	cooked *term.State   // the terminal's state at the start

	mu     sync.Mutex
	turn   chan os.Signal // set while a turn takes interrupts
	client *acp.Client
	caught os.Signal // the signal that ended the command
}

// catchSignals starts routing signals; cancel is the command's context's.
func catchSignals(cancel context.CancelFunc, stdin io.Reader) *signals {
	s := &signals{ch: make(chan os.Signal, 4), cancel: cancel, done: make(chan struct{})}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.tty = int(f.Fd())
		s.cooked, _ = term.GetState(s.tty)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		// Under nohup, or started in the background by a shell, a signal
		// arrives ignored; catching it would undo that.
		if !signal.Ignored(sig) {
			signal.Notify(s.ch, sig)
		}
	}
	go s.dispatch()
	return s
}

func (s *signals) dispatch() {
	defer close(s.done)
	for sig := range s.ch {
		s.mu.Lock()
		turn, ended := s.turn, s.caught != nil
		s.mu.Unlock()
		switch {
		case ended:
			// Already shutting down; the staged shutdown is bounded.
		case sig == os.Interrupt && turn != nil:
			select {
			case turn <- sig:
			default: // the turn has not taken the last one yet
			}
		default:
			s.shutdown(sig)
		}
	}
}

// shutdown ends the command: every call fails, the client closes. It
// returns once the agent is gone.
func (s *signals) shutdown(sig os.Signal) {
	s.mu.Lock()
	if s.caught == nil {
		s.caught = sig
	}
	c := s.client
	s.mu.Unlock()
	s.cancel()
	if c != nil {
		c.Close()
	}
}

// setClient hands over the connected client, for a signal to close it.
func (s *signals) setClient(c *acp.Client) {
	s.mu.Lock()
	s.client = c
	caught := s.caught != nil
	s.mu.Unlock()
	if caught {
		c.Close() // the signal came while Connect returned
	}
}

// duringTurn routes SIGINT to the returned channel until release is called.
func (s *signals) duringTurn() (interrupts <-chan os.Signal, release func()) {
	ch := make(chan os.Signal, 2)
	s.mu.Lock()
	s.turn = ch
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		s.turn = nil
		s.mu.Unlock()
	}
}

// stop ends the routing and returns the signal that ended the command, if
// any. A signal can come while a line is read with the terminal in raw
// mode; the reader never gets to restore it, so stop does.
func (s *signals) stop() os.Signal {
	signal.Stop(s.ch)
	close(s.ch)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caught != nil && s.cooked != nil {
		_ = term.Restore(s.tty, s.cooked)
	}
	return s.caught
}

// signalStatus is the conventional exit status for death by sig: 128 plus
// its number (130 for SIGINT, 129 for SIGHUP, 143 for SIGTERM).
func signalStatus(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}
