package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// What the fedlearner operator does with a Service, read in its code
// (bytedance/fedlearner 3697d82, deploy/kubernetes_operator/pkg/operator):
// it labels each replica's pod (GenLabels in util.go, pod.go), claims every
// Service labelled with its FLApp's app-name and role (ClaimServices in
// service.go and controller_ref_manager.go), and creates the replica's
// Service by name when none of its claimed Services has it. A Service works
// beside it only when it is the one it would create and claim.

// PodLabels is what the operator labels the pod of one replica with: the
// pod template's labels, then app-name (the FLApp's name, '/' replaced by
// '-'), role and fl-replica-type (lower case) and fl-replica-index, which
// win over the template's.
func PodLabels(app *FLApp, replicaType string, index int) map[string]string {
	spec := app.Spec.FLReplicaSpecs[replicaType]
	labels := make(map[string]string, len(spec.Template.Labels)+4)
	maps.Copy(labels, spec.Template.Labels)
	maps.Copy(labels, operatorLabels(app, replicaType, index))
	return labels
}

func operatorLabels(app *FLApp, replicaType string, index int) map[string]string {
	return map[string]string{
		LabelAppName:      strings.ReplaceAll(app.Name, "/", "-"),
		LabelRole:         strings.ToLower(app.Spec.Role),
		LabelReplicaType:  strings.ToLower(replicaType),
		LabelReplicaIndex: strconv.Itoa(index),
	}
}

// selectorKeys are the labels a Service's selector must name: without one,
// it selects the pods of other replicas too.
var selectorKeys = []string{LabelAppName, LabelRole, LabelReplicaType, LabelReplicaIndex}

// Misfits lists every way got, found where the n-th Service of the plan
// belongs, is not the Service the operator would make for that replica and
// claim: its name and namespace, the labels the operator claims by, a
// selector that names the four labels and holds only labels of the
// replica's pod, and the ports of its tensorflow container. Other labels
// and annotations do not matter. Paths are the Service's fields.
func (p *Plan) Misfits(n int, got *corev1.Service) field.ErrorList {
	t, index, ok := p.replica(n)
	if !ok {
		return field.ErrorList{field.NotFound(field.NewPath("metadata", "name"), got.Name)}
	}
	var errs field.ErrorList
	meta, spec := field.NewPath("metadata"), field.NewPath("spec")
	if want := ServiceName(p.app.Name, p.role, t.name, index); got.Name != want {
		errs = append(errs, field.Invalid(meta.Child("name"), got.Name,
			fmt.Sprintf("the operator names this replica's Service %s and creates that one when it claims none of the name", want)))
	}
	if got.Namespace != p.app.Namespace {
		errs = append(errs, field.Invalid(meta.Child("namespace"), got.Namespace,
			fmt.Sprintf("the operator creates and claims Services only in its FLApp's namespace, %q", p.app.Namespace)))
	}
	appName, lowerType, indexValue := strings.ReplaceAll(p.app.Name, "/", "-"), strings.ToLower(t.name), strconv.Itoa(index)
	if got.Labels[LabelAppName] != appName || got.Labels[LabelRole] != p.role {
		own := operatorLabels(p.app, t.name, index)
		for _, key := range []string{LabelAppName, LabelRole} {
			if v, ok := got.Labels[key]; !ok || v != own[key] {
				errs = append(errs, field.Invalid(meta.Child("labels").Key(key), got.Labels[key],
					fmt.Sprintf("the operator claims only Services labelled %s: %s, %s: %s", LabelAppName, own[LabelAppName], LabelRole, own[LabelRole])))
			}
		}
	}
	// The pod's label of key: the operator's four win over the template's.
	podLabel := func(key string) (string, bool) {
		switch key {
		case LabelAppName:
			return appName, true
		case LabelRole:
			return p.role, true
		case LabelReplicaType:
			return lowerType, true
		case LabelReplicaIndex:
			return indexValue, true
		}
		v, ok := p.app.Spec.FLReplicaSpecs[t.name].Template.Labels[key]
		return v, ok
	}
	for _, key := range selectorKeys {
		if _, ok := got.Spec.Selector[key]; !ok {
			errs = append(errs, field.Required(spec.Child("selector").Key(key),
				fmt.Sprintf("without it the Service selects other replicas' pods too; the operator's selector is %s", showLabels(operatorLabels(p.app, t.name, index)))))
		}
	}
	selects := func(key string) bool {
		v, ok := podLabel(key)
		return ok && v == got.Spec.Selector[key]
	}
	for key := range got.Spec.Selector {
		if selects(key) {
			continue
		}
		// Only now sorted, for a stable order of the errors.
		pod := PodLabels(p.app, t.name, index)
		for _, key := range slices.Sorted(maps.Keys(got.Spec.Selector)) {
			if !selects(key) {
				errs = append(errs, field.Invalid(spec.Child("selector").Key(key), got.Spec.Selector[key],
					fmt.Sprintf("the operator labels this replica's pod %s: the Service selects no pod", showLabels(pod))))
			}
		}
		break
	}
	if !samePorts(got.Spec.Ports, t.ports) {
		errs = append(errs, field.Invalid(spec.Child("ports"), showPorts(got.Spec.Ports),
			fmt.Sprintf("the %s container's ports make %s", ContainerName, showPorts(t.ports))))
	}
	return errs
}

// Edges are the numbers, in Services' order, of each replica type's first
// and last Service: those a check of the plan's own Services looks at. The
// others are made by the same code and differ from them by the index alone.
func (p *Plan) Edges() []int {
	var edges []int
	n := 0
	for _, t := range p.types {
		if t.replicas > 0 {
			edges = append(edges, n)
			if t.replicas > 1 {
				edges = append(edges, n+int(t.replicas)-1)
			}
		}
		n += int(t.replicas)
	}
	return edges
}

// replica is the replica type and index of the n-th Service of the plan.
func (p *Plan) replica(n int) (replicaType, int, bool) {
	for _, t := range p.types {
		if n < int(t.replicas) {
			return t, n, n >= 0
		}
		n -= int(t.replicas)
	}
	return replicaType{}, 0, false
}

// samePorts compares Service ports as the API server defaults them (an
// empty protocol is TCP).
func samePorts(got, want []corev1.ServicePort) bool {
	return slices.EqualFunc(got, want, func(a, b corev1.ServicePort) bool {
		return a.Name == b.Name && a.Port == b.Port && a.TargetPort == b.TargetPort && protocolOf(a) == protocolOf(b)
	})
}

func protocolOf(p corev1.ServicePort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

func showPorts(ports []corev1.ServicePort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("%s %d/%s -> %s", p.Name, p.Port, protocolOf(p), p.TargetPort.String())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func showLabels(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+": "+labels[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
