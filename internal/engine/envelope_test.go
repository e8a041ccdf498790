package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp/internal/scantest"
)

// The one-pass envelope scanner must never disagree with the encoding/json
// path it short-cuts: every input it accepts must decode to exactly what
// encoding/json gives, and everything else must fall back.

var envelopeSeeds = scantest.Seeds

func TestScanEnvelopeMatchesEncodingJSON(t *testing.T) {
	for _, in := range envelopeSeeds {
		checkEnvelope(t, []byte(in))
	}
}

func checkEnvelope(t *testing.T, line []byte) {
	t.Helper()
	env, ok := scanEnvelope(line)
	var ref envelope
	err := json.Unmarshal(line, &ref)
	if !ok {
		return // falls back to encoding/json, whatever it says
	}
	if err != nil {
		t.Fatalf("scanEnvelope accepted %q, which encoding/json rejects: %v", line, err)
	}
	if !bytes.Equal(env.ID, ref.ID) || env.Method != ref.Method || !bytes.Equal(env.Params, ref.Params) ||
		!bytes.Equal(env.Result, ref.Result) || !bytes.Equal(env.Error, ref.Error) {
		t.Fatalf("scanEnvelope(%q) = %+v, encoding/json gives %+v", line, env, ref)
	}
}

func FuzzScanEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkEnvelope(t, line)
	})
}
