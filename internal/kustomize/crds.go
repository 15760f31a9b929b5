package kustomize

import (
	"encoding/json"
	"maps"
	"slices"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// crdCycle finds, in a crds: file, a type whose properties lead back to it
// through $ref: kustomize v5.8.1 follows those references with no check
// (api/internal/accumulator/loadconfigfromcrds.go, loadCrdIntoConfig) and
// recurses until Go's stack overflows, which no recover catches. The file
// is read as kustomize reads it (JSON when it starts with '{', else YAML,
// into the same types); it returns the cycle's types, or nil. A file that
// does not parse is left to kustomize's own error.
func crdCycle(content []byte) []string {
	var defs map[string]struct{ Schema spec.Schema }
	var err error
	if len(content) > 0 && content[0] == '{' {
		err = json.Unmarshal(content, &defs)
	} else {
		err = yaml.Unmarshal(content, &defs)
	}
	if err != nil {
		return nil
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(name string) []string
	visit = func(name string) []string {
		def, ok := defs[name]
		if !ok || state[name] == done {
			return nil
		}
		if state[name] == onPath {
			return append(slices.Clone(path[slices.Index(path, name):]), name)
		}
		state[name] = onPath
		path = append(path, name)
		for _, prop := range slices.Sorted(maps.Keys(def.Schema.Properties)) {
			if ref := def.Schema.Properties[prop].Ref; ref.GetURL() != nil {
				if cycle := visit(ref.String()); cycle != nil {
					return cycle
				}
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if cycle := visit(name); cycle != nil {
			return cycle
		}
	}
	return nil
}
