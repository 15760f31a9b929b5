package render

import (
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rolePattern is the FLApp CRD's own pattern for spec.role.
var rolePattern = regexp.MustCompile(`^Leader$|^Follower\d*$`)

var supportedProtocols = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}

// replicaType is one validated entry of spec.flReplicaSpecs.
type replicaType struct {
	name     string // as written in the FLApp, e.g. "Worker"
	replicas int32
	ports    []corev1.ServicePort
}

// Plan is a validated FLApp: everything needed to emit its Services,
// computed and checked before any per-Service work, so a huge replica count
// fails fast and the Services can be produced one at a time.
type Plan struct {
	app   *FLApp
	role  string // lower-cased
	types []replicaType
	owner []metav1.OwnerReference
	count int
}

// NewPlan validates app and plans its Services. With errors it returns no
// plan: a partial render must never be applied.
func NewPlan(app *FLApp, opts Options) (*Plan, field.ErrorList) {
	p, errs := newPlan(app, opts.withDefaults())
	if len(errs) > 0 {
		return nil, errs
	}
	for _, t := range p.types {
		p.count += int(t.replicas)
	}
	return p, nil
}

// Services renders the Services the operator would create for app, in a
// stable order (replica type, then index). It returns no Service at all when
// the FLApp is invalid. Services of one replica type share their Ports and
// OwnerReferences: treat them as read-only.
func Services(app *FLApp, opts Options) ([]corev1.Service, field.ErrorList) {
	p, errs := NewPlan(app, opts)
	if len(errs) > 0 {
		return nil, errs
	}
	out := make([]corev1.Service, 0, p.count)
	for svc := range p.Services() {
		out = append(out, *svc)
	}
	return out, nil
}

// Validate reports every problem that would stop app from rendering.
func Validate(app *FLApp, opts Options) field.ErrorList {
	_, errs := newPlan(app, opts.withDefaults())
	return errs
}

// Count is how many Services the plan produces.
func (p *Plan) Count() int { return p.count }

// UID is the owner UID the Services carry, or "" when they carry none.
func (p *Plan) UID() string {
	if len(p.owner) == 0 {
		return ""
	}
	return string(p.owner[0].UID)
}

// ServiceCount is how many Services app would produce (0 for negative or
// missing replicas), computed without rendering.
func ServiceCount(app *FLApp) int64 {
	var n int64
	for _, spec := range app.Spec.FLReplicaSpecs {
		if r := Replicas(spec); r > 0 {
			n += int64(r)
		}
	}
	return n
}

// ServiceName is the operator's name for the Service of one replica.
func ServiceName(appName, role, replicaType string, index int) string {
	return appName + "-" + strings.ToLower(role) + "-" + strings.ToLower(replicaType) + "-" + strconv.Itoa(index)
}

// Replicas applies the operator's default: absent replicas means 1 for a
// paired type and 0 otherwise.
func Replicas(spec ReplicaSpec) int32 {
	if spec.Replicas != nil {
		return *spec.Replicas
	}
	if spec.Pair != nil && *spec.Pair {
		return 1
	}
	return 0
}

