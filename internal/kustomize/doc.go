// Package kustomize builds a kustomization root for render mode, in process
// with kustomize's own API (sigs.k8s.io/kustomize/api, krusty), from a tree
// that may belong to anyone who can push a branch. Scan reads the build's
// kustomization files first, without building: it finds flapp-services'
// own transformer entries (the render's configuration, never executed) and
// refuses what the build would execute or fetch: other functions, plugins,
// Helm chart inflation, remote resources and bases. Build then runs krusty
// over a read-only file system confined to the repository by
// internal/loader, with the render's symlink rules and size ceilings, and
// those entries removed.
//
// Of this module it imports only internal/loader; internal/cli drives it.
// It must never import fn, render or internal/fastyaml: what it returns is
// YAML, read like any other input (layers_test.go checks).
package kustomize
