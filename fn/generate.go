package fn

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Generate renders the Services of every FLApp in items and merges them with
// the rest: earlier generated Services are replaced or pruned, foreign ones
// are never touched. The results are errors when anything is wrong, and
// otherwise describe what was generated and pruned.
func Generate(items []*yaml.RNode, cfg Config) (*Output, framework.Results) {
	inv := scan(items)
	results := inv.results
	opts := cfg.options()
	if r := checkServiceCeiling(inv.flapps, cfg.MaxServices, opts.MaxServicesPerFLApp); r != nil {
		return nil, capErrors(append(onlyErrors(results), r)) // nothing was generated or pruned
	}

	out := &Output{Kept: inv.kept}
	owners := make(map[objectKey]*flapp) // every generated Service's FLApp
	nextIndex := make(map[string]int)    // per output file, for kpt
	var unknownUID []string
	for _, f := range inv.flapps {
		services, errs := render.Services(f.app, opts)
		for _, e := range errs {
			results = append(results, validationError(f, e))
		}
		if len(errs) > 0 {
			continue
		}
		if f.app.UID == "" && opts.OwnerReferences == render.OwnerReferencesIfKnown && len(services) > 0 {
			unknownUID = append(unknownUID, objectKey{f.app.Namespace, f.app.Name}.String())
		}
		if collision := claimNames(services, f, owners, inv.foreign); collision != "" {
			results = append(results, objectError(refOf(f.node), f.file, "", collision))
			continue
		}
		placeBeside(services, f, nextIndex)
		out.Services = append(out.Services, services...)
		results = append(results, flappInfo(f, fmt.Sprintf("generated %d Service(s)%s", len(services), ownerNote(services))))
	}
	if results.ExitCode() != 0 {
		return nil, capErrors(onlyErrors(results)) // nothing was generated or pruned
	}
	results = append(results, pairWarnings(inv.flapps)...)

	for key, svc := range inv.previous {
		if owners[key] == nil {
			results = append(results, pruneNote(svc, key, pruneReason(svc, inv)))
		}
	}
	if len(unknownUID) > 0 {
		results = append(results, runInfo(fmt.Sprintf("owner references omitted for %d FLApp(s) whose metadata.uid is not in the input (%s): "+
			"render from a live export (kubectl get flapps -o yaml) to set them; until then the GitOps engine's own tracking prunes these Services",
			len(unknownUID), abbreviate(unknownUID, 10))))
	}
	return out, results
}

// claimNames records f as the owner of its Services' names, or says why a
// name cannot be its: another FLApp generates it too, or a Service this tool
// did not generate already holds it.
func claimNames(services []corev1.Service, f *flapp, owners map[objectKey]*flapp, foreign map[objectKey]*yaml.RNode) string {
	for i := range services {
		key := objectKey{services[i].Namespace, services[i].Name}
		if firstOwner := owners[key]; firstOwner != nil {
			return fmt.Sprintf("Service %s would be generated for both FLApp %s and FLApp %s: rename one of them",
				key, f.app.Name, firstOwner.app.Name)
		}
		if svc := foreign[key]; svc != nil {
			return fmt.Sprintf("Service %s would be generated for FLApp %s, but the input already holds a Service of that name that flapp-services did not generate%s; it is left as it is: remove or rename it, or rename the FLApp",
				key, f.app.Name, inFile(svc))
		}
		owners[key] = f
	}
	return ""
}

// abbreviate lists at most n names, so 500 FLApps make one readable line.
func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

func pruneReason(svc *yaml.RNode, inv *inventory) string {
	owner := objectKey{metaString(svc, "namespace"), annotationOf(svc, render.AnnotationFLAppName)}
	f := inv.byKey[owner]
	if f == nil {
		return fmt.Sprintf("its FLApp %s is no longer in the input", owner)
	}
	if strings.ToLower(f.app.Spec.Role) != labelOf(svc, render.LabelRole) {
		return fmt.Sprintf("the role of FLApp %s is now %s", owner, f.app.Spec.Role)
	}
	for name, spec := range f.app.Spec.FLReplicaSpecs {
		if strings.ToLower(name) == labelOf(svc, render.LabelReplicaType) {
			return fmt.Sprintf("replica index %s is not below replicas (%d) of %s in FLApp %s",
				labelOf(svc, render.LabelReplicaIndex), render.Replicas(spec), name, owner)
		}
	}
	return fmt.Sprintf("replica type %q is no longer in FLApp %s", labelOf(svc, render.LabelReplicaType), owner)
}

// placeBeside gives generated Services a path annotation next to their FLApp's
// file, so kpt writes them to <dir>/<flapp>.services.yaml. Two FLApps of the
// same name in one directory (leader and follower namespaces) share that file,
// so indexes count per file: kpt rejects a repeated path and index. Without a
// path on the FLApp (kustomize, render mode) Services get none.
func placeBeside(services []corev1.Service, f *flapp, nextIndex map[string]int) {
	if f.file == "" {
		return
	}
	file := path.Join(path.Dir(f.file), f.app.Name+".services.yaml")
	for i := range services {
		services[i].Annotations[kioutil.PathAnnotation] = file
		services[i].Annotations[kioutil.IndexAnnotation] = strconv.Itoa(nextIndex[file])
		nextIndex[file]++
	}
}

func ownerNote(services []corev1.Service) string {
	if len(services) > 0 && len(services[0].OwnerReferences) > 0 {
		return " owned by UID " + string(services[0].OwnerReferences[0].UID)
	}
	return ""
}

func inFile(node *yaml.RNode) string {
	if p := fileAnnotation(node); p != "" {
		return " (in " + p + ")"
	}
	return ""
}
