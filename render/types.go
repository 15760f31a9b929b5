package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The FLApp API the Services belong to.
const (
	Group      = "fedlearner.k8s.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "FLApp"
)

// Labels the operator puts on each Service and uses, alone, as its selector.
const (
	LabelAppName      = "app-name"
	LabelRole         = "role"
	LabelReplicaType  = "fl-replica-type"
	LabelReplicaIndex = "fl-replica-index"
)

// Marks of a Service this tool generated: both must be present for a Service
// to be recognised (and so replaced or pruned) on a later run.
const (
	LabelManagedBy      = "app.kubernetes.io/managed-by"
	ManagedByValue      = "flapp-services"
	AnnotationFLAppName = "fn.fedlearner.k8s.io/flapp"
)

// Operator defaults, applied in memory and never written back.
const (
	ContainerName   = "tensorflow"
	DefaultPortName = "flapp-port"
	DefaultPort     = 8888
)

// FLApp is fedlearner.k8s.io/v1alpha1 FLApp, as far as its Services depend on it.
// Unknown fields are ignored so newer FLApps still decode.
type FLApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FLAppSpec `json:"spec"`
}

// FLAppSpec is the part of the FLApp spec that shapes Services.
type FLAppSpec struct {
	Role           string                 `json:"role"`
	FLReplicaSpecs map[string]ReplicaSpec `json:"flReplicaSpecs"`
}

// ReplicaSpec describes one replica type (Master, PS, Worker, ...).
type ReplicaSpec struct {
	Replicas *int32                 `json:"replicas,omitempty"`
	Pair     *bool                  `json:"pair,omitempty"`
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
}

// OwnerReferencePolicy says when a Service gets an owner reference to its FLApp.
type OwnerReferencePolicy string

// The owner-reference policies. A UID is never invented: see Options.
const (
	OwnerReferencesIfKnown  OwnerReferencePolicy = "IfKnown"
	OwnerReferencesRequired OwnerReferencePolicy = "Required"
	OwnerReferencesNever    OwnerReferencePolicy = "Never"
)

// OwnerReferencePolicies lists the valid policies, default first.
var OwnerReferencePolicies = []OwnerReferencePolicy{
	OwnerReferencesIfKnown, OwnerReferencesRequired, OwnerReferencesNever,
}

// DefaultMaxServicesPerFLApp bounds one FLApp's Services unless configured.
const DefaultMaxServicesPerFLApp = 10000

// Options tune rendering. The zero value means the defaults.
type Options struct {
	// OwnerReferences: IfKnown sets the owner reference when the FLApp's UID
	// is known; Required makes an unknown UID an error; Never omits it.
	OwnerReferences OwnerReferencePolicy
	// MaxServicesPerFLApp bounds the Services one FLApp may produce.
	MaxServicesPerFLApp int64
}

func (o Options) withDefaults() Options {
	if o.OwnerReferences == "" {
		o.OwnerReferences = OwnerReferencesIfKnown
	}
	if o.MaxServicesPerFLApp == 0 {
		o.MaxServicesPerFLApp = DefaultMaxServicesPerFLApp
	}
	return o
}
