package kustomize

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What a scan refuses, and how the render says it.

// maxProblems bounds the problems a scan lists: every one up to it, then
// how many more there are.
const maxProblems = 20

// Problem is one thing the build must not do, or a ceiling it would pass,
// and where.
type Problem struct {
	// Chain is the kustomization files from the root's to the one at
	// fault, the root's as messages name it, each other as the one before
	// refers to it (../../base/kustomization.yaml).
	Chain []string
	Entry string // the field or entry at fault (transformers[0]); "" for the file itself
	Msg   string
}

func (p Problem) String() string {
	s := strings.Join(p.Chain, " → ")
	if p.Entry != "" {
		s += ": " + p.Entry
	}
	return s + ": " + p.Msg
}

// Err is the build's problems as one error, every one listed up to
// maxProblems, or nil.
func (b *Build) Err() error {
	switch len(b.Problems) {
	case 0:
		return nil
	case 1:
		return errors.New(b.Problems[0].String())
	}
	lines := make([]string, 0, len(b.Problems)+1)
	lines = append(lines, fmt.Sprintf("%s: the build is refused, for %d reasons:", b.File, len(b.Problems)))
	for _, p := range b.Problems {
		lines = append(lines, "  "+p.String())
	}
	if len(b.Problems) == maxProblems {
		lines = append(lines, fmt.Sprintf("  (the scan stopped listing at %d)", maxProblems))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// problem records a problem, up to maxProblems, once.
func (b *Build) problem(chain *chain, entry, format string, args ...any) {
	p := Problem{Chain: chain.list(), Entry: entry, Msg: fmt.Sprintf(format, args...)}
	if len(b.Problems) < maxProblems && !slices.ContainsFunc(b.Problems, func(q Problem) bool { return q.String() == p.String() }) {
		b.Problems = append(b.Problems, p)
	}
}
