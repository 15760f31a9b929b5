package kustomize

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// The objects of the root's last entry are written after the build where
// kustomize's own build puts them. What follows mirrors kustomize's order
// (api v0.21.2, internal/builtins/SortOrderTransformer.go: the legacy
// order and its defaults) and what its final steps add to an object a
// transformer generated (krusty's managed-by label; the origin
// AddTransformerAnnotation records).

// legacyOrderFirst and legacyOrderLast are kustomize's default legacy
// order: these kinds first and last, in this order.
var (
	legacyOrderFirst = []string{"Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
		"PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints",
		"Service", "LimitRange", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim", "Deployment", "StatefulSet",
		"CronJob", "PodDisruptionBudget"}
	legacyOrderLast = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
)

// legacyLess is kustomize's legacy order (legacyIDSorter.Less).
func legacyLess(opts *types.LegacySortOptions) func(a, b resid.ResId) bool {
	first, last := legacyOrderFirst, legacyOrderLast
	if opts != nil {
		first, last = opts.OrderFirst, opts.OrderLast
	}
	rank := map[string]int{}
	for i, n := range first {
		rank[n] = -len(first) + i
	}
	for i, n := range last {
		rank[n] = 1 + i
	}
	gvkString := func(g resid.Gvk) string {
		return strings.Join([]string{or(g.Group, "~G"), or(g.Version, "~V"), or(g.Kind, "~K")}, "_")
	}
	return func(a, b resid.ResId) bool {
		if !a.Gvk.Equals(b.Gvk) {
			if ra, rb := rank[a.Kind], rank[b.Kind]; ra != rb {
				return ra < rb
			}
			if a.Kind == types.NamespaceKind && b.Kind == types.NamespaceKind && (a.Group == "" || b.Group == "") {
				return gvkString(a.Gvk) > gvkString(b.Gvk)
			}
			return gvkString(a.Gvk) < gvkString(b.Gvk)
		}
		return strings.Join([]string{a.Gvk.String(), or(a.Namespace, "~X"), or(a.Name, "~N")}, "|") <
			strings.Join([]string{b.Gvk.String(), or(b.Namespace, "~X"), or(b.Name, "~N")}, "|")
	}
}

func or(s, instead string) string {
	if s == "" {
		return instead
	}
	return s
}

// writeInOrder is the build's output, resources as kustomize ordered
// them, with the objects of the root's last entry among them: each in
// the place of the object it replaces (replaced: resource -> object), the
// others where kustomize's order puts them (its legacy order; after
// everything for fifo, in the order they came). The build's own objects
// are counted against out's ceiling as they are written.
func (b *Root) writeInOrder(resources []*resource.Resource, run *buildRun, replaced map[*resource.Resource]int, out *outputBudget) ([]byte, error) {
	var err error
	added := run.lastAdded
	labels, annotations := map[string]string{}, map[string]string{}
	if slices.Contains(b.metadata, types.ManagedByLabelOption) {
		labels[konfig.ManagedbyLabelKey] = "kustomize-" + KustomizeRelease
	}
	if run.lastOrigin != nil && slices.Contains(b.metadata, types.OriginAnnotations) {
		o, err := run.lastOrigin.String()
		if err != nil {
			return nil, fmt.Errorf("kustomize build: %w", err)
		}
		annotations[originAnnotation] = o
	}
	inPlace := make(map[int]bool, len(replaced))
	for _, i := range replaced {
		inPlace[i] = true
	}
	var order []int
	for i := range added.Len() {
		if !inPlace[i] {
			order = append(order, i)
		}
	}
	var less func(a, b resid.ResId) bool
	if o := b.sortOptions; o == nil || o.Order != types.FIFOSortOrder {
		var opts *types.LegacySortOptions
		if o != nil {
			opts = o.LegacySortOptions
		}
		less = legacyLess(opts)
		sort.SliceStable(order, func(x, y int) bool { return less(added.ID(order[x]), added.ID(order[y])) })
	}
	var buf []byte
	next := 0
	writeAdded := func(i int) {
		if len(buf) > 0 {
			buf = append(buf, "---\n"...)
		}
		if buf, err = added.Append(buf, i, labels, annotations); err != nil {
			err = fmt.Errorf("kustomize build: %w", err)
		}
	}
	for _, res := range resources {
		if less != nil {
			id := res.CurId()
			for ; next < len(order) && err == nil && less(added.ID(order[next]), id); next++ {
				writeAdded(order[next])
			}
		}
		if i, ok := replaced[res]; ok {
			writeAdded(i)
		} else {
			buf, err = out.append(buf, res)
		}
		if err != nil {
			return nil, err
		}
	}
	for ; next < len(order) && err == nil; next++ {
		writeAdded(order[next])
	}
	return buf, err
}
