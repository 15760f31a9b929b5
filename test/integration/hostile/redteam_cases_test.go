package hostile

import (
	"fmt"
	"strings"
)

// redTeamCases are the findings of a red team run as Argo CD's plugin runs
// the render (the sidecar's environment, GOMEMLIMIT=256MiB): a few
// kilobytes that multiply in the build, chains that cost more than they
// read, schemas that crashed kustomize, ceilings the repository raised,
// version control metadata, and objects two readers read differently.
// Each holds the suite's promises (no crash, no canary, no exec or socket,
// within the sidecar's memory and deadline) and refuses as it says.
func redTeamCases() []kcase {
	mib := strings.Repeat("x", 1<<20)
	var cs []kcase
	add := func(c kcase) {
		if c.exit == 0 && c.stdout == nil {
			c.exit = 1
		}
		cs = append(cs, c)
	}

	// --- What a build multiplies: the memory and CPU ceilings stop it,
	// whatever the estimate saw.
	add(kcase{
		name: "vars-1mib-into-700-args", family: "budget: expansion", heavy: true,
		gen: func(e *hostileEnv) error {
			args := strings.TrimSuffix(strings.Repeat(`"$(V)", `, 700), ", ")
			return e.writeAll(map[string]string{
				"kustomization.yaml": "resources: [big.yaml, deploy.yaml]\nvars:\n- name: V\n  objref: {apiVersion: v1, kind: ConfigMap, name: big}\n  fieldref: {fieldpath: data.v}\n",
				"big.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {v: " + mib + "}\n",
				"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n" +
					"  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: busybox, args: [" + args + "]}]}\n",
			})
		},
		want: []string{ceilingWord},
	})
	add(kcase{
		name: "json-patch-copy-40", family: "budget: expansion", heavy: true,
		gen: func(e *hostileEnv) error {
			var ops strings.Builder
			for i := range 40 {
				fmt.Fprintf(&ops, "    - {op: copy, from: /data, path: /data/d%d}\n", i)
			}
			return e.writeAll(map[string]string{
				"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap, name: cm}\n  patch: |\n" + ops.String(),
				"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: " + strings.Repeat("v", 1000) + "}\n",
			})
		},
		want: []string{ceilingWord},
	})
	add(kcase{
		name: "patch-1mib-onto-700", family: "budget: expansion", heavy: true,
		gen: func(e *hostileEnv) error {
			return e.writeAll(map[string]string{
				"kustomization.yaml": "resources: [cms.yaml]\npatches:\n- target: {kind: ConfigMap}\n  path: patch.yaml\n",
				"cms.yaml":           configMaps(700, "cm"),
				"patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: any}\ndata: {big: " + mib + "}\n",
			})
		},
		want: []string{ceilingWord},
	})
	add(kcase{
		name: "replacement-1mib-secret-onto-700", family: "budget: expansion", heavy: true,
		gen: func(e *hostileEnv) error {
			return e.writeAll(map[string]string{
				"kustomization.yaml": "resources: [secret.yaml, cms.yaml]\nreplacements:\n- source: {kind: Secret, name: big, fieldPath: stringData.v}\n" +
					"  targets:\n  - select: {kind: ConfigMap}\n    fieldPaths: [data.copy]\n    options: {create: true}\n",
				"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: big}\nstringData: {v: " + mib + "}\n",
				"cms.yaml":    configMaps(700, "cm"),
			})
		},
		want: []string{ceilingWord},
	})

	// --- Chains: the scan reads at most one kustomization past
	// --max-build-count, and resolves each directory once.
	add(kcase{
		name: "chain-of-12000-bases", family: "budget: deep chain", heavy: true,
		gen: func(e *hostileEnv) error {
			const n = 12000
			files := map[string]string{"kustomization.yaml": "resources: [b/0]\n", fmt.Sprintf("b/%d/cm.yaml", n): cmYAML,
				fmt.Sprintf("b/%d/kustomization.yaml", n): "resources: [cm.yaml]\n"}
			for i := range n {
				files[fmt.Sprintf("b/%d/kustomization.yaml", i)] = fmt.Sprintf("resources: [../%d]\n", i+1)
			}
			return e.writeAll(files)
		},
		want: []string{"kustomization.yaml", "--max-build-count"},
	})
	add(kcase{
		name: "entries-100000-through-250-symlinks", family: "budget: deep chain", heavy: true,
		gen: func(e *hostileEnv) error {
			if err := e.write("real/cm.yaml", cmYAML); err != nil {
				return err
			}
			prev := "real"
			for i := 249; i >= 0; i-- {
				name := fmt.Sprintf("l%d", i)
				if err := e.link(name, prev); err != nil {
					return err
				}
				prev = name
			}
			return e.write("kustomization.yaml", "resources:\n"+strings.Repeat("- l0/cm.yaml\n", 100_000))
		},
		want: []string{"kustomization.yaml", ceilingWord},
	})

	// --- Schemas that crashed kustomize: refused before the build, or
	// its panic recovered into a refusal.
	for _, v := range []struct{ name, kust, file, content string }{
		{"crds-self-reference", "crds: [crd.json]\n", "crd.json", `{"T": {"Schema": {"properties": {"kind": {}, "apiVersion": {}, "metadata": {}, "x": {"$ref": "T"}}}}}`},
		{"crds-empty-file", "crds: [crd.json]\n", "crd.json", ""},
		{"openapi-empty-file", "openapi: {path: schema.json}\n", "schema.json", ""},
		{"openapi-definitions-not-a-map", "openapi: {path: schema.json}\n", "schema.json", `{"definitions": "not a map"}`},
	} {
		add(kcase{
			name: v.name, family: "crash: schema",
			files: map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + v.kust, "cm.yaml": cmYAML, v.file: v.content},
			want:  []string{"kustomization.yaml"},
		})
	}

	// --- Ceilings belong to whoever runs the sidecar: the repository may
	// lower them, never raise them.
	million := strings.Replace(flappYAML, "Worker: {replicas: 2", "Worker: {replicas: 1000000", 1)
	raise := strings.Replace(fnEntryYAML, "data: {ownerReferences: Never}", `data: {ownerReferences: Never, maxServices: "1000000000000", maxServicesPerFLApp: "1000000000000"}`, 1)
	add(kcase{
		name: "max-services-raised-by-the-entry", family: "ceiling: raised by the repository",
		files: map[string]string{"kustomization.yaml": "resources: [flapp.yaml]\ntransformers: [fn.yaml]\n", "flapp.yaml": million, "fn.yaml": raise},
		want:  []string{"maxServices"},
	})

	// --- Version control metadata is never read: the token
	// actions/checkout persists lives in .git/config.
	gitConfig := "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {{SECRET}}\n"
	for _, v := range []struct{ name, kust string }{
		{"git-config-in-a-configmap", "configMapGenerator:\n- name: leak\n  files: [.git/config]\n"},
		{"git-config-in-a-secret", "secretGenerator:\n- name: leak\n  files: [.git/config]\n"},
		{"git-config-as-env", "configMapGenerator:\n- name: leak\n  envs: [.git/config]\n"},
		{"git-config-as-a-patch", "patches:\n- path: .git/config\n"},
	} {
		add(kcase{
			name: v.name, family: "vcs: .git",
			files: map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + v.kust, "cm.yaml": cmYAML, ".git/config": gitConfig},
			want:  []string{"kustomization.yaml", ".git"},
		})
	}
	add(kcase{
		name: "git-config-through-a-symlink", family: "vcs: .git",
		files: map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: leak\n  files: [settings]\n", "cm.yaml": cmYAML, ".git/config": gitConfig},
		links: map[string]string{"settings": ".git/config"},
		want:  []string{"kustomization.yaml", ".git"},
	})

	// --- Every reader agrees: what Argo CD decodes as an FLApp is
	// rendered as one or refused, never passed through.
	add(kcase{
		name: "kind-as-binary", family: "read-alike",
		files: map[string]string{"flapp.yaml": strings.Replace(flappYAML, "kind: FLApp", "kind: !!binary RkxBcHA=", 1)},
		want:  []string{"flapp.yaml", "kind"},
	})
	add(kcase{
		name: "flapp-in-utf16", family: "read-alike",
		files:  map[string]string{"flapp.yaml": utf16LE(flappYAML)},
		stdout: []string{"kind: Service", "name: hostile-leader-worker-1"},
	})
	return cs
}

// utf16LE is text in UTF-16, little-endian, after its byte order mark.
func utf16LE(s string) string {
	b := []byte{0xff, 0xfe}
	for _, c := range []byte(s) {
		b = append(b, c, 0)
	}
	return string(b)
}

// writeAll writes files into the repository.
func (e *hostileEnv) writeAll(files map[string]string) error {
	for rel, content := range files {
		if err := e.write(rel, content); err != nil {
			return err
		}
	}
	return nil
}
