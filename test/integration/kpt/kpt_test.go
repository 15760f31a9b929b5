// Package kpt checks examples/kpt/mnist under `kpt fn render` semantics.
//
// kpt itself cannot be built here, so render() below reproduces what
// `kpt fn render PKG --allow-exec` (kpt v1, internal/util/render) does, with
// the same kyaml pieces kpt uses:
//   - read the package with kio.LocalPackageReader options as kpt sets them
//     (PreserveSeqIndent, WrapBareSeqNode, Kptfile included, package-path
//     annotation); the reader sets internal.config.kubernetes.io/path and
//     config.kubernetes.io/path, and both index annotations, on every resource;
//   - run each mutator through runtimeutil.FunctionFilter (GlobalScope, as kpt
//     v1 does) inside a kio.Pipeline, which reconciles the internal and legacy
//     path/index annotations after the function; the function config is the
//     package resource named by configPath; exec paths are relative to the
//     working directory, like kpt's ExecFn;
//   - enforce kpt's invariants on the output: only KRM resources, no path
//     outside the package, no two resources with the same path and index;
//   - write back with kio.LocalPackageReadWriter: one file per path
//     annotation, resources ordered by index, reader annotations removed,
//     and files whose resources all disappeared deleted.
package kpt

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

const (
	pkgRel            = "examples/kpt/mnist"
	pkgPathAnnotation = "internal.config.kubernetes.io/package-path"
)

var update = flag.Bool("update", false, "render examples/kpt/mnist in place (after changing the FLApps or the binary's output)")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(h.Main(m))
}

type kptFunction struct {
	Image      string `yaml:"image,omitempty"`
	Exec       string `yaml:"exec,omitempty"`
	ConfigPath string `yaml:"configPath,omitempty"`
}

type kptfile struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Pipeline   struct {
		Mutators []kptFunction `yaml:"mutators"`
	} `yaml:"pipeline"`
}

func readKptfile(t *testing.T, pkgDir string) kptfile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pkgDir, "Kptfile"))
	require.NoError(t, err)
	var kf kptfile
	require.NoError(t, yaml.Unmarshal(b, &kf))
	require.Equal(t, "kpt.dev/v1", kf.APIVersion)
	require.Equal(t, "Kptfile", kf.Kind)
	return kf
}

// execRun runs a function binary the way kpt's ExecFn does: ResourceList on
// stdin, ResourceList on stdout, stderr collected for the error.
func execRun(bin, wd string) func(io.Reader, io.Writer) error {
	return func(r io.Reader, w io.Writer) error {
		cmd := exec.Command(bin)
		cmd.Dir = wd
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = r, w, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("function %s failed: %w\nstderr:\n%s", bin, err, stderr.String())
		}
		return nil
	}
}

// render emulates `kpt fn render <pkgDir> --allow-exec` run from wd.
func render(t *testing.T, wd, pkgDir string) error {
	t.Helper()
	kf := readKptfile(t, pkgDir)
	rw := &kio.LocalPackageReadWriter{
		PackagePath:       pkgDir,
		PackageFileName:   "Kptfile",
		MatchFilesGlob:    append([]string{"Kptfile"}, kio.MatchAll...),
		PreserveSeqIndent: true,
		WrapBareSeqNode:   true,
		SetAnnotations:    map[string]string{pkgPathAnnotation: pkgDir},
	}
	nodes, err := rw.Read()
	if err != nil {
		return fmt.Errorf("reading package: %w", err)
	}
	for i, fn := range kf.Pipeline.Mutators {
		if fn.Exec == "" {
			return fmt.Errorf("mutator %d: only exec functions can run here", i)
		}
		filter := &runtimeutil.FunctionFilter{
			Run:         execRun(filepath.Join(wd, fn.Exec), wd),
			GlobalScope: true,
		}
		if fn.ConfigPath != "" {
			for _, n := range nodes {
				p, _, _ := kioutil.GetFileAnnotations(n)
				if path.Clean(p) == path.Clean(fn.ConfigPath) {
					filter.FunctionConfig = n
				}
			}
			if filter.FunctionConfig == nil {
				return fmt.Errorf("mutator %d: functionConfig %s must exist in the package", i, fn.ConfigPath)
			}
		}
		out := &kio.PackageBuffer{}
		err := kio.Pipeline{
			Inputs:  []kio.Reader{&kio.PackageBuffer{Nodes: nodes}},
			Filters: []kio.Filter{filter},
			Outputs: []kio.Writer{out},
		}.Execute()
		if err != nil {
			return err
		}
		if err := enforceKptInvariants(out.Nodes); err != nil {
			return err
		}
		nodes = out.Nodes
	}
	return rw.Write(nodes)
}