func newPlan(app *FLApp, opts Options) (*Plan, field.ErrorList) {
	var errs field.ErrorList
	p := &Plan{app: app, role: strings.ToLower(app.Spec.Role)}
	meta := field.NewPath("metadata")
	spec := field.NewPath("spec")

	nameOK := true
	if app.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "an FLApp needs a name"))
		nameOK = false
	} else {
		if msgs := validation.IsDNS1035Label(app.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(meta.Child("name"), app.Name,
				"the FLApp name starts every Service name, so it must be a DNS-1035 label: "+strings.Join(msgs, "; ")))
			nameOK = false
		}
		if msgs := validation.IsValidLabelValue(app.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(meta.Child("name"), app.Name,
				"the FLApp name is the value of the app-name label: "+strings.Join(msgs, "; ")))
			nameOK = false
		}
	}

	roleOK := rolePattern.MatchString(app.Spec.Role)
	switch {
	case app.Spec.Role == "":
		errs = append(errs, field.Required(spec.Child("role"), "must be Leader or Follower[N]"))
	case !roleOK:
		errs = append(errs, field.Invalid(spec.Child("role"), app.Spec.Role, "must match "+rolePattern.String()))
	}

	if app.Spec.FLReplicaSpecs == nil {
		errs = append(errs, field.Required(spec.Child("flReplicaSpecs"), "an FLApp needs at least one replica type"))
	}

	switch opts.OwnerReferences {
	case OwnerReferencesNever:
	case OwnerReferencesIfKnown, OwnerReferencesRequired:
		if app.UID != "" {
			p.owner = []metav1.OwnerReference{{
				APIVersion:         APIVersion,
				Kind:               Kind,
				Name:               app.Name,
				UID:                app.UID,
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}}
		} else if opts.OwnerReferences == OwnerReferencesRequired {
			errs = append(errs, field.Required(meta.Child("uid"),
				"ownerReferences is Required but the FLApp's UID is unknown: render from a live export (kubectl get flapp -o yaml)"))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("ownerReferences"), opts.OwnerReferences, OwnerReferencePolicies))
	}

	// Check the total before anything proportional to it is allocated.
	if n := ServiceCount(app); n > opts.MaxServicesPerFLApp {
		errs = append(errs, field.Invalid(spec.Child("flReplicaSpecs"), n,
			fmt.Sprintf("the FLApp would produce %d Services, more than maxServicesPerFLApp (%d)", n, opts.MaxServicesPerFLApp)))
	}

	names := make([]string, 0, len(app.Spec.FLReplicaSpecs))
	for name := range app.Spec.FLReplicaSpecs {
		names = append(names, name)
	}
	sort.Strings(names)
	byLower := make(map[string]string, len(names))
	for _, name := range names {
		path := spec.Child("flReplicaSpecs").Key(name)
		rt, typeErrs := checkReplicaType(app, name, path, nameOK && roleOK)
		errs = append(errs, typeErrs...)
		p.types = append(p.types, rt)
		// Service names and the fl-replica-type label are lower case: two
		// types that differ only in case would claim the same Services.
		lower := strings.ToLower(name)
		if first, dup := byLower[lower]; dup && min(rt.replicas, Replicas(app.Spec.FLReplicaSpecs[first])) > 0 {
			e := field.Duplicate(path, name)
			e.Detail = fmt.Sprintf("replica types %s and %s differ only in case, so both would generate the Services %s: rename or merge one of them",
				first, name, ServiceName(app.Name, app.Spec.Role, lower, 0)+", ...")
			errs = append(errs, e)
		} else if !dup {
			byLower[lower] = name
		}
	}
	return p, errs
}

func checkReplicaType(app *FLApp, name string, path *field.Path, prefixOK bool) (replicaType, field.ErrorList) {
	var errs field.ErrorList
	spec := app.Spec.FLReplicaSpecs[name]
	rt := replicaType{name: name, replicas: Replicas(spec)}

	// The type is the middle of every Service name and the fl-replica-type
	// label value: check its characters as a label value and inside a minimal
	// DNS-1035 name, then the length with the real, longest name.
	lower := strings.ToLower(name)
	typeMsgs := validation.IsValidLabelValue(lower)
	if lower == "" {
		typeMsgs = append(typeMsgs, "must not be empty")
	} else if msgs := validation.IsDNS1035Label("a-" + lower + "-0"); len(msgs) > 0 {
		typeMsgs = append(typeMsgs, msgs...)
	}
	if len(typeMsgs) > 0 {
		errs = append(errs, field.Invalid(path, name,
			"the replica type is part of every Service name and the fl-replica-type label, so in lower case it must be a-z, 0-9 and '-', starting and ending with a letter or digit: "+strings.Join(typeMsgs, "; ")))
	} else if prefixOK && rt.replicas > 0 {
		longest := ServiceName(app.Name, app.Spec.Role, name, int(rt.replicas-1))
		if msgs := validation.IsDNS1035Label(longest); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), app.Name,
				fmt.Sprintf("Service name %q (%d characters) is not a valid DNS-1035 label: %s; shorten the FLApp name or the replica type %q",
					longest, len(longest), strings.Join(msgs, "; "), name)))
		}
	}

	if rt.replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), rt.replicas, "must be greater than or equal to 0"))
	}
	if rt.replicas <= 0 {
		return rt, errs
	}

	containers := spec.Template.Spec.Containers
	cpath := path.Child("template", "spec", "containers")
	for i := range containers {
		if containers[i].Name == ContainerName {
			var portErrs field.ErrorList
			rt.ports, portErrs = servicePorts(containers[i].Ports, cpath.Index(i).Child("ports"))
			return rt, append(errs, portErrs...)
		}
	}
	return rt, append(errs, field.Required(cpath,
		fmt.Sprintf("no container named %q: its ports define the Services of %d replica(s)", ContainerName, rt.replicas)))
}

