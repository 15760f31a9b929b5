package fn

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The output's invariant: every Service this tool generated is one the
// fedlearner operator, given the FLApps of the same output, would make and
// claim (render.Plan.Misfits), and every Service an FLApp needs is there.
// The operator runs beside every FLApp: a Service it would not claim selects
// no pod, or makes it create its own and fail on the name, with exit 0.
// The run's own Services are made by one function per replica type and
// index: each type's first and last are checked (render.Plan.Edges), which
// keeps the check off the hot path. A build's are all checked, as its
// transformers left them.

// Change is a transformation of a kustomization in a build that can change
// a generated Service after the entry that made it: Field is namePrefix,
// nameSuffix, namespace, commonLabels, labels (with includeSelectors),
// patches, replacements, or transformers[i] (a transformer listed after an
// entry). Refusals name it.
type Change struct {
	Kustomization string // as messages name it
	Field         string
}

// SetChanges tells the run the changes of the build it reads as build (an
// Origin's Build), to name in its refusals.
func (r *Run) SetChanges(build string, changes []Change) {
	if r.changes == nil {
		r.changes = make(map[string][]Change)
	}
	r.changes[build] = changes
}

// builtService is a Service this tool generated, as a build's transformers
// left it: what the operator looks at, and where it was read.
type builtService struct {
	svc    *corev1.Service // name, namespace, the claim labels, the marker annotation, selector and ports only
	ref    *objectRef
	origin Origin
}

// addBuiltService records a generated Service of a build's output: only
// what the operator looks at (render.Plan.Misfits), read off the node, so
// that what a build adds besides (a large commonAnnotations value on every
// Service) is not held once per Service.
func (r *Run) addBuiltService(item *yaml.RNode, o Origin, key objectKey) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: key.name, Namespace: key.namespace,
		Labels:      map[string]string{},
		Annotations: map[string]string{render.AnnotationFLAppName: annotationOf(item, render.AnnotationFLAppName)},
	}}
	for _, label := range []string{render.LabelAppName, render.LabelRole} {
		if v := lookup(lookup(metadataOf(item), "labels"), label); v != nil && v.Kind == yaml.ScalarNode {
			svc.Labels[label] = v.Value
		}
	}
	spec := lookup(item.YNode(), "spec")
	if sel := lookup(spec, "selector"); sel != nil && sel.Kind == yaml.MappingNode {
		svc.Spec.Selector = make(map[string]string, len(sel.Content)/2)
		for i := 0; i+1 < len(sel.Content); i += 2 {
			svc.Spec.Selector[sel.Content[i].Value] = sel.Content[i+1].Value
		}
	}
	if ports := lookup(spec, "ports"); ports != nil {
		b, err := yaml.NewRNode(ports).MarshalJSON()
		if err == nil {
			err = json.Unmarshal(b, &svc.Spec.Ports)
		}
		if err != nil {
			r.results = append(r.results, itemError(o, refOf(item), "spec.ports", "not a Service's ports: "+err.Error()))
			return
		}
	}
	r.built[key] = &builtService{svc: svc, ref: refOf(item), origin: o}
}

// fitOptions plan a built FLApp only to compare its Services: the entry
// that made them applied its own configuration.
var fitOptions = render.Options{OwnerReferences: render.OwnerReferencesNever, MaxServicesPerFLApp: math.MaxInt64}

