package acp

import (
	"context"
	"errors"
	"testing"
)

// A handler that returns after its ctx was cancelled — even one that honours
// the ctx and returns promptly — is dropped: the caller gets the ctx's
// cause, never the late result (the agent withdrew the request, or the turn
// was cancelled and the answer must be the cancelled outcome, not an allow).
func TestRunHandlerDropsResultAfterCancel(t *testing.T) {
	cause := errors.New("withdrawn")
	for i := range 2000 {
		ctx, cancel := context.WithCancelCause(context.Background())
		v, err := runHandler(ctx, "test", func(ctx context.Context) (string, error) {
			cancel(cause)
			<-ctx.Done()
			return "allow", nil
		})
		if v != "" || !errors.Is(err, cause) {
			t.Fatalf("iteration %d: runHandler = %q, %v; want the ctx's cause", i, v, err)
		}
	}
}
