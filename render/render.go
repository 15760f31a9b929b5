package render

import (
	"fmt"
	"iter"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
