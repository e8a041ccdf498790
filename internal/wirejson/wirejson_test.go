// Tests of the decoding rules, one per field type: what reads as absent,
// what is kept, what is an error. The generated decoders that use them are
// tested through package acp's and package nes's types.
package wirejson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type pair struct {
	A int `json:"a"`
	B int `json:"b"`
}

func TestLenientFields(t *testing.T) {
	var w struct {
		S   Str       `json:"s"`
		O   Opt[int]  `json:"o"`
		N   Opt[int]  `json:"n"`
		P   Opt[pair] `json:"p"`
		M   Meta      `json:"_meta"`
		R   Raw       `json:"r"`
		Nil Raw       `json:"nil"`
	}
	in := `{"s":7,"o":"x","n":null,"p":{"a":1,"b":"2"},"_meta":[1],"r":  {"k":1} ,"nil":null}`
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatal(err)
	}
	if w.S.OK || !w.S.Seen || w.S.Ptr() != nil {
		t.Errorf("a number as a string field: %+v", w.S)
	}
	if w.O.OK || !w.O.Seen || w.N.OK || !w.N.Seen {
		t.Errorf("malformed or null optional: %+v %+v", w.O, w.N)
	}
	// What encoding/json made of a malformed value is kept as the default.
	if w.P.OK || w.P.V.A != 1 {
		t.Errorf("partly decoded struct: %+v", w.P)
	}
	if w.M.Raw() != nil {
		t.Errorf("_meta that is not an object kept: %s", w.M.Raw())
	}
	if string(w.R.V) != `{"k":1}` || w.Nil.V != nil || !w.Nil.Seen {
		t.Errorf("raw: %s, null raw: %s", w.R.V, w.Nil.V)
	}
}

func TestSkipInvalid(t *testing.T) {
	for in, want := range map[string]string{
		`[1,"x",null,3]`: "[1,3]",
		`[]`:             "[]",
		`["x"]`:          "[]",
		`null`:           "absent",
		`{"a":1}`:        "absent",
	} {
		v, ok := SkipInvalid[int]([]byte(in))
		got := "absent"
		if ok {
			b, _ := json.Marshal(v)
			got = string(b)
		}
		if got != want {
			t.Errorf("SkipInvalid(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestStrict(t *testing.T) {
	if v, ok, err := StrictOf[int]([]byte(" null ")); ok || err != nil || v != 0 {
		t.Errorf("null: %v %v %v", v, ok, err)
	}
	if v, ok, err := StrictOf[pair]([]byte(`{"a":1,"b":"2"}`)); ok || err == nil || v.A != 0 {
		t.Errorf("malformed: %v %v %v (the value must be the zero value)", v, ok, err)
	}
	if v, ok, err := StrictOf[int]([]byte(`4`)); !ok || err != nil || v != 4 {
		t.Errorf("4: %v %v %v", v, ok, err)
	}
	if _, err := ObjectOf([]byte(`[1]`)); err == nil {
		t.Error("ObjectOf took an array")
	}
}

func TestDiscriminator(t *testing.T) {
	data := []byte(`{"kind":"edit","id":"a\u0041","n":null,"x":3}`)
	if v, found, err := Discriminator(data, "kind"); string(v) != "edit" || !found || err != nil {
		t.Errorf("kind: %q %v %v", v, found, err)
	}
	if v, _, _ := Discriminator(data, "id"); string(v) != "aA" {
		t.Errorf("escaped: %q", v)
	}
	if _, found, err := Discriminator(data, "n"); found || err != nil {
		t.Errorf("null reads as absent: %v %v", found, err)
	}
	if _, _, err := Discriminator(data, "x"); err == nil {
		t.Error("a number discriminator: no error")
	}
	if err := CheckObject([]byte(`{"a":}`)); !errors.Is(err, ErrSyntax) {
		t.Errorf("CheckObject: %v", err)
	}
	if err := ErrMissing("t", "f"); !strings.HasPrefix(err.Error(), "acp: t: ") {
		t.Errorf("ErrMissing: %v", err)
	}
	if Enum([]byte(`5`)) != "" || Enum([]byte(`"future"`)) != "future" {
		t.Error("Enum")
	}
	if MetaOnly([]byte(`null`)) != nil || string(MetaOnly([]byte(`{"_meta":{"a":1}}`))) != `{"a":1}` {
		t.Error("MetaOnly")
	}
}
