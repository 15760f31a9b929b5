package fn

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// Finish checks and plans the Services of every FLApp added, and decides
// what happens to the Services earlier runs generated: replaced, or pruned.
// The results are errors when anything is wrong (then the Output is nil and
// nothing may be written but the errors), and otherwise describe what was
// generated and pruned, sorted.
func (r *Run) Finish(cfg Config) (*Output, Results) {
	results := r.results
	opts := cfg.options()
	sortFLApps(r.flapps)
	if res := checkServiceCeiling(r.flapps, cfg.MaxServices, opts.MaxServicesPerFLApp); res != nil {
		return nil, finish(capErrors(append(onlyErrors(results), res))) // nothing was generated or pruned
	}

	out := &Output{}
	names := newNameClaims(r.foreign)
	var unknownUID []string
	for _, f := range r.flapps {
		plan, errs := planOf(f, opts)
		if results = append(results, errs...); len(errs) > 0 {
			continue
		}
		if plan.UID() == "" && opts.OwnerReferences == render.OwnerReferencesIfKnown && plan.Count() > 0 {
			unknownUID = append(unknownUID, objectKey{f.app.Namespace, f.app.Name}.String())
		}
		if collision := names.claim(f); collision != "" {
			results = append(results, objectError(f.origin, f.ref, "", nil, collision))
			continue
		}
		out.flapps = append(out.flapps, plannedFLApp{f, plan})
		out.count += plan.Count()
		results = append(results, flappInfo(f, fmt.Sprintf("generated %d Service(s)%s", plan.Count(), ownerNote(plan))))
	}
	results = append(results, r.checkFit(out)...)
	if results.ExitCode() != 0 {
		return nil, finish(capErrors(onlyErrors(results))) // nothing was generated or pruned
	}
	results = append(results, r.pairWarnings()...)

	for key, svc := range r.previous {
		if !names.generates(key) {
			results = append(results, pruneNote(svc, key, r.pruneReason(svc, key)))
		}
	}
	if len(unknownUID) > 0 {
		results = append(results, runInfo(fmt.Sprintf("owner references omitted for %d FLApp(s) whose metadata.uid is not in the input (%s): "+
			"render from a live export (kubectl get flapps -o yaml) to set them; until then the GitOps engine's own tracking prunes these Services",
			len(unknownUID), abbreviate(unknownUID))))
	}
	return out, finish(results)
}

// planOf plans f's Services, or says why it cannot: render's validation
// errors, as results at f.
func planOf(f *flapp, opts render.Options) (*render.Plan, Results) {
	plan, errs := render.NewPlan(f.app, opts)
	var results Results
	for _, e := range errs {
		results = append(results, validationError(f, e))
	}
	return plan, results
}

func finish(results Results) Results {
	results.Sort()
	return results
}

// nameClaims knows which Service names the run generates without listing
// them: every name is <prefix><index> with prefix <flapp>-<role>-<type>- and
// a decimal index below the type's replicas. Since a prefix ends in the last
// '-' of the name, two names are equal only when prefix and index are.
type nameClaims struct {
	byPrefix map[objectKey]claim  // namespace, prefix
	foreign  map[objectKey][]int  // foreign Services by namespace and prefix: their indexes
	origins  map[objectKey]Origin // foreign Service -> where it was read
}

type claim struct {
	owner    *flapp
	replicas int32
}

func newNameClaims(foreign map[objectKey]Origin) *nameClaims {
	c := &nameClaims{byPrefix: make(map[objectKey]claim), foreign: make(map[objectKey][]int), origins: foreign}
	for key := range foreign {
		if prefix, index, ok := splitServiceName(key); ok {
			c.foreign[prefix] = append(c.foreign[prefix], index)
		}
	}
	return c
}

// splitServiceName splits a name into the prefix and index a generated name
// would have, when it has that shape.
func splitServiceName(key objectKey) (objectKey, int, bool) {
	at := strings.LastIndexByte(key.name, '-')
	digits := key.name[at+1:]
	if at < 0 || digits == "" || len(digits) > 1 && digits[0] == '0' || len(digits) > 10 || strings.Trim(digits, "0123456789") != "" {
		return objectKey{}, 0, false
	}
	index, err := strconv.Atoi(digits)
	if err != nil {
		return objectKey{}, 0, false
	}
	return objectKey{key.namespace, key.name[:at+1]}, index, true
}

