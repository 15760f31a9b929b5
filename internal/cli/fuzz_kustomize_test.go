package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// FuzzKustomizeBuild renders random kustomization trees: files and links
// written from an archive (treeArchive), seeded with examples/kustomize and
// the shapes that once crashed the build, multiplied its memory or leaked
// what it must not read. Whatever the tree: no panic reaches the user (a
// recovered one in kustomize is a refusal; one of ours would say "internal
// error"), a failure prints nothing on stdout and a reason on stderr, a
// success prints a stream that parses, and the token in .git/config is
// never printed. A stack overflow, which no recover catches, ends the
// fuzzing process: the fuzzer reports it.
func FuzzKustomizeBuild(f *testing.F) {
	for _, seed := range kustomizeSeeds(f) {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, archive []byte) {
		if len(archive) > 64<<10 {
			return // the render's ceilings are tested elsewhere; here, shapes
		}
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		writeTree(t, dir, string(archive))
		t.Chdir(dir)
		opts := RenderOptions{
			Paths:  []string{"."},
			Limits: repofs.Limits{MaxInputSize: 4 << 20},
			Build:  kustomize.Limits{MaxOutput: 4 << 20, MaxTime: 5 * time.Second},
		}
		out, stderr, failed := renderBytes(t, opts, nil)
		if bytes.Contains(out, []byte(gitToken)) || strings.Contains(stderr, gitToken) {
			t.Fatalf(".git/config was read: stdout:\n%s\nstderr:\n%s", out, stderr)
		}
		if failed {
			return
		}
		if _, err := (&kio.ByteReader{Reader: bytes.NewReader(out)}).Read(); err != nil {
			t.Fatalf("a success that does not parse: %v\n%s", err, out)
		}
	})
}

// gitToken stands for the token actions/checkout persists in .git/config,
// which every fuzzed tree holds.
const gitToken = "ghs_fuzzTokenThatMustNeverBePrinted"

// writeTree writes the tree an archive describes into dir: "== path"
// starts a file (the lines after it, up to the next header), "== @link ->
// target" makes a symlink. Files are written first, each created anew,
// then the links, each in a directory that exists with no link on its
// way: nothing is written outside dir (resolved), whatever the links. .git/config always holds
// gitToken.
func writeTree(t *testing.T, dir, archive string) {
	t.Helper()
	inside := func(rel string) (string, bool) {
		rel = filepath.Clean(rel)
		if rel == "." || filepath.IsAbs(rel) || strings.HasPrefix(rel, "..") || strings.ContainsRune(rel, 0) {
			return "", false
		}
		return filepath.Join(dir, rel), true
	}
	files := map[string]string{".git/config": "[http]\n\textraheader = AUTHORIZATION: basic " + gitToken + "\n"}
	links := map[string]string{}
	for i, section := range strings.Split("\n"+archive, "\n== ") {
		if i == 0 {
			continue // before the first header
		}
		header, content, _ := strings.Cut(section, "\n")
		if link, target, ok := strings.Cut(strings.TrimPrefix(header, "@"), " -> "); ok && strings.HasPrefix(header, "@") {
			links[link] = target
		} else if _, ok := files[header]; !ok {
			files[header] = content
		}
	}
	for rel, content := range files {
		if p, ok := inside(rel); ok && os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
				_, _ = f.WriteString(content)
				_ = f.Close()
			}
		}
	}
	for rel, target := range links {
		p, ok := inside(rel)
		if !ok || strings.ContainsRune(target, 0) {
			continue
		}
		// Only in a directory that exists, and no link on its way.
		if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil && parent == filepath.Dir(p) {
			_ = os.Symlink(target, p)
		}
	}
}

// kustomizeSeeds are examples/kustomize as one archive (its staging and
// scale-up overlays as resources of the root), and small trees of
// each shape the hostile suite holds at full size.
func kustomizeSeeds(f *testing.F) []string {
	var examples strings.Builder
	err := filepath.WalkDir("../../examples/kustomize", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel("../../examples/kustomize", p)
		examples.WriteString("== " + rel + "\n" + string(data))
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	cm := "== cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n"
	flapp := "== flapp.yaml\n" + goodFLApp
	entry := "== fn.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n" +
		"      container: {image: ghcr.io/fedlearner/flapp-services:v1}\ndata: {ownerReferences: Never}\n"
	var chain strings.Builder
	for i := range 20 {
		chain.WriteString("== b" + string(rune('a'+i)) + "/kustomization.yaml\nresources: [../b" + string(rune('a'+i+1)) + "]\n")
	}
	return []string{
		"== kustomization.yaml\nresources: [staging, scale-up]\n" + examples.String(),
		"== kustomization.yaml\nresources: [flapp.yaml]\ntransformers: [fn.yaml]\n" + flapp + entry,
		"== kustomization.yaml\nresources: [cm.yaml]\ncrds: [crd.json]\n" + cm + "== crd.json\n" +
			`{"T": {"Schema": {"properties": {"kind": {}, "apiVersion": {}, "metadata": {}, "x": {"$ref": "T"}}}}}` + "\n",
		"== kustomization.yaml\nresources: [cm.yaml]\ncrds: [crd.json]\n" + cm + "== crd.json\n",
		"== kustomization.yaml\nresources: [cm.yaml]\nopenapi: {path: schema.json}\n" + cm + "== schema.json\n",
		"== kustomization.yaml\nresources: [cm.yaml]\nopenapi: {path: schema.json}\n" + cm + "== schema.json\n{\"definitions\": \"not a map\"}\n",
		"== kustomization.yaml\nresources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |\n" +
			strings.Repeat("    - {op: copy, from: /data, path: /data/d}\n", 5) + cm,
		"== kustomization.yaml\nresources: [cm.yaml, d.yaml]\nvars:\n- name: V\n  objref: {apiVersion: v1, kind: ConfigMap, name: cm}\n  fieldref: {fieldpath: data.k}\n" + cm +
			"== d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, args: [\"$(V)\", \"$(V)\"]}]}}}\n",
		"== kustomization.yaml\nresources: [cm.yaml]\nconfigMapGenerator:\n- name: leak\n  files: [.git/config]\n" + cm,
		"== kustomization.yaml\nresources: [cm.yaml]\nsecretGenerator:\n- name: leak\n  files: [settings]\n" + cm + "== @settings -> .git/config\n",
		"== kustomization.yaml\nresources: [loop/cm.yaml]\n" + cm + "== @loop -> loop\n",
		"== kustomization.yaml\nresources: [out/cm.yaml]\n" + cm + "== @out -> /etc\n",
		"== kustomization.yaml\nresources: [ba]\n" + chain.String() + "== b" + string(rune('a'+20)) + "/kustomization.yaml\nresources: [../cm.yaml]\n" + cm,
		"== kustomization.yaml\nresources: [flapp.yaml]\n== flapp.yaml\n" + strings.Replace(goodFLApp, "kind: FLApp", "kind: !!binary RkxBcHA=", 1),
		"== kustomization.yaml\nresources: [flapp.yaml]\ntransformers: [fn.yaml]\nnamePrefix: p-\n" + flapp + entry,
	}
}