// enforceKptInvariants mirrors kpt's checks on a function's output
// (fnruntime.enforcePathInvariants and kptfilev1.AreKRM).
func enforceKptInvariants(nodes []*yaml.RNode) error {
	seen := map[string]bool{}
	for _, n := range nodes {
		m, err := n.GetMeta()
		if err != nil || m.APIVersion == "" || m.Kind == "" || m.Name == "" {
			return fmt.Errorf("output resource list must contain only KRM resources: %v", err)
		}
		p, idx, err := kioutil.GetFileAnnotations(n)
		if err != nil {
			return err
		}
		fp := path.Clean(p)
		if strings.HasPrefix(fp, "../") {
			return fmt.Errorf("function must not modify resources outside of package: resource has path %s", p)
		}
		k := fp + "\x00" + idx
		if seen[k] {
			return fmt.Errorf("resource at path %q and index %q already exists", fp, idx)
		}
		seen[k] = true
	}
	return nil
}

// snapshot returns every regular file of dir, relative path -> content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	require.NoError(t, err)
	return out
}

// sandbox copies the example package and the binary (at bin/flapp-services,
// where the Kptfile's exec path expects it) into a temporary "repo root".
func sandbox(t *testing.T) (root, pkg string) {
	root = h.Sandbox(t, pkgRel)
	return root, filepath.Join(root, pkgRel)
}

func servicesIn(t *testing.T, file string) []h.Object {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err, "Services file %s", file)
	objs := h.MustParseObjects(t, b)
	assert.Empty(t, h.LeakedAnnotations(objs), "%s: function annotations written to the package", file)
	for _, o := range objs {
		assert.Equal(t, "Service", o["kind"], "%s holds only Services", file)
	}
	return objs
}

var (
	flappPort = h.Port{Name: "flapp-port", Port: 50051}
	tfPort    = h.Port{Name: "tf-port", Port: 50052}
)

func partyServices(ns, role string, workers int) []h.ServiceSpec {
	s := h.Replicas("mnist", ns, role, "Master", 1, flappPort)
	return append(s, h.Replicas("mnist", ns, role, "Worker", workers, flappPort, tfPort)...)
}

// The committed package is the output of a render: rendering it again (as kpt
// catalog tests do) must not change a single byte, and the Services sit in a
// file beside their FLApp.
func TestCommittedPackageIsRendered(t *testing.T) {
	if *update {
		root := h.Sandbox(t) // just bin/flapp-services
		require.NoError(t, render(t, root, filepath.Join(h.RepoRoot(), pkgRel)))
	}
	root, pkg := sandbox(t)
	before := snapshot(t, pkg)
	require.Contains(t, before, "leader/mnist.services.yaml", "the rendered Services are committed beside the FLApp")
	require.Contains(t, before, "follower/mnist.services.yaml")
	require.NoError(t, render(t, root, pkg))
	assert.Equal(t, before, snapshot(t, pkg), "rendering the committed package changed it: re-render examples/kpt/mnist and commit")

	h.CheckServices(t, servicesIn(t, filepath.Join(pkg, "leader/mnist.services.yaml")), partyServices("fl-leader", "Leader", 3), nil)
	h.CheckServices(t, servicesIn(t, filepath.Join(pkg, "follower/mnist.services.yaml")), partyServices("fl-follower", "Follower", 3), nil)
}

