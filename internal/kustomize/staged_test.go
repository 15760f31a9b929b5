package kustomize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Why an entry runs inside the one build (entry.go) and not as a staged
// build through kustomize's public API alone: build each kustomization that
// holds an entry by itself, run the entry over its output, and hand that
// output to the kustomization above as a resources file. These are
// kustomize's own answers (api v0.21.2) that such a build would give
// differently from `kustomize build` over the whole tree. If one of them
// fails after an upgrade, kustomize changed, and the staged build is worth
// measuring again (DEVELOPMENT.md, The one internal of kustomize).
func TestWhatAStagedPublicBuildWouldChange(t *testing.T) {
	const settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n"
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n" +
		"      - name: c\n        envFrom:\n        - configMapRef:\n            name: settings\n"

	t.Run("a built object no longer knows its first name", func(t *testing.T) {
		// An entry that runs over a finished build cannot name the file of
		// an FLApp the build renamed: the file is known by the first name.
		m := krustyBuild(t, map[string]string{
			"/base/kustomization.yaml": "namePrefix: a-\nresources: [settings.yaml]\n",
			"/base/settings.yaml":      settings,
		}, "/base")
		require.Equal(t, 1, m.Size())
		r := m.Resources()[0]
		assert.Equal(t, "a-settings", r.CurId().Name)
		assert.Equal(t, r.CurId(), r.OrgId(), "Run drops the build annotations that keep the first name")
	})

	t.Run("a name reference across the split", func(t *testing.T) {
		// The base renames its ConfigMap; the overlay's Deployment names it
		// by its first name. The whole build follows the rename; a staged
		// one leaves a reference to nothing.
		overlay := map[string]string{
			"/overlay/kustomization.yaml": "resources: [../base, deployment.yaml]\n",
			"/overlay/deployment.yaml":    deployment,
		}
		whole := with(overlay, map[string]string{
			"/base/kustomization.yaml": "namePrefix: a-\nresources: [settings.yaml]\n",
			"/base/settings.yaml":      settings,
		})
		staged := with(overlay, map[string]string{
			"/base/kustomization.yaml": "resources: [built.yaml]\n",
			"/base/built.yaml":         yamlOf(t, krustyBuild(t, whole, "/base")),
		})
		assert.Contains(t, yamlOf(t, krustyBuild(t, whole, "/overlay")), "name: a-settings\n        name: c")
		assert.Contains(t, yamlOf(t, krustyBuild(t, staged, "/overlay")), "name: settings\n        name: c")
	})

	t.Run("a hashed name across the split", func(t *testing.T) {
		// The whole build hashes the ConfigMap once, after the overlay
		// patched it by its first name. The base built alone hashes it
		// first, and the overlay's patch then finds nothing by that name.
		overlay := "resources: [../base]\nnamePrefix: p-\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n" +
			"    metadata: {name: settings}\n    data: {a: changed}\n"
		whole := map[string]string{
			"/base/kustomization.yaml":    "configMapGenerator:\n- name: settings\n  literals: [a=b]\n",
			"/overlay/kustomization.yaml": overlay,
		}
		assert.Equal(t, "p-settings-g5k2ffhtt9", krustyBuild(t, whole, "/overlay").Resources()[0].GetName())
		base := krustyBuild(t, whole, "/base")
		assert.Equal(t, "settings-4h2mbtbbt6", base.Resources()[0].GetName())
		staged := map[string]string{
			"/base/kustomization.yaml":    "resources: [built.yaml]\n",
			"/base/built.yaml":            yamlOf(t, base),
			"/overlay/kustomization.yaml": overlay,
		}
		_, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(memFS(t, staged), "/overlay")
		assert.ErrorContains(t, err, "no matches for Id ConfigMap.v1.[noGrp]/settings")
	})
}

func krustyBuild(t *testing.T, files map[string]string, dir string) resmap.ResMap {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(memFS(t, files), dir)
	require.NoError(t, err)
	return m
}

func memFS(t *testing.T, files map[string]string) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for path, data := range files {
		require.NoError(t, fs.WriteFile(path, []byte(data)))
	}
	return fs
}

func yamlOf(t *testing.T, m resmap.ResMap) string {
	t.Helper()
	data, err := m.AsYaml()
	require.NoError(t, err)
	return string(data)
}

func with(a, b map[string]string) map[string]string {
	all := make(map[string]string, len(a)+len(b))
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			all[k] = v
		}
	}
	return all
}
