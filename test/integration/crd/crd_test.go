// Package crd checks every FLApp of the integration examples against the FLApp
// CRD (examples/crd/flapp-crd.yaml) the way kube-apiserver would: OpenAPI
// validation of the structural schema, and no field the server would silently
// prune (a typo such as `replica:` would otherwise vanish on apply).
package crd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

func loadSchema(t *testing.T) (*apiextensions.JSONSchemaProps, *structuralschema.Structural) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/crd/flapp-crd.yaml"))
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.Unmarshal(b, &crd))
	require.Len(t, crd.Spec.Versions, 1)
	require.Equal(t, "v1alpha1", crd.Spec.Versions[0].Name)
	var internal apiextensions.JSONSchemaProps
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil))
	s, err := structuralschema.NewStructural(&internal)
	require.NoError(t, err)
	return &internal, s
}

// exampleFLApps returns every FLApp found in the YAML files of the
// integration examples, keyed by "<file> <name>".
func exampleFLApps(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, dir := range []string{"examples/kustomize", "examples/kpt", "examples/argocd", "examples/flux"} {
		err := filepath.WalkDir(filepath.Join(h.RepoRoot(), dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			objs, err := h.ParseObjects(b)
			if err != nil {
				return nil // not a manifest file (e.g. plugin.yaml patch): not an FLApp either
			}
			rel, _ := filepath.Rel(h.RepoRoot(), p)
			for _, o := range objs {
				if o["kind"] == "FLApp" {
					u := unstructured.Unstructured{Object: o}
					out[rel+" "+u.GetName()] = o
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

func TestExampleFLAppsMatchTheCRD(t *testing.T) {
	internal, structural := loadSchema(t)
	validator, _, err := validation.NewSchemaValidator(internal)
	require.NoError(t, err)

	flapps := exampleFLApps(t)
	require.GreaterOrEqual(t, len(flapps), 8, "FLApps found in the examples: %v", h.Keys(flapps))
	for key, obj := range flapps {
		assert.Equal(t, "fedlearner.k8s.io/v1alpha1", obj["apiVersion"], key)
		errs := validation.ValidateCustomResource(field.NewPath(""), obj, validator)
		assert.Empty(t, errs, "%s: rejected by the CRD schema", key)

		pruned := structuralpruning.PruneWithOptions(runtimeCopy(obj), structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		assert.Empty(t, pruned, "%s: fields the API server would silently drop", key)
	}
}

func runtimeCopy(o map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: o}).DeepCopy().Object
}

// A key that differs from a field only by case is dropped by the API server
// (the structural schema prunes it: the FLApp that runs has no such field),
// so the render refuses it, naming the field the API server would drop.
func TestCaseVariantKeysArePrunedAndRefused(t *testing.T) {
	_, structural := loadSchema(t)
	for _, tt := range []struct{ spec, pruned, refused string }{
		// The pruner writes map keys with dots; errors use apimachinery's field.Path.
		{"  flReplicaSpecs:\n    Worker:\n      Replicas: 3\n", "spec.flReplicaSpecs.Worker.Replicas", "spec.flReplicaSpecs[Worker].Replicas"},
		{"  flreplicaspecs:\n    Worker:\n      replicas: 3\n", "spec.flreplicaspecs", "spec.flreplicaspecs"},
	} {
		manifest := "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: mnist, namespace: fl}\nspec:\n" +
			"  role: Leader\n  peerSpecs: {Follower: {peerURL: x}}\n" + tt.spec
		objs := h.MustParseObjects(t, []byte(manifest))
		pruned := structuralpruning.PruneWithOptions(runtimeCopy(objs[0]), structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		assert.Equal(t, []string{tt.pruned}, pruned)

		res := h.Run(t, t.TempDir(), nil, h.Binary(t), "render", writeFile(t, manifest))
		assert.Equal(t, 1, res.ExitCode)
		assert.Empty(t, res.Stdout)
		assert.Contains(t, res.Stderr, tt.refused+": malformed FLApp: unknown field")
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "flapp.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}