// From FLApps only: the first render writes the Services files beside the
// FLApps, the second render changes no file.
func TestRenderTwiceIsStable(t *testing.T) {
	root, pkg := sandbox(t)
	for _, f := range []string{"leader/mnist.services.yaml", "follower/mnist.services.yaml"} {
		require.NoError(t, os.RemoveAll(filepath.Join(pkg, f)))
	}
	pristine := snapshot(t, pkg)

	require.NoError(t, render(t, root, pkg))
	first := snapshot(t, pkg)
	for f, content := range pristine {
		assert.Equal(t, content, first[f], "%s: the render must not rewrite the hand-written files", f)
	}
	assert.ElementsMatch(t, append(h.Keys(pristine), "leader/mnist.services.yaml", "follower/mnist.services.yaml"), h.Keys(first),
		"the render adds exactly one Services file beside each FLApp")

	require.NoError(t, render(t, root, pkg))
	assert.Equal(t, first, snapshot(t, pkg), "the second render changed the package")
}

// Lowering replicas: the next render drops the stale Services from the file.
func TestScaleDownPrunesStaleServices(t *testing.T) {
	root, pkg := sandbox(t)
	app := filepath.Join(pkg, "leader/mnist.yaml")
	b, err := os.ReadFile(app)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "replicas: 3"))
	require.NoError(t, os.WriteFile(app, bytes.Replace(b, []byte("replicas: 3"), []byte("replicas: 1"), 1), 0o644))
	follower := snapshot(t, filepath.Join(pkg, "follower"))

	require.NoError(t, render(t, root, pkg))
	svcFile := filepath.Join(pkg, "leader/mnist.services.yaml")
	h.CheckServices(t, servicesIn(t, svcFile), partyServices("fl-leader", "Leader", 1), nil)
	content, err := os.ReadFile(svcFile)
	require.NoError(t, err)
	assert.NotContains(t, string(content), "mnist-leader-worker-1")
	assert.NotContains(t, string(content), "mnist-leader-worker-2")
	assert.Equal(t, follower, snapshot(t, filepath.Join(pkg, "follower")), "the other party is untouched")

	before := snapshot(t, pkg)
	require.NoError(t, render(t, root, pkg))
	assert.Equal(t, before, snapshot(t, pkg), "render after scale-down is not stable")
}

// Deleting an FLApp's file: the next render deletes its Services' file.
func TestDeletedFLAppLosesItsServicesFile(t *testing.T) {
	root, pkg := sandbox(t)
	leader := snapshot(t, filepath.Join(pkg, "leader"))
	require.NoError(t, os.Remove(filepath.Join(pkg, "follower/mnist.yaml")))

	require.NoError(t, render(t, root, pkg))
	_, err := os.Stat(filepath.Join(pkg, "follower/mnist.services.yaml"))
	assert.True(t, os.IsNotExist(err), "follower/mnist.services.yaml must be deleted with its FLApp (stat: %v)", err)
	assert.Equal(t, leader, snapshot(t, filepath.Join(pkg, "leader")), "the leader is untouched")
}

// A bad FLApp fails the render with the function's message, and kpt writes
// nothing back.
func TestBadFLAppFailsRenderAndWritesNothing(t *testing.T) {
	root, pkg := sandbox(t)
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "leader/broken.yaml"), []byte(h.BrokenFLApp("fl-leader")), 0o644))
	before := snapshot(t, pkg)
	err := render(t, root, pkg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no-tf")
	assert.Contains(t, err.Error(), "tensorflow")
	assert.Equal(t, before, snapshot(t, pkg), "a failed render must not change the package")
}

