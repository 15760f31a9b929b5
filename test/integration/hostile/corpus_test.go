package hostile

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A hostile input. The same bytes go to every mode that applies: stream is
// a YAML stream, written to a file for render, piped to `render -`, and
// wrapped into a ResourceList for the KRM mode (krm, when set, is the whole
// KRM stdin instead). tree, when set, lays out a directory (symlink farms,
// FIFOs) for render only.
type input struct {
	name   string
	stream []byte
	krm    []byte
	tree   func(dir string) ([]string, error) // returns the PATH arguments
	// renderOnly: KRM mode bounds no input (kustomize and kpt hold the
	// whole ResourceList already, SECURITY.md).
	renderOnly bool
	secret     string // must never appear in any output
}

// validFLApp is the leader of a two-party job, the shape of the operator's examples.
const validFLApp = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: normal
  namespace: leader
  labels: {team: a}
spec:
  role: Leader
  peerSpecs:
    Follower:
      peerURL: fedlearner-operator.follower.svc.cluster.local:8100
  flReplicaSpecs:
    Master:
      replicas: 1
      pair: false
      template:
        spec:
          containers:
            - name: tensorflow
              image: fedlearner/fedlearner:v2.3
              ports:
                - name: flapp-port
                  containerPort: 50051
    Worker:
      pair: true
      replicas: 2
      template:
        spec:
          containers:
            - name: tensorflow
              image: fedlearner/fedlearner:v2.3
              ports:
                - {name: flapp-port, containerPort: 50051}
                - {name: tf-port, containerPort: 50052, protocol: UDP}
