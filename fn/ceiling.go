package fn

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// checkServiceCeiling bounds the run before any Service is built: it sums
// the FLApps' replica counts, not Services. An FLApp over
// maxServicesPerFLApp fails on its own, before allocating, and is left out.
// The error names the largest FLApps, where the count is usually decided.
func checkServiceCeiling(flapps []*flapp, limit, perFLApp int64) *Result {
	type sized struct {
		key objectKey
		n   int64
	}
	var total int64
	all := make([]sized, 0, len(flapps))
	for _, f := range flapps {
		n := render.ServiceCount(f.app)
		if n > perFLApp {
			continue
		}
		total += n
		all = append(all, sized{objectKey{f.app.Namespace, f.app.Name}, n})
	}
	if total <= limit {
		return nil
	}
	slices.SortFunc(all, func(a, b sized) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.key.String(), b.key.String()))
	})
	largest := make([]string, 0, min(MaxNamed, len(all)))
	for _, s := range all[:min(MaxNamed, len(all))] {
		largest = append(largest, fmt.Sprintf("%s (%d)", s.key, s.n))
	}
	more := ""
	if len(all) > MaxNamed {
		more = fmt.Sprintf(" and %d more", len(all)-MaxNamed)
	}
	return RunError(fmt.Sprintf(
		"the input would produce %d Services, more than maxServices (%d): the largest FLApps are %s%s; "+
			"lower their replicas, split the input, or raise maxServices if this is intended",
		total, limit, strings.Join(largest, ", "), more))
}

// MaxNamed bounds the names one message lists (FLApps, transformations),
// the rest counted: 500 FLApps make one readable line.
const MaxNamed = 5

// MaxErrors bounds the error results of one run: a file of 50,000 broken
// items gets the first errors and a count, not 50,000 results (each costs
// memory and time to write: SECURITY.md, Why these defaults).
const MaxErrors = 100

// ErrorList collects errors once each, up to MaxErrors, and counts the
// rest: the same cap as a run's, for problems found before a run (a
// kustomization tree's refusals), which could otherwise grow with the
// repository.
type ErrorList struct {
	list Results
	more int
}

// Add records r, unless an error of the same words is already recorded.
func (l *ErrorList) Add(r *Result) {
	line := r.String()
	switch {
	case slices.ContainsFunc(l.list, func(q *Result) bool { return q.String() == line }):
	case len(l.list) < MaxErrors:
		l.list = append(l.list, r)
	default:
		l.more++
	}
}

// Len is how many errors were recorded, those past the cap included.
func (l *ErrorList) Len() int { return len(l.list) + l.more }

// Results is the errors recorded, then the line that stands for the rest.
func (l *ErrorList) Results() Results {
	if l.more == 0 {
		return l.list
	}
	return append(slices.Clip(l.list), moreErrors(l.more))
}

func capErrors(results Results) Results {
	n := 0
	out := make(Results, 0, min(len(results), MaxErrors+1))
	for _, r := range results {
		if r.Severity == framework.Error {
			if n++; n > MaxErrors {
				continue
			}
		}
		out = append(out, r)
	}
	if n > MaxErrors {
		out = append(out, moreErrors(n-MaxErrors))
	}
	return out
}
