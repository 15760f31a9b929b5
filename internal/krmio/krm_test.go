package krmio

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn/fntest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestKRMAnnotations: for every input annotation format and for annotation
// sets a generated Service never has (twins present, empty values), the
// written Service equals what kio.ReconcileInternalAnnotations makes of
// fntest.ServiceNode(svc), encoded by kyaml.
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
		{"fn.fedlearner.k8s.io/flapp": "two\nlines", kioutil.PathAnnotation: "\na\n\nb.yaml", kioutil.IndexAnnotation: "0"},
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
			node := fntest.ServiceNode(svc)
			require.NoError(t, kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, nodeAnnos))
			var want bytes.Buffer
			require.NoError(t, kio.ByteWriter{Writer: &want, KeepReaderAnnotations: true,
				WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}.Write([]*yaml.RNode{node}))

			var got []byte
			var err error
			if annos, ok := krmAnnotations(m, f); ok {
				got, err = encodeServiceItem(nil, svc, annos)
			} else {
				got, err = exactServiceItem(nil, svc, nodeAnnos)
			}
			require.NoError(t, err)
			assert.Equal(t, strings.TrimPrefix(want.String(), "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"),
				string(got), "format %s, annotations %v", fname, m)
		}
	}
}

// TestResultsWrittenAsExecuteWritesThem: the results of a ResourceList are
// written as framework.Execute writes them, for strings that take every
// style go-yaml has (plain, quoted, a literal block, one with an
// indentation indicator), and values of other types.
func TestResultsWrittenAsExecuteWritesThem(t *testing.T) {
	messages := []string{"", "generated 3 Service(s)", "yes", "on", "12", "0x1F", "- a", "a: b", "#c", "it's", `say "no"`,
		" lead", "trail ", "two\nlines", "two\nlines\n", "\nlead", "\n#c", " lead\nx", "tab\there", "\x00", "ünïcode ✓",
		strings.Repeat("long words ", 40), "a\n\n b", "'", "---", "~", "null", "&a", "*a", "!t", "%x", "@", "`"}
	rnd := rand.New(rand.NewSource(1))
	for range 100 {
		b := make([]byte, rnd.Intn(20))
		for i := range b {
			const alphabet = " \n\t:#-'\"ab01y{}[],&*!|>%@`\\"
			b[i] = alphabet[rnd.Intn(len(alphabet))]
		}
		messages = append(messages, string(b))
	}
	input := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
	for _, m := range messages {
		results := framework.Results{{Message: m, Severity: framework.Error,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "v1", Kind: m}, NameMeta: yaml.NameMeta{Name: m}},
			Field:       &framework.Field{Path: m, CurrentValue: m, ProposedValue: []any{1, true, m, map[string]any{m: 2.5}}},
			File:        &framework.File{Path: m, Index: 3}, Tags: map[string]string{m: m, "k": m}}}
		var want bytes.Buffer
		wantErr := framework.Execute(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
			rl.Results = results
			return nil
		}), &kio.ByteReadWriter{Reader: strings.NewReader(input), Writer: &want, KeepReaderAnnotations: true})

		var got bytes.Buffer
		rl, err := ReadResourceList(&kio.ByteReadWriter{Reader: strings.NewReader(input), Writer: &got, KeepReaderAnnotations: true})
		require.NoError(t, err)
		gotErr := rl.Write(rl.Items, nil, results)
		assert.Equal(t, wantErr != nil, gotErr != nil, "%q: %v, %v", m, wantErr, gotErr)
		assert.Equal(t, want.String(), got.String(), "%q", m)
	}
}
