// Package repofs reads the manifest files of `flapp-services render` from
// a tree that may belong to anyone who can push a branch. It follows
// symlinks only while they stay inside the PATH they are reached from, like
// kustomize's LoadRestrictionsRootOnly, turns symlink loops into errors, and
// bounds what it reads: a ceiling per file and in total, checked on the
// files' sizes before anything is read.
//
// It knows nothing of YAML or FLApps: it must never import a YAML library,
// and it imports nothing of this module (layers_test.go checks).
package repofs
