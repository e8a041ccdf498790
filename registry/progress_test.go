package registry

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// Progress reports a download from 0 to its size, in order, with the total
// when the host gives a length and -1 when it does not; a cached install
// reports nothing.
func TestProgress(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 256<<10) // a bare executable, several reads
	for _, known := range []bool{true, false} {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if known {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			} else {
				w.(http.Flusher).Flush() // headers without a length: chunked
			}
			w.Write(body)
		}))
		defer s.Close()
		a := binaryAgent("tool", testPlatform, s.URL+"/tool", "./bin/tool")
		r, err := Parse(registryJSON(t, a))
		if err != nil {
			t.Fatal(err)
		}
		var got []Progress
		r.opts = (&Options{CacheDir: t.TempDir(), Platform: testPlatform, HTTPClient: s.Client(), Progress: func(p Progress) { got = append(got, p) }}).withDefaults()
		for range 2 { // the second is cached
			if _, err := r.Command(context.Background(), "tool"); err != nil {
				t.Fatal(err)
			}
		}
		want := int64(-1)
		if known {
			want = int64(len(body))
		}
		if len(got) < 3 || got[0].Done != 0 || got[len(got)-1].Done != int64(len(body)) {
			t.Fatalf("known length %v: %d reports, first %+v, last %+v", known, len(got), got[0], got[len(got)-1])
		}
		for i, p := range got {
			if p.Total != want || p.Agent.ID != "tool" || p.URL != s.URL+"/tool" || (i > 0 && p.Done <= got[i-1].Done) {
				t.Fatalf("known length %v: report %d: %+v (previous done %d)", known, i, p, got[max(i-1, 0)].Done)
			}
		}
	}
}