// servicePorts maps the tensorflow container's ports to Service ports, adding
// the operator's default flapp-port when no port has that name.
func servicePorts(ports []corev1.ContainerPort, path *field.Path) ([]corev1.ServicePort, field.ErrorList) {
	var errs field.ErrorList
	type portKey struct {
		port     int32
		protocol corev1.Protocol
	}
	names := make(map[string]int, len(ports)+1)
	numbers := make(map[portKey]int, len(ports)+1)
	out := make([]corev1.ServicePort, 0, len(ports)+1)

	add := func(p corev1.ContainerPort, ppath *field.Path, isDefault bool) {
		what := ""
		if isDefault {
			what = fmt.Sprintf(" (the default %s on %d, added because no port is named %s)", DefaultPortName, DefaultPort, DefaultPortName)
		}
		ok := true
		if p.Name == "" {
			errs = append(errs, field.Required(ppath.Child("name"), "every port needs a name: it is the Service port's name and targetPort"))
			ok = false
		} else if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(ppath.Child("name"), p.Name, "must be an IANA service name: "+strings.Join(msgs, "; ")))
			ok = false
		} else if first, dup := names[p.Name]; dup {
			errs = append(errs, field.Duplicate(ppath.Child("name"), p.Name))
			errs[len(errs)-1].Detail = fmt.Sprintf("same name as ports[%d]", first)
			ok = false
		}
		if msgs := validation.IsValidPortNum(int(p.ContainerPort)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(ppath.Child("containerPort"), p.ContainerPort, strings.Join(msgs, "; ")))
			ok = false
		}
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		if !slices.Contains(supportedProtocols, protocol) {
			errs = append(errs, field.NotSupported(ppath.Child("protocol"), p.Protocol, supportedProtocols))
			ok = false
		}
		if !ok {
			return
		}
		key := portKey{p.ContainerPort, protocol}
		if first, dup := numbers[key]; dup {
			errs = append(errs, field.Duplicate(ppath.Child("containerPort"), fmt.Sprintf("%d/%s", p.ContainerPort, protocol)))
			errs[len(errs)-1].Detail = fmt.Sprintf("same port and protocol as ports[%d]%s", first, what)
			return
		}
		idx := len(out)
		names[p.Name] = idx
		numbers[key] = idx
		sp := corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name)}
		if protocol != corev1.ProtocolTCP {
			sp.Protocol = protocol
		}
		out = append(out, sp)
	}

	hasDefault := false
	for i := range ports {
		if ports[i].Name == DefaultPortName {
			hasDefault = true
		}
		add(ports[i], path.Index(i), false)
	}
	if !hasDefault {
		add(corev1.ContainerPort{Name: DefaultPortName, ContainerPort: DefaultPort}, path.Index(len(ports)), true)
	}
	return out, errs
}

// Services yields the planned Services one at a time, in a stable order
// (replica type, then index), each freshly allocated: the caller may keep or
// change one, except its Ports and OwnerReferences, which Services of one
// replica type share.
func (p *Plan) Services() iter.Seq[*corev1.Service] {
	return func(yield func(*corev1.Service) bool) {
		for _, t := range p.types {
			if !p.typeServices(t, yield) {
				return
			}
		}
	}
}

// Service is the n-th Service of Services (from 0), freshly allocated, or
// nil past the last.
func (p *Plan) Service(n int) *corev1.Service {
	for _, t := range p.types {
		if n < int(t.replicas) {
			return p.service(t, n)
		}
		n -= int(t.replicas)
	}
	return nil
}

func (p *Plan) typeServices(t replicaType, yield func(*corev1.Service) bool) bool {
	for i := 0; i < int(t.replicas); i++ {
		if !yield(p.service(t, i)) {
			return false
		}
	}
	return true
}

func (p *Plan) service(t replicaType, i int) *corev1.Service {
	lowerType := strings.ToLower(t.name)
	selector := map[string]string{
		LabelAppName:      p.app.Name,
		LabelRole:         p.role,
		LabelReplicaType:  lowerType,
		LabelReplicaIndex: strconv.Itoa(i),
	}
	labels := make(map[string]string, len(selector)+1)
	for k, v := range selector {
		labels[k] = v
	}
	labels[LabelManagedBy] = ManagedByValue
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            ServiceName(p.app.Name, p.role, lowerType, i),
			Namespace:       p.app.Namespace,
			Labels:          labels,
			Annotations:     map[string]string{AnnotationFLAppName: p.app.Name},
			OwnerReferences: p.owner,
		},
		Spec: corev1.ServiceSpec{
			Ports:    t.ports,
			Selector: selector,
		},
	}
}

func ptr[T any](v T) *T { return &v }