`

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: leader}\ndata: {k: v}\n"

// corpus generates every hostile input, deterministically (fixed seeds).
func corpus() []input {
	var all []input
	add := func(name string, stream string) { all = append(all, input{name: name, stream: []byte(stream)}) }
	addB := func(name string, stream []byte) { all = append(all, input{name: name, stream: stream}) }

	// 1. Mutated valid FLApps: byte-level mutations with fixed seeds.
	rnd := rand.New(rand.NewSource(10))
	alphabet := []byte(":-[]{}&*!|>'\"#%@`, \n\t0123456789aZ\x00\xff\\")
	for i := 0; i < 60; i++ {
		b := []byte(validFLApp)
		for n := 1 + rnd.Intn(4); n > 0; n-- {
			pos := rnd.Intn(len(b))
			switch rnd.Intn(4) {
			case 0: // replace
				b[pos] = alphabet[rnd.Intn(len(alphabet))]
			case 1: // delete a run
				end := min(len(b), pos+1+rnd.Intn(20))
				b = append(b[:pos:pos], b[end:]...)
			case 2: // insert
				b = append(b[:pos:pos], append([]byte{alphabet[rnd.Intn(len(alphabet))]}, b[pos:]...)...)
			case 3: // duplicate a run
				end := min(len(b), pos+1+rnd.Intn(40))
				b = append(b[:end:end], append(append([]byte(nil), b[pos:end]...), b[end:]...)...)
			}
		}
		addB(fmt.Sprintf("mutated-%02d", i), b)
	}

	// 2. Wrong types at every path of the valid FLApp.
	root, err := yaml.Parse(validFLApp)
	if err != nil {
		panic(err)
	}
	wrong := []string{`[1, 2]`, `{a: b}`, `"text"`, `12345678901234567890`, `null`, `true`, `-1`, `1.5e300`, `""`, `[]`, `{}`}
	paths := nodePaths(root.YNode(), nil)
	for i, p := range paths {
		for j := 0; j < 2; j++ {
			w := wrong[(i*2+j)%len(wrong)]
			doc, err := yaml.Parse(validFLApp)
			if err != nil {
				panic(err)
			}
			repl, err := yaml.Parse(w)
			if err != nil {
				panic(err)
			}
			setAt(doc.YNode(), p, repl.YNode())
			s, err := doc.String()
			if err != nil {
				panic(err)
			}
			add(fmt.Sprintf("wrong-type-%s=%s", strings.Join(p, "."), w), s)
		}
	}

	// 3. Deep nesting, in every shape and place.
	for _, depth := range []int{1000, 10000, 100000} {
		add(fmt.Sprintf("deep-flow-seq-%d", depth), strings.Repeat("[", depth)+strings.Repeat("]", depth)+"\n")
		add(fmt.Sprintf("deep-flow-map-in-spec-%d", depth),
			strings.Replace(validFLApp, "spec:\n  role: Leader", "spec:\n  x: "+strings.Repeat("{a: ", depth)+"1"+strings.Repeat("}", depth)+"\n  role: Leader", 1))
	}
	var block strings.Builder
	block.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n")
	for d := 0; d < 3000; d++ {
		block.WriteString(strings.Repeat(" ", d+2) + "k:\n")
	}
	add("deep-block-map-3000", block.String())
	add("deep-block-seq", "a:\n"+strings.Repeat("- ", 5000)+"x\n")
	add("deep-replica-template", strings.Replace(validFLApp, "replicas: 2", "replicas: 2\n      extra: "+strings.Repeat("[", 20000)+strings.Repeat("]", 20000), 1))

	// 4. Alias bombs ("billion laughs") and alias tricks.
	laughs := func(levels, width int) string {
		var b strings.Builder
		b.WriteString("a0: &a0 [\"lol\"]\n")
		for l := 1; l <= levels; l++ {
			refs := make([]string, width)
			for k := range refs {
				refs[k] = fmt.Sprintf("*a%d", l-1)
			}
			fmt.Fprintf(&b, "a%d: &a%d [%s]\n", l, l, strings.Join(refs, ", "))
		}
		return b.String()
	}
	add("alias-bomb-top", laughs(9, 10))
	add("alias-bomb-in-flapp", strings.Replace(validFLApp, "spec:\n", "x:\n  "+strings.ReplaceAll(strings.TrimSpace(laughs(9, 10)), "\n", "\n  ")+"\nspec:\n", 1))
	add("alias-bomb-in-labels", strings.Replace(validFLApp, "labels: {team: a}", "labels:\n    "+strings.ReplaceAll(strings.TrimSpace(laughs(8, 12)), "\n", "\n    "), 1))
	add("alias-bomb-wide", laughs(3, 1000))
	add("alias-replicas", strings.Replace(strings.Replace(validFLApp, "replicas: 1", "replicas: &r 1", 1), "replicas: 2", "replicas: *r", 1))
	add("alias-self-merge", "a: &a {b: 1}\nc:\n  <<: *a\n  <<: *a\n")
	add("alias-undefined", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: *nope}\n")
	add("alias-recursive", "a: &a [*a]\n")
	add("alias-whole-flapp-twice", "x: &x "+flow(validFLApp)+"\n---\n"+validFLApp)
	add("merge-key-spec", strings.Replace(validFLApp, "spec:\n  role: Leader", "base: &b {role: Follower}\nspec:\n  <<: *b\n  role: Leader", 1))

	// 5. Huge strings and keys (a few MB: large, yet far below the ceilings).
	big := strings.Repeat("x", 4<<20)
	add("huge-name", strings.Replace(validFLApp, "name: normal", "name: "+big, 1))
	add("huge-label", strings.Replace(validFLApp, "team: a", "team: "+big, 1))
	add("huge-replica-type", strings.Replace(validFLApp, "    Worker:", "    W"+strings.Repeat("w", 1<<20)+":", 1))
	add("huge-port-name", strings.Replace(validFLApp, "name: tf-port", "name: tf"+strings.Repeat("p", 1<<20), 1))
	add("huge-comment", "#"+big+"\n"+validFLApp)
	add("huge-key-configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\ndata: {"+strings.Repeat("k", 2<<20)+": v}\n")
	add("huge-quoted-escapes", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q}\ndata: {k: \""+strings.Repeat(`\u00e9\x41\t`, 200000)+"\"}\n")
	add("many-small-docs", strings.Repeat("---\n{}\n", 20000))
	all = append(all, input{name: "many-docs-over-object-ceiling", stream: []byte(strings.Repeat("---\n{}\n", 250000)), renderOnly: true})
	add("many-services-ceiling-per-flapp", strings.Replace(validFLApp, "replicas: 2", "replicas: 2147483647", 1))
	add("replicas-over-int32", strings.Replace(validFLApp, "replicas: 2", "replicas: 4294967296", 1))
	add("replicas-int64-max", strings.Replace(validFLApp, "replicas: 2", "replicas: 9223372036854775807", 1))
	add("replicas-float", strings.Replace(validFLApp, "replicas: 2", "replicas: 2.5", 1))
	add("replicas-inf", strings.Replace(validFLApp, "replicas: 2", "replicas: .inf", 1))
	add("replicas-nan", strings.Replace(validFLApp, "replicas: 2", "replicas: .nan", 1))
	add("replicas-hex", strings.Replace(validFLApp, "replicas: 2", "replicas: 0x10", 1))
	add("replicas-octal", strings.Replace(validFLApp, "replicas: 2", "replicas: 0o17", 1))
	add("replicas-underscore", strings.Replace(validFLApp, "replicas: 2", "replicas: 1_0", 1))
	add("replicas-string", strings.Replace(validFLApp, "replicas: 2", `replicas: "2"`, 1))
	add("port-1e99", strings.Replace(validFLApp, "containerPort: 50052", "containerPort: 1e99", 1))
	add("many-flapps-at-per-flapp-ceiling", manyFLApps(12, 10000))

	// 6. NUL bytes, raw and escaped.
	add("nul-raw-in-value", strings.Replace(validFLApp, "image: fedlearner/fedlearner:v2.3", "image: a\x00b", 1))
	add("nul-raw-in-key", strings.Replace(validFLApp, "    Worker:", "    Wor\x00ker:", 1))
	add("nul-escaped-in-name", strings.Replace(validFLApp, "name: normal", `name: "nor\0mal"`, 1))
	add("nul-escaped-in-type", strings.Replace(validFLApp, "    Worker:", `    "Wor\0ker":`, 1))
	add("nul-only", "\x00\x00\x00\x00")
	addB("nul-after-doc", append([]byte(validFLApp), 0))

	// 7. Invalid UTF-8.
	add("utf8-invalid-value", strings.Replace(validFLApp, "team: a", "team: \xff\xfe\xfd", 1))
	add("utf8-invalid-key", strings.Replace(validFLApp, "  role: Leader", "  \xc3\x28: x\n  role: Leader", 1))
	add("utf8-overlong", strings.Replace(validFLApp, "name: normal", "name: \xc0\xaf", 1))
	add("utf8-surrogate", strings.Replace(validFLApp, "name: normal", "name: \xed\xa0\x80", 1))
	add("utf8-truncated", validFLApp+"x: \xe2\x82")
	add("utf8-escaped-surrogate", strings.Replace(validFLApp, "name: normal", `name: "\ud800"`, 1))
	add("unicode-name-lookalike", strings.Replace(validFLApp, "name: normal", "name: n\u043erm\u0430l", 1))
	add("unicode-rtl-override", strings.Replace(validFLApp, "name: normal", "name: \u202enormal", 1))

	// 8. Byte-order marks.
	add("bom-utf8", "\ufeff"+validFLApp)
	add("bom-utf8-twice", "\ufeff\ufeff"+validFLApp)
	add("bom-utf8-second-doc", configMap+"---\n\ufeff"+validFLApp)
	addB("bom-utf16le", utf16(validFLApp, false))
	addB("bom-utf16be", utf16(validFLApp, true))
	addB("bom-utf32le", append([]byte{0xff, 0xfe, 0, 0}, []byte(validFLApp)...))

	// 9. Line endings.
	add("crlf", strings.ReplaceAll(validFLApp, "\n", "\r\n"))
	add("cr-only", strings.ReplaceAll(validFLApp, "\n", "\r"))
	add("crlf-mixed", strings.Replace(validFLApp, "\n", "\r\n", 10))
	add("crlf-separators", strings.ReplaceAll(configMap+"---\n"+validFLApp, "\n", "\r\n"))
	add("unicode-line-separators", strings.ReplaceAll(validFLApp, "\n", "\u2028"))

	// 10. Duplicate keys at every level that matters.
	add("dup-kind", strings.Replace(validFLApp, "kind: FLApp", "kind: FLApp\nkind: Service", 1))
	add("dup-name", strings.Replace(validFLApp, "  name: normal", "  name: normal\n  name: other", 1))
	add("dup-spec", validFLApp+"spec: {role: Follower}\n")
	add("dup-role", strings.Replace(validFLApp, "  role: Leader", "  role: Leader\n  role: Follower", 1))
	add("dup-replica-type", strings.Replace(validFLApp, "    Master:", "    Worker: {replicas: 5}\n    Master:", 1))
	add("dup-replicas", strings.Replace(validFLApp, "      replicas: 2", "      replicas: 2\n      replicas: 3", 1))
	add("dup-port-keys", strings.Replace(validFLApp, "{name: flapp-port, containerPort: 50051}", "{name: flapp-port, containerPort: 50051, containerPort: 1}", 1))
	add("dup-flow-keys", "{apiVersion: v1, kind: ConfigMap, kind: Secret, metadata: {name: a, name: b}}\n")
	add("dup-flapp-docs", validFLApp+"---\n"+validFLApp)

	// 11. Mixed documents.
	add("mixed-garbage-between", validFLApp+"---\n: : :\n---\n"+configMap)
	add("mixed-scalar-doc", validFLApp+"---\njust a string\n")
	add("mixed-list-doc", validFLApp+"---\n- a\n- b\n")
	add("mixed-json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}`+"\n---\n"+validFLApp)
	add("mixed-json-flapp", flow(validFLApp)+"\n")
	add("mixed-doc-end-markers", validFLApp+"...\n---\n"+configMap+"...\n")
	add("mixed-directive", "%YAML 1.1\n---\n"+validFLApp)
	add("mixed-bad-directive", "%YAML 9.9\n---\n"+validFLApp)
	add("mixed-tag-binary", strings.Replace(validFLApp, "team: a", "team: !!binary aGVsbG8=", 1))
	add("mixed-custom-tags", strings.Replace(validFLApp, "role: Leader", "role: !evil Leader", 1))
	add("mixed-tag-int-on-string", strings.Replace(validFLApp, "name: normal", "name: !!int normal", 1))
	add("mixed-tag-map-on-seq", strings.Replace(validFLApp, "flReplicaSpecs:", "flReplicaSpecs: !!seq", 1))
	add("mixed-list-kind", "apiVersion: v1\nkind: List\nitems:\n- "+flow(validFLApp)+"\n- 5\n- [x]\n")
	add("mixed-nested-lists", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: List, items: ["+flow(validFLApp)+"]}]}\n")
	add("mixed-resourcelist-in-render", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- "+flow(validFLApp)+"\n")
	add("mixed-empty-docs", "---\n---\n---\n")
	add("mixed-only-comments", "# nothing\n# here\n")
	add("mixed-empty", "")
	add("mixed-reader-annotations", strings.Replace(validFLApp, "labels: {team: a}", "annotations: {config.kubernetes.io/path: ../../etc/passwd, config.kubernetes.io/index: \"-1\", internal.config.kubernetes.io/path: /etc/shadow}", 1))
	add("mixed-previous-service-hostile", validFLApp+"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: normal-leader-worker-9\n  namespace: leader\n  labels: {app.kubernetes.io/managed-by: flapp-services, fl-replica-index: [1]}\n  annotations: {fn.fedlearner.k8s.io/flapp: [x]}\nspec: 5\n")
	add("mixed-local-config-flapp", strings.Replace(validFLApp, "labels: {team: a}", "annotations: {config.kubernetes.io/local-config: \"true\"}", 1))

	// KRM-only shapes of the ResourceList itself.
	krm := func(name, s string) { all = append(all, input{name: name, krm: []byte(s)}) }
	const rl = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	krm("krm-items-map", rl+"items: {a: b}\n")
	krm("krm-items-scalar", rl+"items: 5\n")
	krm("krm-items-null", rl+"items: null\n")
	krm("krm-function-config-list", rl+"functionConfig: [1]\nitems: []\n")
	krm("krm-function-config-bomb", rl+"functionConfig:\n  "+strings.ReplaceAll(strings.TrimSpace(laughs(9, 10)), "\n", "\n  ")+"\nitems: []\n")
	krm("krm-max-services-wrong", rl+"functionConfig: {apiVersion: v1, kind: ConfigMap, data: {maxServices: [1]}}\nitems: ["+flow(validFLApp)+"]\n")
	krm("krm-max-services-huge", rl+"functionConfig: {apiVersion: v1, kind: ConfigMap, data: {maxServices: \"99999999999999999999999\"}}\nitems: ["+flow(validFLApp)+"]\n")
	krm("krm-results-injected", rl+"items: ["+flow(validFLApp)+"]\nresults: [{message: fake, severity: error}]\n")
	krm("krm-two-resourcelists", rl+"items: []\n---\n"+rl+"items: []\n")
	krm("krm-wrong-version", "apiVersion: config.kubernetes.io/v9\nkind: ResourceList\nitems: []\n")
	krm("krm-many-items", rl+"items:\n"+strings.Repeat("- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n", 10000))
	krm("krm-deep-items", rl+"items: "+strings.Repeat("[", 50000)+strings.Repeat("]", 50000)+"\n")
	krm("krm-nul", rl+"items: [\x00]\n")

	// 12. Symlink farms, FIFOs and devices (render only). Each hides a
	// secret outside the PATH: it must never reach any output.
	farm := func(name string, build func(root, repo string) ([]string, error)) {
		all = append(all, input{name: "farm-" + name, secret: secretMarker, tree: func(dir string) ([]string, error) {
			repo := filepath.Join(dir, "repo")
			if err := os.MkdirAll(repo, 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "secret.yaml"), []byte(secretObject), 0o600); err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Join(dir, "private"), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "private", "creds.json"), []byte(secretJSON), 0o600); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(repo, "app.yaml"), []byte(validFLApp), 0o644); err != nil {
				return nil, err
			}
			return build(dir, repo)
		}})
	}
	link := os.Symlink
	farm("file-out", func(_, repo string) ([]string, error) {
		return []string{repo}, link("../secret.yaml", filepath.Join(repo, "link.yaml"))
	})
	farm("file-out-absolute", func(root, repo string) ([]string, error) {
		return []string{repo}, link(filepath.Join(root, "secret.yaml"), filepath.Join(repo, "link.yaml"))
	})
	farm("file-out-chain", func(_, repo string) ([]string, error) {
		if err := os.MkdirAll(filepath.Join(repo, "a", "b"), 0o755); err != nil {
			return nil, err
		}
		if err := link("../../../secret.yaml", filepath.Join(repo, "a", "b", "hop2.yaml")); err != nil {
			return nil, err
		}
		if err := link("b/hop2.yaml", filepath.Join(repo, "a", "hop1.yaml")); err != nil {
			return nil, err
		}
		return []string{repo}, link("a/hop1.yaml", filepath.Join(repo, "link.yaml"))
	})
	farm("dir-out", func(_, repo string) ([]string, error) {
		return []string{repo}, link("../private", filepath.Join(repo, "vendor"))
	})
	farm("dir-out-named-yaml", func(_, repo string) ([]string, error) {
		return []string{repo}, link("../private", filepath.Join(repo, "vendor.yaml"))
	})
	farm("root-arg-is-link-out", func(_, repo string) ([]string, error) {
		return []string{filepath.Join(repo, "apps")}, link("../private", filepath.Join(repo, "apps"))
	})
	farm("file-arg-is-link-out", func(_, repo string) ([]string, error) {
		return []string{filepath.Join(repo, "flapp.yaml")}, link("../secret.yaml", filepath.Join(repo, "flapp.yaml"))
	})
	farm("file-loop", func(_, repo string) ([]string, error) {
		if err := link("b.yaml", filepath.Join(repo, "a.yaml")); err != nil {
			return nil, err
		}
		return []string{repo}, link("a.yaml", filepath.Join(repo, "b.yaml"))
	})
	farm("self-loop", func(_, repo string) ([]string, error) {
		return []string{repo}, link("self.yaml", filepath.Join(repo, "self.yaml"))
	})
	farm("dir-loop-parent", func(_, repo string) ([]string, error) {
		if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
			return nil, err
		}
		return []string{repo}, link("..", filepath.Join(repo, "sub", "up"))
	})
	farm("dir-loop-self", func(_, repo string) ([]string, error) {
		return []string{repo}, link(".", filepath.Join(repo, "here"))
	})
	farm("dir-loop-pair", func(_, repo string) ([]string, error) {
		for _, d := range []string{"x", "y"} {
			if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
				return nil, err
			}
		}
		if err := link("../y", filepath.Join(repo, "x", "to-y")); err != nil {
			return nil, err
		}
		return []string{repo}, link("../x", filepath.Join(repo, "y", "to-x"))
	})
	farm("fan-out-exponential", func(_, repo string) ([]string, error) {
		// d0/{l,r} -> d1, d1/{l,r} -> d2, ...: 2^30 paths if walked naively.
		for i := 0; i <= 30; i++ {
			d := filepath.Join(repo, fmt.Sprintf("d%02d", i))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
			if i == 30 {
				continue
			}
			for _, n := range []string{"l", "r"} {
				if err := link(fmt.Sprintf("../d%02d", i+1), filepath.Join(d, n)); err != nil {
					return nil, err
				}
			}
		}
		return []string{filepath.Join(repo, "d00")}, nil
	})
	farm("chain-30-inside", func(_, repo string) ([]string, error) {
		prev := "app.yaml"
		for i := 0; i < 30; i++ {
			name := fmt.Sprintf("hop%02d.yml", i)
			if err := link(prev, filepath.Join(repo, name)); err != nil {
				return nil, err
			}
			prev = name
		}
		return []string{filepath.Join(repo, prev)}, nil
	})
	farm("chain-60-inside", func(_, repo string) ([]string, error) {
		prev := "app.yaml"
		for i := 0; i < 60; i++ {
			name := fmt.Sprintf("hop%02d.txt", i)
			if err := link(prev, filepath.Join(repo, name)); err != nil {
				return nil, err
			}
			prev = name
		}
		return []string{repo}, link(prev, filepath.Join(repo, "last.yaml"))
	})
	farm("dangling", func(_, repo string) ([]string, error) {
		return []string{repo}, link("nowhere.yaml", filepath.Join(repo, "dangling.yaml"))
	})
	farm("many-links-same-file", func(_, repo string) ([]string, error) {
		for i := 0; i < 500; i++ {
			if err := link("app.yaml", filepath.Join(repo, fmt.Sprintf("copy%03d.yaml", i))); err != nil {
				return nil, err
			}
		}
		return []string{repo}, nil
	})
	farm("dev-zero", func(_, repo string) ([]string, error) {
		return []string{repo}, link("/dev/zero", filepath.Join(repo, "zero.yaml"))
	})
	farm("dev-urandom-arg", func(_, repo string) ([]string, error) {
		return []string{filepath.Join(repo, "random.yaml")}, link("/dev/urandom", filepath.Join(repo, "random.yaml"))
	})
	farm("fifo", func(_, repo string) ([]string, error) {
		return []string{repo}, syscall.Mkfifo(filepath.Join(repo, "pipe.yaml"), 0o644)
	})
	farm("hidden-dir-link-out", func(_, repo string) ([]string, error) {
		return []string{repo}, link("../private", filepath.Join(repo, ".hidden"))
	})
	farm("proc-self-environ", func(_, repo string) ([]string, error) {
		return []string{repo}, link("/proc/self/environ", filepath.Join(repo, "env.yaml"))
	})
	return all
}

