package acp

import (
	"bytes"
	"reflect"
	"slices"
	"sync"
)

// A form is checked once. The client decodes the schema of a request it
// serves before the handler runs (refusing one over its limits), keeps it
// on the ElicitationRequest it hands the handler, and
// ElicitationRequest.Schema hands out copies of that schema rather than
// decoding it again, so its patterns are compiled once. When the handler's
// answer is content that Accept built from an unchanged copy, the client
// does not check it again: Accept did, against the same schema.

// servedSchema is the client's side of a schema it decoded from a request.
type servedSchema struct {
	mu       sync.Mutex
	accepted []byte // the content Accept built last from an unchanged copy
}

// clone returns a copy of s that shares nothing the caller may change
// (the compiled patterns, which nothing changes, are shared), with s as
// its origin.
func (s *ElicitationSchema) clone() *ElicitationSchema {
	c := &ElicitationSchema{Title: s.Title, Description: s.Description, Required: slices.Clone(s.Required),
		Meta: slices.Clone(s.Meta), Fields: make([]ElicitationField, len(s.Fields)), origin: s, anyValue: s.anyValue}
	for i, f := range s.Fields {
		f.Property = cloneProperty(f.Property)
		c.Fields[i] = f
	}
	return c
}

func cloneProperty(p ElicitationProperty) ElicitationProperty {
	switch p := p.(type) {
	case *ElicitationString:
		q := *p
		q.MinLength, q.MaxLength, q.Default = clonePtr(p.MinLength), clonePtr(p.MaxLength), clonePtr(p.Default)
		q.Enum, q.OneOf, q.Meta = slices.Clone(p.Enum), cloneOptions(p.OneOf), slices.Clone(p.Meta)
		return &q
	case *ElicitationNumber:
		q := *p
		q.Minimum, q.Maximum, q.Default, q.Meta = clonePtr(p.Minimum), clonePtr(p.Maximum), clonePtr(p.Default), slices.Clone(p.Meta)
		return &q
	case *ElicitationInteger:
		q := *p
		q.Minimum, q.Maximum, q.Default, q.Meta = clonePtr(p.Minimum), clonePtr(p.Maximum), clonePtr(p.Default), slices.Clone(p.Meta)
		return &q
	case *ElicitationBoolean:
		q := *p
		q.Default, q.Meta = clonePtr(p.Default), slices.Clone(p.Meta)
		return &q
	case *ElicitationMultiSelect:
		q := *p
		q.MinItems, q.MaxItems = clonePtr(p.MinItems), clonePtr(p.MaxItems)
		q.Enum, q.AnyOf, q.Default, q.Meta = slices.Clone(p.Enum), cloneOptions(p.AnyOf), slices.Clone(p.Default), slices.Clone(p.Meta)
		return &q
	case *ElicitationUnknownProperty:
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

func cloneOptions(opts []ElicitationOption) []ElicitationOption {
	out := slices.Clone(opts)
	for i := range out {
		out[i].Meta = slices.Clone(out[i].Meta)
	}
	return out
}

// noteAccepted records content, which Accept built from s, on the
// client's schema s was copied from, if s still equals it: what decides
// an answer (the fields and the required names) is compared, which costs
// no pattern matching.
func (s *ElicitationSchema) noteAccepted(content []byte) {
	o := s.origin
	if o == nil || o.served == nil || !slices.Equal(s.Required, o.Required) || !reflect.DeepEqual(s.Fields, o.Fields) {
		return
	}
	o.served.mu.Lock()
	o.served.accepted = bytes.Clone(content)
	o.served.mu.Unlock()
}

// acceptedContent reports whether content is what Accept built last from
// an unchanged copy of s.
func (s *ElicitationSchema) acceptedContent(content []byte) bool {
	if s.served == nil {
		return false
	}
	s.served.mu.Lock()
	defer s.served.mu.Unlock()
	return s.served.accepted != nil && bytes.Equal(s.served.accepted, content)
}
