package kustomize

import (
	"fmt"
	"math"
	"time"

	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/api/types"
)

// Limits bound a build before it runs, and its output after. Zero means
// the default.
type Limits struct {
	MaxDocumentNodes int           // any YAML document the build parses, aliases expanded
	MaxObjectNodes   int           // any object of a resource file, aliases expanded
	MaxBuilds        int64         // kustomization builds, each base once per way it is reached
	MaxCost          int64         // the build's estimated cost (Cost.Work)
	MaxOutput        int64         // bytes of the build's output, estimated before and counted after
	MaxTime          time.Duration // the build's wall-clock deadline, a backstop to the estimate
}

// Defaults of the build's ceilings. DefaultMaxCost is about half of Argo
// CD's manifest generation deadline on a 2-core machine, the cost model
// calibrated against kustomize as SECURITY.md says; DefaultMaxOutput is
// twice the input a render reads; DefaultMaxTime, a backstop, leaves a
// quarter of Argo CD's deadline to the render after the build.
const (
	DefaultMaxBuilds int64 = 1000
	DefaultMaxCost   int64 = 30_000_000
	DefaultMaxOutput int64 = 64 << 20
	DefaultMaxTime         = 45 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.MaxDocumentNodes == 0 {
		l.MaxDocumentNodes = math.MaxInt // the caller's ceiling, or none
	}
	if l.MaxObjectNodes == 0 {
		l.MaxObjectNodes = math.MaxInt
	}
	if l.MaxBuilds == 0 {
		l.MaxBuilds = DefaultMaxBuilds
	}
	if l.MaxCost == 0 {
		l.MaxCost = DefaultMaxCost
	}
	if l.MaxOutput == 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.MaxTime == 0 {
		l.MaxTime = DefaultMaxTime
	}
	return l
}

// The cost model, in units of kustomize's work (SECURITY.md has the
// measurements behind each weight). kustomize's build of one kustomization
// grows with the square of its objects (its resource map looks objects up
// by scanning), and every transformer, patch or replacement visits each
// object; with origin annotations, which a kustomization may ask for
// (buildMetadata), a visit costs far more, and the weights assume them, so
// the model overestimates a build without them. A build of a base reached
// twice is two builds.
const (
	costPerObjectPair   = 2
	costPerTransformHit = 1600
	costPerBuild        = 2000
)

// Cost is what a build is estimated to cost, from its kustomization files
// and resource files alone. Every count saturates rather than overflows.
type Cost struct {
	Objects int64 // objects the build outputs
	Builds  int64 // kustomization builds
	Work    int64 // in the cost model's units
	Bytes   int64 // of output
}

const saturated = int64(1) << 60

func sat(a int64) int64 { return min(a, saturated) }

func mul(a, b int64) int64 {
	if a != 0 && b > saturated/a {
		return saturated
	}
	return sat(a * b)
}

// add adds what a base, a component or a file of resources brings.
func (c *Cost) add(o Cost) {
	c.Objects = sat(c.Objects + o.Objects)
	c.Builds = sat(c.Builds + o.Builds)
	c.Work = sat(c.Work + o.Work)
	c.Bytes = sat(c.Bytes + o.Bytes)
}

// finish adds the kustomization's own build, once its objects are
// counted: transforms visits of each, and metadata bytes added to each.
func (c *Cost) finish(transforms, metadata int64) {
	n := c.Objects
	c.Work = sat(c.Work + mul(mul(n, n), costPerObjectPair) + mul(mul(n, transforms), costPerTransformHit) + costPerBuild)
	c.Bytes = sat(c.Bytes + mul(n, metadata))
}

// checkCost records the ceilings the estimated cost passes.
func (b *Root) checkCost(chain *chain) {
	c, l := b.Cost, b.limits
	switch {
	case b.unread:
		b.problem(chain, "", "the build reaches more than %d kustomizations, each built at least once, over the ceiling of %d kustomization builds (--max-build-count)", l.MaxBuilds, l.MaxBuilds)
	case c.Builds > l.MaxBuilds:
		b.problem(chain, "", "the build runs %s kustomization builds (a base is built once for each way it is reached), over the ceiling of %d (--max-build-count)", count(c.Builds), l.MaxBuilds)
	}
	if c.Work > l.MaxCost {
		b.problem(chain, "", "the build's estimated cost is %s (%s objects, %s kustomization builds), over the build budget, a ceiling of %d (--max-build-cost): kustomize's time grows with the square of the objects and with every transformer over them; split the application, or raise the budget and Argo CD's timeout together",
			count(c.Work), count(c.Objects), count(c.Builds), l.MaxCost)
	}
	if c.Bytes > l.MaxOutput {
		b.problem(chain, "", "the build's output is estimated at %s bytes (names, labels and annotations added to each of %s objects), over the ceiling of %s (--max-build-output)", count(c.Bytes), count(c.Objects), repofs.Size(l.MaxOutput))
	}
}

func count(n int64) string {
	if n >= saturated {
		return "over 10^18"
	}
	return fmt.Sprint(n)
}

// builtinTransforms counts the transformations a kustomization's own
// fields make, each of which visits every object of its build.
func builtinTransforms(k *types.Kustomization) int64 {
	n := int64(len(k.Patches) + len(k.PatchesStrategicMerge) + len(k.PatchesJson6902) + //nolint:staticcheck // kustomize v5 still applies them
		len(k.Replacements) + len(k.Labels) + len(k.Images) + len(k.Replicas) + len(k.Vars)) //nolint:staticcheck // and vars
	for _, set := range []bool{k.NamePrefix != "", k.NameSuffix != "", k.Namespace != "", len(k.CommonLabels) > 0, len(k.CommonAnnotations) > 0} { //nolint:staticcheck // commonLabels too
		if set {
			n++
		}
	}
	return n
}

// metadataBytes is about what a kustomization's own fields add to each
// object: names (in the object and where it is referred to), labels (in
// metadata, selectors and templates) and annotations (in metadata and
// templates).
func metadataBytes(k *types.Kustomization) int64 {
	n := int64(2 * (len(k.NamePrefix) + len(k.NameSuffix)))
	n += int64(len(k.Namespace))
	for key, v := range k.CommonLabels { //nolint:staticcheck // kustomize v5 still applies them
		n += int64(3 * (len(key) + len(v) + 4))
	}
	for _, l := range k.Labels {
		for key, v := range l.Pairs {
			n += int64(3 * (len(key) + len(v) + 4))
		}
	}
	for key, v := range k.CommonAnnotations {
		n += int64(2 * (len(key) + len(v) + 4))
	}
	return n
}
