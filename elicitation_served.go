package acp

import (
	"bytes"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"slices"
	"sync"
)

// A form is checked once. The client decodes the schema of a request it
// serves before the handler runs (refusing one over its limits) and
// compiles its patterns; the servedForm it keeps on the
// ElicitationRequest it hands the handler is the client's side of that
// form. ElicitationRequest.Schema hands out copies of the schema, which
// the handler may change; ElicitationRequest.Accept and Validate check
// against the form itself, with its ElicitationValidator, made then. When the
// handler's answer is content ElicitationRequest.Accept built, the client
// does not check it again: Accept did, against the same form.
//
// The schema stays a plain value of the protocol's (ElicitationSchema),
// and the validator is the protocol's too (a pure function of the schema,
// compiled): what is per request, which validator and the answer
// accepted, is here, on the client's side, through exported API only.

// servedForm is the client's side of a form it decoded from a request it
// serves.
type servedForm struct {
	schema *schema.ElicitationSchema    // as decoded; never handed out (copies are)
	check  *schema.ElicitationValidator // schema's, its patterns compiled once

	mu       sync.Mutex
	accepted []byte // the content accept built last
}

func newServedForm(s *schema.ElicitationSchema) *servedForm {
	return &servedForm{schema: s, check: s.Compile()}
}

// accept is ElicitationSchema.Accept against the form, noting the content
// it built: the client sends it without checking it again.
func (f *servedForm) accept(values map[string]any) (*schema.CreateElicitationResponse, error) {
	resp, err := f.check.Accept(values)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.accepted = bytes.Clone(resp.Content)
	f.mu.Unlock()
	return resp, nil
}

// checkAnswer checks content the handler answered with against the form,
// unless it is what accept built last.
func (f *servedForm) checkAnswer(content json.RawMessage) error {
	f.mu.Lock()
	built := f.accepted != nil && bytes.Equal(f.accepted, content)
	f.mu.Unlock()
	if built {
		return nil
	}
	return f.check.ValidateContent(content)
}

// cloneSchema returns a copy of s that shares nothing the caller may
// change. It reads only the schema's exported fields: a copy is the
// client's business, not the protocol's.
func cloneSchema(s *schema.ElicitationSchema) *schema.ElicitationSchema {
	c := *s
	c.Required, c.Meta, c.Fields = slices.Clone(s.Required), slices.Clone(s.Meta), make([]schema.ElicitationField, len(s.Fields))
	for i, f := range s.Fields {
		f.Property = cloneProperty(f.Property)
		c.Fields[i] = f
	}
	return &c
}

func cloneProperty(p schema.ElicitationProperty) schema.ElicitationProperty {
	switch p := p.(type) {
	case *schema.ElicitationString:
		q := *p
		q.MinLength, q.MaxLength, q.Default = clonePtr(p.MinLength), clonePtr(p.MaxLength), clonePtr(p.Default)
		q.Enum, q.OneOf, q.Meta = slices.Clone(p.Enum), cloneOptions(p.OneOf), slices.Clone(p.Meta)
		return &q
	case *schema.ElicitationNumber:
		q := *p
		q.Minimum, q.Maximum, q.Default, q.Meta = clonePtr(p.Minimum), clonePtr(p.Maximum), clonePtr(p.Default), slices.Clone(p.Meta)
		return &q
	case *schema.ElicitationInteger:
		q := *p
		q.Minimum, q.Maximum, q.Default, q.Meta = clonePtr(p.Minimum), clonePtr(p.Maximum), clonePtr(p.Default), slices.Clone(p.Meta)
		return &q
	case *schema.ElicitationBoolean:
		q := *p
		q.Default, q.Meta = clonePtr(p.Default), slices.Clone(p.Meta)
		return &q
	case *schema.ElicitationMultiSelect:
		q := *p
		q.MinItems, q.MaxItems = clonePtr(p.MinItems), clonePtr(p.MaxItems)
		q.Enum, q.AnyOf, q.Default, q.Meta = slices.Clone(p.Enum), cloneOptions(p.AnyOf), slices.Clone(p.Default), slices.Clone(p.Meta)
		return &q
	case *schema.ElicitationUnknownProperty:
		q := *p
		q.Raw = slices.Clone(p.Raw)
		return &q
	}
	return p
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneOptions(opts []schema.ElicitationOption) []schema.ElicitationOption {
	out := slices.Clone(opts)
	for i := range out {
		out[i].Meta = slices.Clone(out[i].Meta)
	}
	return out
}
