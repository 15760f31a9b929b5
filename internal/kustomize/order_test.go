package kustomize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// legacyLess is a copy of kustomize's legacy order (order.go), since
// kustomize exports no sort: it must order every id as kustomize's own
// build does, the defaults and sortOptions' own lists alike. The objects
// cover each rule: kinds of orderFirst and orderLast, kinds of neither,
// one kind in several groups and versions (and none), Namespaces of the core group
// beside others (whose comparison kustomize reverses), and ids that differ
// only by namespace or name. (A name is never empty: kustomize refuses an
// object without one, so legacyLess's "~N" is never compared.)
func TestLegacyLessSortsAsKustomize(t *testing.T) {
	gvks := []string{
		"v1 Namespace", "example.com/v1 Namespace", "zz.io/v2 Namespace", "v1 ConfigMap", "v1 Secret",
		"v1 Service", "apps/v1 Deployment", "apps/v1 StatefulSet", "batch/v1 CronJob", "v1 ServiceAccount",
		"rbac.authorization.k8s.io/v1 Role", "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration",
		"admissionregistration.k8s.io/v1 MutatingWebhookConfiguration", "fedlearner.k8s.io/v1alpha1 FLApp",
		"a.io/v1 Widget", "b.io/v1 Widget", "a.io/v2 Widget", "a.io/ Widget", "v1 Gadget", " Gadget", "batch/v1 Job",
	}
	var docs []string
	for _, gvk := range gvks {
		apiVersion, kind, _ := strings.Cut(gvk, " ")
		namespaces := []string{"", "x", "y"}
		if strings.HasSuffix(kind, "Namespace") || strings.HasSuffix(kind, "WebhookConfiguration") {
			namespaces = namespaces[:1] // cluster-scoped: kustomize's id drops the namespace
		}
		for _, ns := range namespaces {
			for _, name := range []string{"a", "b"} {
				meta := "name: " + name
				if ns != "" {
					meta += ", namespace: " + ns
				}
				docs = append(docs, fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {%s}\n", apiVersion, kind, meta))
			}
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	resources := strings.Join(docs, "---\n")

	for name, c := range map[string]struct {
		sortOptions string
		opts        *types.LegacySortOptions
	}{
		"kustomize's default order": {},
		"sortOptions' own lists": {
			sortOptions: "sortOptions:\n  order: legacy\n  legacySortOptions:\n    orderFirst: [Widget, Service, Namespace]\n    orderLast: [ConfigMap, Job]\n",
			opts:        &types.LegacySortOptions{OrderFirst: []string{"Widget", "Service", "Namespace"}, OrderLast: []string{"ConfigMap", "Job"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			opts := krusty.MakeDefaultOptions()
			opts.Reorder = krusty.ReorderOptionUnspecified // as Root.Build
			unsorted := "sortOptions: {order: fifo}\nresources: [objects.yaml]\n"
			files := map[string]string{"/app/kustomization.yaml": c.sortOptions + "resources: [objects.yaml]\n", "/app/objects.yaml": resources,
				"/fifo/kustomization.yaml": unsorted, "/fifo/objects.yaml": resources}
			fifo, err := krusty.MakeKustomizer(opts).Run(memFS(t, files), "/fifo")
			require.NoError(t, err)
			sorted, err := krusty.MakeKustomizer(opts).Run(memFS(t, files), "/app")
			require.NoError(t, err)
			require.Equal(t, len(docs), sorted.Size())

			ids := func(m interface{ AllIds() []resid.ResId }) []string {
				var s []string
				for _, id := range m.AllIds() {
					s = append(s, id.String())
				}
				return s
			}
			in := fifo.AllIds()
			require.NotEqual(t, ids(sorted), ids(fifo), "the input is not in kustomize's order already")
			slices.SortStableFunc(in, func(a, b resid.ResId) int {
				less := legacyLess(c.opts)
				switch {
				case less(a, b):
					return -1
				case less(b, a):
					return 1
				}
				return 0
			})
			var got []string
			for _, id := range in {
				got = append(got, id.String())
			}
			assert.Equal(t, ids(sorted), got)
		})
	}
}
