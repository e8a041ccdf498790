package acptest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// Transport connects again to the same Agent after Kill, and the agent
// still has the session and its history; Restore decides what it offers.
func TestTransportKillRestore(t *testing.T) {
	for _, tc := range []struct {
		restore      acptest.Restore
		load, resume bool
	}{
		{acptest.RestoreBoth, true, true},
		{acptest.RestoreResumeOnly, false, true},
		{acptest.RestoreLoadOnly, true, false},
		{acptest.RestoreNone, false, false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		replayed := 0
		a := acptest.New(&acptest.Options{Restore: tc.restore, OnReplay: func(*acptest.Session, int) { replayed++ }})
		tr := &acptest.Transport{Agent: a}
		c, err := acp.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		turn, _ := s.Prompt(ctx, schema.Text("hi"))
		turn.Wait()
		a.Kill()
		<-c.Done()
		c2, err := acp.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		caps := c2.InitializeResponse().AgentCapabilities
		if caps.LoadSession != tc.load || (caps.SessionCapabilities.Resume != nil) != tc.resume {
			t.Errorf("%v: capabilities %+v", tc.restore, caps)
		}
		_, err = c2.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: s.ID()})
		if tc.load && (err != nil || replayed != 1) {
			t.Errorf("%v: load %v, %d replayed", tc.restore, err, replayed)
		}
		if !tc.load && !errors.Is(err, acp.ErrNotSupported) {
			t.Errorf("%v: load %v", tc.restore, err)
		}
		if tr.Connects() != 2 {
			t.Errorf("Connects = %d", tr.Connects())
		}
		c2.Close()
		a.Close()
		cancel()
	}
}

// A BeforeConnect error fails that Connect.
func TestTransportBeforeConnect(t *testing.T) {
	a := acptest.New(nil)
	defer a.Close()
	boom := errors.New("no agent today")
	tr := &acptest.Transport{Agent: a, BeforeConnect: func(ctx context.Context, n int) error { return boom }}
	if _, err := acp.Connect(context.Background(), tr, nil); !errors.Is(err, boom) {
		t.Fatalf("Connect: %v", err)
	}
}
