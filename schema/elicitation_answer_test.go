package schema

import "testing"

// TestElicitationOptionSet: membership reads the options as Options does
// (titled ones first), whether it scans them or builds a set.
func TestElicitationOptionSet(t *testing.T) {
	titled := []ElicitationOption{{Const: "t", Title: "T"}}
	for _, lookups := range []int{1, 2} {
		if o := newOptionSet([]string{"p"}, titled, lookups); !o.has("t") || o.has("p") {
			t.Errorf("%d lookups: titled options are not the ones read", lookups)
		}
		if o := newOptionSet([]string{"p"}, nil, lookups); !o.has("p") || o.has("t") {
			t.Errorf("%d lookups: plain values are not read", lookups)
		}
	}
}