// checkFit checks the invariant over the run's own Services (out) and the
// built FLApps and Services, and returns the errors.
func (r *Run) checkFit(out *Output) Results {
	var results Results
	for _, f := range out.flapps {
		for _, n := range f.plan.Edges() {
			svc := f.plan.Service(n)
			for _, e := range f.plan.Misfits(n, svc) {
				results = append(results, misfitError(f.origin, nil, svc, f.flapp, e, "; this is a flapp-services bug: please report it"))
			}
		}
	}
	matched := make(map[objectKey]bool, len(r.built))
	for _, f := range r.builtFLApps {
		plan, errs := planOf(f, fitOptions)
		if results = append(results, errs...); len(errs) > 0 {
			continue
		}
		for n := range plan.Count() {
			want := plan.Service(n)
			key := objectKey{want.Namespace, want.Name}
			got := r.built[key]
			if got == nil {
				results = append(results, objectError(f.origin, f.ref, "", nil, fmt.Sprintf(
					"FLApp %s needs Service %s, which the build's output lacks%s",
					objectKey{f.app.Namespace, f.app.Name}, key, r.changedBy(f.origin.Build, allChanges))))
				continue
			}
			matched[key] = true
			for _, e := range plan.Misfits(n, got.svc) {
				results = append(results, misfitError(got.origin, got.ref, got.svc, f, e, r.changedBy(got.origin.Build, changesOf(e.Field))))
			}
		}
	}
	for _, key := range slices.SortedFunc(maps.Keys(r.built), compareKeys) {
		if matched[key] {
			continue
		}
		got := r.built[key]
		owner := objectKey{key.namespace, got.svc.Annotations[render.AnnotationFLAppName]}
		why := fmt.Sprintf("its FLApp %s is not in the output", owner)
		if f := r.builtByKey[owner]; f != nil {
			why = fmt.Sprintf("FLApp %s makes no Service of that name (its replicas or replica types changed)", owner)
		}
		results = append(results, objectError(got.origin, got.ref, "metadata.name", key.name, fmt.Sprintf(
			"Service %s was generated by flapp-services, but no FLApp of the output would make it: %s; the operator would neither claim nor replace it%s",
			key, why, r.changedBy(got.origin.Build, allChanges))))
	}
	return results
}

// misfitError is a generated Service the operator would not make or claim
// as it is: the Service, its FLApp, the field, and what to do (then).
func misfitError(o Origin, ref *objectRef, svc *corev1.Service, f *flapp, e *field.Error, then string) *Result {
	if ref == nil {
		ref = &objectRef{TypeMeta: yaml.TypeMeta{APIVersion: "v1", Kind: "Service"}}
		ref.Name, ref.Namespace = svc.Name, svc.Namespace
	}
	what := "missing"
	var value any
	if e.Type != field.ErrorTypeRequired {
		what = fmt.Sprintf("%q", fmt.Sprint(e.BadValue))
		value = shorten(fmt.Sprint(e.BadValue), MaxValue)
	}
	return objectError(o, ref, e.Field, value, fmt.Sprintf(
		"%s, a Service of FLApp %s, would not work beside the fedlearner operator: %s%s",
		what, objectKey{f.app.Namespace, f.app.Name}, e.Detail, then))
}

// The kustomization fields that can change each part of a Service.
var (
	allChanges = []string{"namePrefix", "nameSuffix", "commonLabels", "labels", "patches", "replacements"}
	fieldsBy   = map[string][]string{
		"metadata.name":             {"namePrefix", "nameSuffix", "patches", "replacements"},
		"metadata.labels[app-name]": {"namePrefix", "nameSuffix", "commonLabels", "labels", "patches", "replacements"},
		"metadata.namespace":        {"namespace", "patches", "replacements"},
		"metadata.labels[role]":     {"commonLabels", "labels", "patches", "replacements"},
		"spec.selector":             {"namePrefix", "nameSuffix", "commonLabels", "labels", "patches", "replacements"},
		"spec.ports":                {"patches", "replacements"},
	}
)

func changesOf(fieldPath string) []string {
	for prefix, fields := range fieldsBy {
		if fieldPath == prefix || strings.HasPrefix(fieldPath, prefix+".") || strings.HasPrefix(fieldPath, prefix+"[") {
			return fields
		}
	}
	return allChanges
}

// changedBy names the changes of the build that can have made the misfit,
// and the fix: run the entry after them.
func (r *Run) changedBy(build string, fields []string) string {
	if build == "" {
		return ""
	}
	var names []string
	var last string
	for _, c := range r.changes[build] {
		if slices.Contains(fields, c.Field) || strings.HasPrefix(c.Field, "transformers[") {
			names = append(names, c.Field+" in "+c.Kustomization)
			last = c.Kustomization
		}
	}
	if len(names) == 0 {
		return "; a transformation ran after the flapp-services entry that made it: list the entry after it, in the kustomization that applies it"
	}
	return fmt.Sprintf("; changed after the flapp-services entry that made it, by %s: list the flapp-services entry in the transformers of %s, after that change",
		abbreviate(names), last)
}

func compareKeys(a, b objectKey) int {
	if c := strings.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}