// claim records f's Services as its own, or says why a name cannot be its:
// another FLApp generates it too, or a Service this tool did not generate
// already holds it. Names are checked in output order, so the first one
// reported is the one a reader meets first.
func (c *nameClaims) claim(f *flapp) string {
	role := f.app.Spec.Role
	for _, typeName := range sortedTypes(f.app) {
		replicas := render.Replicas(f.app.Spec.FLReplicaSpecs[typeName])
		if replicas <= 0 {
			continue
		}
		prefix := objectKey{f.app.Namespace, strings.TrimSuffix(render.ServiceName(f.app.Name, role, typeName, 0), "0")}
		if first, taken := c.byPrefix[prefix]; taken && first.owner != f {
			key := objectKey{prefix.namespace, prefix.name + "0"}
			return fmt.Sprintf("Service %s would be generated for both FLApp %s and FLApp %s: rename one of them",
				key, f.app.Name, first.owner.app.Name)
		}
		if index, found := c.lowestForeign(prefix, replicas); found {
			key := objectKey{prefix.namespace, prefix.name + strconv.Itoa(index)}
			return fmt.Sprintf("Service %s would be generated for FLApp %s, but the input already holds a Service of that name that flapp-services did not generate%s; it is left as it is: remove or rename it, or rename the FLApp",
				key, f.app.Name, inFile(c.origins[key]))
		}
		c.byPrefix[prefix] = claim{f, replicas}
	}
	return ""
}

func (c *nameClaims) lowestForeign(prefix objectKey, replicas int32) (int, bool) {
	lowest, found := 0, false
	for _, i := range c.foreign[prefix] {
		if i < int(replicas) && (!found || i < lowest) {
			lowest, found = i, true
		}
	}
	return lowest, found
}

// generates tells whether the run generates a Service of this name.
func (c *nameClaims) generates(key objectKey) bool {
	prefix, index, ok := splitServiceName(key)
	if !ok {
		return false
	}
	cl, found := c.byPrefix[prefix]
	return found && index < int(cl.replicas)
}

func sortedTypes(app *render.FLApp) []string {
	names := make([]string, 0, len(app.Spec.FLReplicaSpecs))
	for name := range app.Spec.FLReplicaSpecs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// abbreviate lists at most MaxNamed names, and counts the rest.
func abbreviate(names []string) string {
	if len(names) <= MaxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:MaxNamed], ", "), len(names)-MaxNamed)
}

func (r *Run) pruneReason(svc *previousService, key objectKey) string {
	owner := objectKey{key.namespace, svc.flappName}
	f := r.byKey[owner]
	if f == nil {
		return fmt.Sprintf("its FLApp %s is no longer in the input", owner)
	}
	if strings.ToLower(f.app.Spec.Role) != svc.role {
		return fmt.Sprintf("the role of FLApp %s is now %s", owner, f.app.Spec.Role)
	}
	// Of types that differ only in case, at most one has Services (render
	// refuses two): name that one, whose replicas decide.
	found, typeName, replicas := false, "", int32(0)
	for _, name := range sortedTypes(f.app) {
		if n := render.Replicas(f.app.Spec.FLReplicaSpecs[name]); strings.ToLower(name) == svc.replicaType && (!found || n > replicas) {
			found, typeName, replicas = true, name, n
		}
	}
	if !found {
		return fmt.Sprintf("replica type %q is no longer in FLApp %s", svc.replicaType, owner)
	}
	return fmt.Sprintf("replica index %s is not below replicas (%d) of %s in FLApp %s", svc.index, replicas, typeName, owner)
}

// placeBeside gives a generated Service a path annotation next to its FLApp's
// file, so kpt writes it to <dir>/<flapp>.services.yaml. Two FLApps of the
// same name in one directory (leader and follower namespaces) share that file,
// so indexes count per file: kpt rejects a repeated path and index. An FLApp
// without a path annotation (kustomize, and render mode, whose reader keeps
// an object's file beside it) gives Services without one.
func placeBeside(svc *corev1.Service, f *flapp, nextIndex map[string]int) {
	if f.path == "" {
		return
	}
	file := path.Join(path.Dir(f.path), f.app.Name+".services.yaml")
	svc.Annotations[kioutil.PathAnnotation] = file
	svc.Annotations[kioutil.IndexAnnotation] = strconv.Itoa(nextIndex[file])
	nextIndex[file]++
}

func ownerNote(plan *render.Plan) string {
	if uid := plan.UID(); uid != "" && plan.Count() > 0 {
		return " owned by UID " + uid
	}
	return ""
}

func inFile(o Origin) string {
	if where := o.String(); where != "" && o.File != "" {
		return " (in " + where + ")"
	}
	return ""
}
