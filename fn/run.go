package fn

import (
	"cmp"
	"iter"
	"slices"

	"github.com/fedlearner/flapp-services/render"
	corev1 "k8s.io/api/core/v1"
)

// Run is one run of the function over a stream of items: Add each item as it
// is read, then Finish with the configuration. It holds a small summary per FLApp and per Service of
// the input, never the items themselves and never the generated Services,
// which Output produces one at a time: memory does not grow with the output.
type Run struct {
	flapps   []*flapp
	byKey    map[objectKey]*flapp
	foreign  map[objectKey]Origin // Services this tool did not generate -> where they were read
	previous map[objectKey]*previousService
	results  Results

	// What a build's output holds (Origin.BuildOutput): its FLApps and the
	// Services flapp-services' entries generated for them, as its
	// transformers left them, which Finish checks (fit.go).
	builtFLApps []*flapp
	builtByKey  map[objectKey]*flapp
	built       map[objectKey]*builtService
	changes     map[string][]Change // by build
}

// NewRun starts a run. The configuration matters only to Finish: in KRM mode
// it arrives with the items.
func NewRun() *Run {
	return &Run{
		byKey:      make(map[objectKey]*flapp),
		foreign:    make(map[objectKey]Origin),
		previous:   make(map[objectKey]*previousService),
		builtByKey: make(map[objectKey]*flapp),
		built:      make(map[objectKey]*builtService),
	}
}

// Output is a successful run's generated Services, produced on demand in
// their output order: sorted by namespace, FLApp, replica type and index.
type Output struct {
	flapps []plannedFLApp
	count  int
}

type plannedFLApp struct {
	*flapp
	plan *render.Plan
}

// ServiceCount is how many Services Services yields.
func (o *Output) ServiceCount() int { return o.count }

// Services yields the generated Services one at a time, each freshly
// built; it can be ranged over more than once and gives the same Services.
func (o *Output) Services() iter.Seq[*corev1.Service] {
	return func(yield func(*corev1.Service) bool) {
		nextIndex := make(map[string]int) // per output file, for kpt
		for _, f := range o.flapps {
			for svc := range f.plan.Services() {
				placeBeside(svc, f.flapp, nextIndex)
				if !yield(svc) {
					return
				}
			}
		}
	}
}

// ServiceRef is one Service of an Output, named, and where Service finds
// it again.
type ServiceRef struct {
	Namespace, Name string
	flapp, nth      int32
}

// Refs names every Service of Services, in its order.
func (o *Output) Refs() []ServiceRef {
	refs := make([]ServiceRef, 0, o.count)
	for i, f := range o.flapps {
		n := int32(0)
		for svc := range f.plan.Services() {
			refs = append(refs, ServiceRef{Namespace: svc.Namespace, Name: svc.Name, flapp: int32(i), nth: n})
			n++
		}
	}
	return refs
}

// Service is the Service ref names, freshly built, as Services gives it.
func (o *Output) Service(ref ServiceRef) *corev1.Service {
	return o.flapps[ref.flapp].plan.Service(int(ref.nth))
}

// sortFLApps puts the FLApps in output order.
func sortFLApps(flapps []*flapp) {
	slices.SortFunc(flapps, func(a, b *flapp) int {
		return cmp.Or(cmp.Compare(a.app.Namespace, b.app.Namespace), cmp.Compare(a.app.Name, b.app.Name))
	})
}
