package kustomize

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
)

// filePath is a path a kustomization's build reads as a file, and where
// the kustomization names it.
type filePath struct {
	entry string // crds[0], patches[1].path, configMapGenerator[0].files[2]
	path  string
	data  bool // read as data (a generator's source), not parsed as YAML
}

// filePaths lists the files a kustomization's own fields make its build
// read, besides resources, components and plugins.
func filePaths(k *types.Kustomization) []filePath {
	var out []filePath
	add := func(entry, p string, data bool) {
		if p != "" {
			out = append(out, filePath{entry, p, data})
		}
	}
	for i, p := range k.Crds {
		add(fmt.Sprintf("crds[%d]", i), p, false)
	}
	for i, p := range k.Configurations {
		add(fmt.Sprintf("configurations[%d]", i), p, false)
	}
	add("openapi.path", k.OpenAPI["path"], false)
	for i, p := range k.Patches {
		add(fmt.Sprintf("patches[%d].path", i), p.Path, false)
	}
	for i, p := range k.PatchesJson6902 { //nolint:staticcheck // kustomize v5 still reads it
		add(fmt.Sprintf("patchesJson6902[%d].path", i), p.Path, false)
	}
	for i, p := range k.PatchesStrategicMerge { //nolint:staticcheck // kustomize v5 still reads it
		if s := string(p); !strings.ContainsAny(s, "\n:{") { // else an inline patch
			add(fmt.Sprintf("patchesStrategicMerge[%d]", i), s, false)
		}
	}
	for i, r := range k.Replacements {
		add(fmt.Sprintf("replacements[%d].path", i), r.Path, false)
	}
	for i, g := range k.ConfigMapGenerator {
		sources(fmt.Sprintf("configMapGenerator[%d]", i), g.KvPairSources, add)
	}
	for i, g := range k.SecretGenerator {
		sources(fmt.Sprintf("secretGenerator[%d]", i), g.KvPairSources, add)
	}
	return out
}

// sources adds a generator's files: its env files and its files, each of
// which may be written key=path.
func sources(at string, s types.KvPairSources, add func(entry, p string, data bool)) {
	for i, p := range s.EnvSources {
		add(fmt.Sprintf("%s.envs[%d]", at, i), p, true)
	}
	for i, f := range s.FileSources {
		if _, p, found := strings.Cut(f, "="); found {
			f = p
		}
		add(fmt.Sprintf("%s.files[%d]", at, i), f, true)
	}
}
