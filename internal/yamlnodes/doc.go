// Package yamlnodes bounds what a YAML document costs once parsed, before the
// parse that would pay it: Bound counts on the bytes, Expanded on a parsed
// tree with every alias expanded (what a reader that resolves aliases, as
// kustomize's does, builds from it) without expanding any.
//
// It imports nothing of this module; internal/krmio and
// internal/kustomize use it (layers_test.go checks).
package yamlnodes
