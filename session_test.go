package acp

import (
	"context"
	"testing"
	"time"
)

// Changes ends when the connection closes, without any change to report.
func TestChangesEndsOnClose(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	ended := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(ended)
		for range s.Changes(context.Background()) {
			select {
			case <-started:
			default:
				close(started)
			}
		}
	}()
	<-started
	c.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Changes did not end when the client closed")
	}
}
