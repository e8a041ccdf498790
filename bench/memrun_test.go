// memrun_test.go checks the memrun scenario's ratio lines.
package main

import "testing"

// TestMemrunRatios pins which medians each ratio divides: with
// -memrun-before the TypeScript rows move two places down, and a ratio
// taken from the wrong row would still print a plausible number.
func TestMemrunRatios(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      []float64
		before bool
		want   string
	}{
		{"alone", []float64{10, 20, 40}, false,
			"wall: acp/floor 2.00×, acp --json/floor 4.00×"},
		{"with TS", []float64{10, 20, 40, 400, 300}, false,
			"wall: acp/floor 2.00×, acp --json/floor 4.00×, TS prints/acp 20.00×, TS prints/acp --json 10.00×, TS accumulates/acp 15.00×"},
		{"with before", []float64{10, 20, 40, 80, 160}, true,
			"wall: acp/floor 2.00×, acp --json/floor 4.00×, after/before text 0.25×, --json 0.25×"},
		{"with before and TS", []float64{10, 20, 40, 80, 160, 400, 300}, true,
			"wall: acp/floor 2.00×, acp --json/floor 4.00×, after/before text 0.25×, --json 0.25×, TS prints/acp 20.00×, TS prints/acp --json 10.00×, TS accumulates/acp 15.00×"},
	} {
		if got := memrunRatios("wall", tc.v, tc.before); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
