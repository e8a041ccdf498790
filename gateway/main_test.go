package gateway

import (
	"testing"

	"github.com/acpclient/acp/acptest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	acptest.Register("script", func() *acptest.Agent { return acptest.New(scriptOptions()) })
	acptest.Register("stubborn", func() *acptest.Agent {
		o := scriptOptions()
		o.IgnoreStdinEOF = true
		o.SpawnGrandchild = true
		return acptest.New(o)
	})
	acptest.MainIfAgent()
	goleak.VerifyTestMain(m)
}
