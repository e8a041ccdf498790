package main

import (
	"go/types"
	"slices"
	"testing"
)

// TestClimbs runs the walk on testdata/climbs, whose comments say which
// calls are climbs back and which the walk must leave alone.
func TestClimbs(t *testing.T) {
	w, err := load("testdata/climbs")
	if err != nil {
		t.Fatal(err)
	}
	if w == nil {
		t.Fatal("the fixture's owners were not found")
	}
	got, _, _, ok := w.climbsFrom("Client.onUpdate")
	if !ok {
		t.Fatal("no Client.onUpdate")
	}
	want := []string{
		"Session.apply (climbs.go, layer 1) → Client.diag (climbs.go, layer 0)",
		"Turn.fold (climbs.go, layer 2) → Client.diag (climbs.go, layer 0)",
		"Turn.fold (climbs.go, layer 2) → Session.notify (climbs.go, layer 1)",
		"helper (climbs.go, layer 1) → Client.diag (climbs.go, layer 0)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("climbs back:\n%q\nwant\n%q", got, want)
	}
	if l := w.layers[w.p.Types.Scope().Lookup("routing").(*types.TypeName)]; l != 0 {
		t.Errorf("routing is in layer %d, want the client's (0)", l)
	}
}
