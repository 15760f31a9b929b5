package kustomize

import (
	"fmt"

	"github.com/fedlearner/flapp-services/fn"
)

// Problems are what the build must not do (execute, fetch, leave the
// repository) or cannot do within its ceilings, each at its kustomization
// (fn.Origin.Chain) and field: the render refuses the build when there is
// any.
func (b *Root) Problems() fn.Results { return b.problems.Results() }

// Err is the build's problems as one error (fn.Results), or nil.
func (b *Root) Err() error {
	if b.problems.Len() == 0 {
		return nil
	}
	return b.Problems()
}

// problem records a problem at entry (the field at fault, "" for the file
// itself) of chain's last kustomization.
func (b *Root) problem(chain *chain, entry, format string, args ...any) {
	b.problems.Add(fn.BuildProblem(chain.list(), entry, fmt.Sprintf(format, args...)))
}
