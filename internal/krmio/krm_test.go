package krmio

import (
	"bytes"
	"github.com/fedlearner/flapp-services/fn"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestKRMAnnotations: for every input annotation format and for annotation
// sets a generated Service never has (twins present, empty values), the
// written Service equals what kio.ReconcileInternalAnnotations makes of
// fn.ServiceNode(svc), encoded by kyaml.
func TestKRMAnnotations(t *testing.T) {
	formats := map[string]map[string]map[string]string{
		"none":     {"0": {kioutil.InternalAnnotationsMigrationResourceIDAnnotation: "0"}},
		"internal": {"0": {kioutil.PathAnnotation: "a.yaml", kioutil.IndexAnnotation: "0"}},
		"legacy":   {"0": {kioutil.LegacyPathAnnotation: "a.yaml"}},
		"both":     {"0": {kioutil.PathAnnotation: "a.yaml", kioutil.LegacyPathAnnotation: "a.yaml"}},
		"empty":    {},
	}
	annotationSets := []map[string]string{
		{"fn.fedlearner.k8s.io/flapp": "normal"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "apps/normal.services.yaml", kioutil.IndexAnnotation: "3"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "1/a b.yaml", kioutil.IndexAnnotation: "0"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "p.yaml", kioutil.LegacyPathAnnotation: "p.yaml"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.LegacyIndexAnnotation: "2"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "", kioutil.IdAnnotation: "x"},
		{kioutil.PathAnnotation: "p.yaml"},
	}
	for fname, nodeAnnos := range formats {
		f := annotationsFormat(nodeAnnos)
		for i, m := range annotationSets {
			svc := randomService(rand.New(rand.NewSource(int64(i))))
			svc.Name, svc.Namespace = "normal-leader-master-0", "default"
			svc.Annotations = m
			node := fn.ServiceNode(svc)
			require.NoError(t, kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, nodeAnnos))
			var want bytes.Buffer
			require.NoError(t, kio.ByteWriter{Writer: &want, KeepReaderAnnotations: true,
				WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}.Write([]*yaml.RNode{node}))

			var got []byte
			var err error
			if annos, ok := krmAnnotations(m, f); ok {
				got, err = encodeServiceItem(nil, svc, annos)
			} else {
				got, err = exactServiceItem(nil, fn.ServiceNode(svc), nodeAnnos)
			}
			require.NoError(t, err)
			assert.Equal(t, strings.TrimPrefix(want.String(), "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"),
				string(got), "format %s, annotations %v", fname, m)
		}
	}
}