const (
	secretMarker = "hunter2-SECRET-MARKER"
	secretObject = "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: leader}\nstringData: {password: " + secretMarker + "}\n"
	secretJSON   = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"stringData":{"token":"` + secretMarker + `"}}`
)

// manyFLApps is n FLApps of `replicas` Workers each: a few kB asking for
// n*replicas Services.
func manyFLApps(n, replicas int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: big%02d, namespace: default}\n"+
			"spec: {role: Leader, flReplicaSpecs: {Worker: {replicas: %d, template: {spec: {containers: [{name: tensorflow}]}}}}}\n", i, replicas)
	}
	return b.String()
}

// flow prints a YAML document as one flow-style (JSON-like) line.
func flow(doc string) string {
	node, err := yaml.Parse(doc)
	if err != nil {
		panic(err)
	}
	s, err := node.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return string(s)
}

func utf16(s string, bigEndian bool) []byte {
	var b bytes.Buffer
	if bigEndian {
		b.Write([]byte{0xfe, 0xff})
	} else {
		b.Write([]byte{0xff, 0xfe})
	}
	for _, r := range s {
		if bigEndian {
			b.Write([]byte{byte(r >> 8), byte(r)})
		} else {
			b.Write([]byte{byte(r), byte(r >> 8)})
		}
	}
	return b.Bytes()
}

// nodePaths lists the path of every value below node (mapping values and
// sequence items), as keys and indexes.
func nodePaths(node *yaml.Node, prefix []string) [][]string {
	var out [][]string
	switch node.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			p := append(append([]string(nil), prefix...), node.Content[i].Value)
			out = append(out, p)
			out = append(out, nodePaths(node.Content[i+1], p)...)
		}
	case yaml.SequenceNode:
		for i, c := range node.Content {
			p := append(append([]string(nil), prefix...), fmt.Sprint(i))
			out = append(out, p)
			out = append(out, nodePaths(c, p)...)
		}
	}
	return out
}

// setAt replaces the value at path with value.
func setAt(node *yaml.Node, path []string, value *yaml.Node) {
	for len(path) > 0 {
		var next *yaml.Node
		switch node.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(node.Content); i += 2 {
				if node.Content[i].Value == path[0] {
					if len(path) == 1 {
						node.Content[i+1] = value
						return
					}
					next = node.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			var idx int
			_, _ = fmt.Sscan(path[0], &idx)
			if len(path) == 1 {
				node.Content[idx] = value
				return
			}
			next = node.Content[idx]
		}
		node, path = next, path[1:]
	}
}

// wrapKRM puts every document of a YAML stream under items: of a
// ResourceList, textually, so raw bytes (NUL, BOM, CRLF) stay as they are.
func wrapKRM(stream []byte) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, doc := range bytes.Split(stream, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		lines := bytes.Split(bytes.TrimRight(doc, "\n"), []byte("\n"))
		for i, l := range lines {
			if i == 0 {
				b.WriteString("- ")
			} else {
				b.WriteString("  ")
			}
			b.Write(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
