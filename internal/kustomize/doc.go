// Package kustomize builds a kustomization root for render mode, in process
// with kustomize's own API (sigs.k8s.io/kustomize/api, krusty), from a tree
// that may belong to anyone who can push a branch. Scan reads the build's
// kustomization files first, without building: it finds flapp-services'
// own transformer entries (each the configuration of a run at its place,
// never executed) and refuses what the build would execute or fetch: other
// functions, plugins, Helm chart inflation, remote resources and bases.
// Root.Build then runs krusty over a read-only file system confined to the
// repository by internal/repofs, with the render's symlink rules and size
// ceilings; each entry runs in process at its place among the transformers,
// as a kustomize builtin this package registers (entry.go), and the
// Services of the root's last entry are written after the build where
// kustomize would put them (order.go).
//
// Of this module it imports only fn (for its results: a refused build's
// problems are fn.BuildProblem results, capped as a run's are),
// internal/repofs and internal/yamlnodes; internal/cli drives it.
// It must never import render or internal/krmio: what it returns is YAML,
// read like any other input (layers_test.go checks).
package kustomize