// Two FLApps with the same name (one per party namespace) in one directory:
// both Services files map to the same path, so their index annotations must
// not collide (kpt rejects two resources with the same path and index).
func TestSameNameFLAppsInOneDirectory(t *testing.T) {
	root, pkg := sandbox(t)
	jobs := filepath.Join(pkg, "jobs")
	require.NoError(t, os.MkdirAll(jobs, 0o755))
	for _, party := range []string{"leader", "follower"} {
		b, err := os.ReadFile(filepath.Join(pkg, party, "mnist.yaml"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(jobs, party+".yaml"), b, 0o644))
		require.NoError(t, os.RemoveAll(filepath.Join(pkg, party)))
	}
	// kpt rejects a repeated path and index: indexes must count per file.
	require.NoError(t, render(t, root, pkg))
	// Wherever the function puts them (one shared file or one per FLApp),
	// all Services sit beside the FLApps, in jobs/.
	files, err := filepath.Glob(filepath.Join(jobs, "*.services.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var objs []h.Object
	for _, f := range files {
		objs = append(objs, servicesIn(t, f)...)
	}
	h.CheckServices(t, objs, append(partyServices("fl-leader", "Leader", 3), partyServices("fl-follower", "Follower", 3)...), nil)

	before := snapshot(t, pkg)
	require.NoError(t, render(t, root, pkg))
	assert.Equal(t, before, snapshot(t, pkg), "second render changed the package")
}

// The emulation feeds the function what kpt feeds it: every item carries both
// path annotations and both index annotations, and the function config is the
// package's FLAppServices resource.
func TestEmulationFeedsKptAnnotations(t *testing.T) {
	root, pkg := sandbox(t)
	realBin := filepath.Join(root, "bin", "flapp-services")
	captured := filepath.Join(t.TempDir(), "input.yaml")
	// A wrapper at the Kptfile's exec path that records its stdin.
	require.NoError(t, os.Rename(realBin, realBin+".real"))
	require.NoError(t, os.WriteFile(realBin, []byte("#!/usr/bin/env bash\nset -eo pipefail\ntee "+captured+" | \"$0.real\"\n"), 0o755))
	require.NoError(t, render(t, root, pkg))

	b, err := os.ReadFile(captured)
	require.NoError(t, err)
	rl, err := yaml.Parse(string(b))
	require.NoError(t, err)
	assert.Equal(t, "ResourceList", rl.GetKind())
	fc := rl.Field("functionConfig")
	require.NotNil(t, fc)
	assert.Equal(t, "FLAppServices", fc.Value.GetKind())
	items, err := rl.Pipe(yaml.Lookup("items"))
	require.NoError(t, err)
	elems, err := items.Elements()
	require.NoError(t, err)
	require.NotEmpty(t, elems)
	for _, it := range elems {
		a := it.GetAnnotations()
		for _, k := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, pkgPathAnnotation} {
			assert.NotEmpty(t, a[k], "%s %s: %s", it.GetKind(), it.GetName(), k)
		}
	}
}

// Hand edits to a generated Services file are undone by the next render.
func TestHandEditedServicesAreRestored(t *testing.T) {
	root, pkg := sandbox(t)
	before := snapshot(t, pkg)
	f := filepath.Join(pkg, "leader/mnist.services.yaml")
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f, bytes.ReplaceAll(b, []byte("port: 50052"), []byte("port: 60000")), 0o644))
	require.NoError(t, render(t, root, pkg))
	assert.Equal(t, before, snapshot(t, pkg))
}

// Moving an FLApp to another file moves its Services file along: the old one
// is deleted, the new one written beside the FLApp's new place.
func TestMovedFLAppMovesItsServicesFile(t *testing.T) {
	root, pkg := sandbox(t)
	require.NoError(t, os.MkdirAll(filepath.Join(pkg, "party-a"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(pkg, "leader/mnist.yaml"), filepath.Join(pkg, "party-a/job.yaml")))
	require.NoError(t, render(t, root, pkg))
	_, err := os.Stat(filepath.Join(pkg, "leader/mnist.services.yaml"))
	assert.True(t, os.IsNotExist(err), "the old Services file is deleted (stat: %v)", err)
	h.CheckServices(t, servicesIn(t, filepath.Join(pkg, "party-a/mnist.services.yaml")), partyServices("fl-leader", "Leader", 3), nil)
}
