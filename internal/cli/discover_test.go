package cli

import (
	"io"
	"math"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const flappDoc = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: mnist
spec:
  role: Leader
  peerSpecs: {Follower: {peerURL: "x:1"}}
  flReplicaSpecs: {}
`

const configMapDoc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"

// kustomizationDoc lists a.yaml and the transformer entry fn.
func kustomizationDoc(fn string) string {
	return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- a.yaml\ntransformers:\n- " + fn + "\n"
}

// functionDoc is a transformer entry running the image.
func functionDoc(image string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: " + image + "\ndata:\n  ownerReferences: Never\n"
}

// utf16 is text in UTF-16, big- or little-endian, with or without a byte
// order mark.
func utf16(text string, bigEndian, bom bool) string {
	var b []byte
	put := func(c uint16) {
		if bigEndian {
			b = append(b, byte(c>>8), byte(c))
		} else {
			b = append(b, byte(c), byte(c>>8))
		}
	}
	if bom {
		put(0xfeff)
	}
	for _, c := range []byte(text) {
		put(uint16(c))
	}
	return string(b)
}

func TestDiscover(t *testing.T) {
	indented := "  " + strings.ReplaceAll(strings.TrimSuffix(flappDoc, "\n"), "\n", "\n  ") + "\n"
	cases := []struct {
		name   string
		files  map[string]string
		config string
		want   string // the reason's prefix; "" means no match
	}{
		{"plain", map[string]string{"a.yaml": flappDoc}, "", "FLApp in a.yaml"},
		{"in a List", map[string]string{"export.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + strings.TrimPrefix(indented, "  ")}, "", "FLApp in export.yaml"},
		{"double-quoted kind", map[string]string{"a.yaml": strings.Replace(flappDoc, "kind: FLApp", `kind: "FLApp"`, 1)}, "", "FLApp in a.yaml"},
		{"single-quoted kind", map[string]string{"a.yaml": strings.Replace(flappDoc, "kind: FLApp", `kind: 'FLApp'`, 1)}, "", "FLApp in a.yaml"},
		{"kind with a comment", map[string]string{"a.yaml": strings.Replace(flappDoc, "kind: FLApp", "kind: FLApp # job", 1)}, "", "FLApp in a.yaml"},
		{"kind spelt with an escape", map[string]string{"a.yaml": strings.Replace(flappDoc, "kind: FLApp", `kind: "\x46LApp"`, 1)}, "", "FLApp in a.yaml"},
		{"JSON", map[string]string{"a.json": `{"apiVersion":"fedlearner.k8s.io/v1alpha1","kind":"FLApp","metadata":{"name":"x"}}`}, "", "FLApp in a.json"},
		{"JSON with a unicode escape", map[string]string{"a.json": `{"apiVersion":"fedlearner.k8s.io/v1alpha1","kind":"FL\u0041pp","metadata":{"name":"x"}}`}, "", "FLApp in a.json"},
		// Once an object is seen, only files that can spell FLApp are parsed:
		// with the bytes FLApp or with an escape.
		{"an escaped kind after an object-only file", map[string]string{"a.yaml": configMapDoc, "b.yaml": strings.Replace(flappDoc, "kind: FLApp", `kind: "\x46LApp"`, 1)}, "", "FLApp in b.yaml"},
		{"a unicode escape after an object-only file", map[string]string{"a.yaml": configMapDoc, "b.json": `{"apiVersion":"fedlearner.k8s.io/v1alpha1","kind":"\u0046LApp","metadata":{"name":"x"}}`}, "", "FLApp in b.json"},
		{"second document", map[string]string{"all.yml": configMapDoc + "---\n" + flappDoc}, "", "FLApp in all.yml"},
		{"nested, after other files", map[string]string{"a.yaml": configMapDoc, "b/c/d.yaml": flappDoc}, "", "FLApp in b/c/d.yaml"},
		{"other version of the group", map[string]string{"a.yaml": strings.Replace(flappDoc, "v1alpha1", "v2", 1)}, "", "FLApp in a.yaml"},
		{"a file mentioning FLApp that does not parse", map[string]string{"a.yaml": configMapDoc, "b.yaml": "kind: FLApp\nmetadata: {name: [\n"}, "", "b.yaml mentions FLApp but does not parse"},
		// The YAML parser reads UTF-16 after a byte order mark, as the
		// render does, and refuses it without one (the render reports it).
		{"UTF-16LE", map[string]string{"a.yaml": configMapDoc, "b.yaml": utf16(flappDoc, false, true)}, "", "FLApp in b.yaml"},
		{"UTF-16BE", map[string]string{"a.yaml": configMapDoc, "b.yaml": utf16(flappDoc, true, true)}, "", "FLApp in b.yaml"},
		{"UTF-16LE with an escaped kind", map[string]string{"b.yaml": utf16(strings.Replace(flappDoc, "kind: FLApp", `kind: "\x46LApp"`, 1), false, true)}, "", "FLApp in b.yaml"},
		{"UTF-16 without a byte order mark", map[string]string{"b.yaml": utf16(flappDoc, false, false)}, "", "b.yaml mentions FLApp but does not parse"},
		{"a kustomization running flapp-services", map[string]string{"kustomization.yaml": kustomizationDoc("fn.yaml"), "a.yaml": flappDoc, "fn.yaml": functionDoc("ghcr.io/fedlearner/flapp-services:v1")}, "", "kustomization.yaml runs flapp-services as a transformer (fn.yaml)"},
		{"an extension-less Kustomization running it inline", map[string]string{"Kustomization": "resources: [a.yaml]\ntransformers:\n- |\n  " + strings.ReplaceAll(strings.TrimSpace(functionDoc("flapp-services")), "\n", "\n  ") + "\n", "a.yaml": flappDoc}, "", "Kustomization runs flapp-services as a transformer"},

		{"nothing at all", map[string]string{"README.md": "# empty\n"}, "", ""},
		{"only comments and separators", map[string]string{"a.yaml": "# nothing yet\n---\n"}, "", ""},
		{"only the config file", map[string]string{"fn.yaml": configMapDoc}, "fn.yaml", ""},
		{"a kustomization of FLApps without the function", map[string]string{"kustomization.yaml": "resources: [a.yaml]\n", "a.yaml": flappDoc}, "", ""},
		{"a kustomization running another function", map[string]string{"kustomization.yaml": kustomizationDoc("fn.yaml"), "a.yaml": flappDoc, "fn.yaml": functionDoc("example.com/set-labels:v1")}, "", ""},
		{"a Helm chart whose templates mention FLApp", map[string]string{"Chart.yaml": "apiVersion: v2\nname: x\nversion: 0.1.0\n", "templates/a.yaml": "kind: FLApp\nmetadata: {name: {{ .Values.name }}}\n"}, "", ""},

		{"other objects", map[string]string{"a.yaml": configMapDoc, "b.json": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`}, "", ""},
		{"a comment mentioning FLApp", map[string]string{"a.yaml": configMapDoc + "# kind: FLApp\n"}, "", ""},
		{"FLApp of another group", map[string]string{"a.yaml": strings.Replace(flappDoc, "fedlearner.k8s.io", "example.com", 1)}, "", ""},
		{"local-config FLApp", map[string]string{"a.yaml": configMapDoc, "b.yaml": strings.Replace(flappDoc, "  name: mnist\n", "  name: mnist\n  annotations: {config.kubernetes.io/local-config: \"true\"}\n", 1)}, "", ""},
		{"FLApp in a hidden directory", map[string]string{"a.yaml": configMapDoc, ".old/b.yaml": flappDoc}, "", ""},
		{"FLApp in a file the render does not read", map[string]string{"a.yaml": configMapDoc, "b.txt": flappDoc}, "", ""},
		{"FLApp as a value", map[string]string{"a.yaml": configMapDoc + "data:\n  kind: FLApp\n"}, "", ""},
		{"an unparseable file without FLApp", map[string]string{"a.yaml": "a: [\n"}, "", ""},
		{"UTF-16 other objects", map[string]string{"a.yaml": utf16(configMapDoc, false, true)}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(writeFiles(t, c.files))
			got, err := Discover(DiscoverOptions{Config: c.config})
			require.NoError(t, err)
			if c.want == "" {
				assert.Empty(t, got)
			} else {
				assert.True(t, strings.HasPrefix(got, c.want), "Discover = %q, want a reason starting with %q", got, c.want)
			}
		})
	}
}

// An overlay whose base runs flapp-services asked for it too.
func TestDiscoverOverlay(t *testing.T) {
	t.Chdir(writeFiles(t, map[string]string{
		"overlay/kustomization.yaml": "resources: [../base]\n",
		"base/kustomization.yaml":    kustomizationDoc("fn.yml"),
		"base/a.yaml":                flappDoc,
		"base/fn.yml":                functionDoc("flapp-services@sha256:0123"),
		"plain/kustomization.yaml":   "resources: [../base/a.yaml]\n",
	}))
	got, err := Discover(DiscoverOptions{Paths: []string{"overlay"}})
	require.NoError(t, err)
	assert.Equal(t, "overlay/kustomization.yaml runs flapp-services as a transformer (base/fn.yml)", got)
	got, err = Discover(DiscoverOptions{Paths: []string{"plain"}})
	require.NoError(t, err)
	assert.Empty(t, got, "a kustomization that only lists an FLApp file does not run the function")
}

// The command prints the reason, or nothing, and exits 0 either way: what
// Argo CD's discover.find expects; 1 only when a path cannot be read.
func TestDiscoverCommand(t *testing.T) {
	with := writeFiles(t, map[string]string{"a.yaml": flappDoc})
	without := writeFiles(t, map[string]string{"a.yaml": configMapDoc})

	code, out, stderr := runMain([]string{"discover", with}, "")
	assert.Equal(t, 0, code)
	assert.Equal(t, "FLApp in "+filepath.ToSlash(filepath.Join(with, "a.yaml"))+": document 1 (line 1)\n", out)
	assert.Empty(t, stderr)

	code, out, stderr = runMain([]string{"discover", without}, "")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Empty(t, stderr)

	code, out, stderr = runMain([]string{"discover", filepath.Join(without, "missing")}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "missing")
}

// TestDiscoverHeapLimit: the discover command lowers the process's soft
// heap limit to its own, and never raises one the operator set lower
// (GOMEMLIMIT); RunDiscover, a library call, leaves it as it was.
func TestDiscoverHeapLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	dir := t.TempDir()
	for _, tc := range []struct{ set, want int64 }{
		{math.MaxInt64, discoverMemoryLimit}, // GOMEMLIMIT unset
		{256 << 20, discoverMemoryLimit},     // the repo-server sidecar's
		{64 << 20, 64 << 20},
	} {
		debug.SetMemoryLimit(tc.set)
		require.NoError(t, RunDiscover(DiscoverOptions{Paths: []string{dir}}, io.Discard))
		assert.Equal(t, tc.set, debug.SetMemoryLimit(-1), "RunDiscover, GOMEMLIMIT %d", tc.set)
		assert.Equal(t, 0, Main("test", []string{"discover", dir}, strings.NewReader(""), io.Discard, io.Discard))
		assert.Equal(t, tc.want, debug.SetMemoryLimit(-1), "the command, GOMEMLIMIT %d", tc.set)
	}
}

// A kustomization root is claimed whenever its build runs flapp-services,
// wherever the entry is: in the root, a base, a base's base, a component,
// or a directory listed under transformers; and nothing else is. Each case
// is a repository asked as the plugin asks: `discover --argocd-env .` in
// the Application's directory, the repository root being the working
// directory less ARGOCD_APP_SOURCE_PATH.
func TestDiscoverKustomizationRoots(t *testing.T) {
	entry := functionDoc("ghcr.io/fedlearner/flapp-services:v0.1.0")
	other := functionDoc("example.com/set-labels:v1")
	const component = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ntransformers:\n- "
	repo := map[string]string{
		"leader/kustomization.yaml":     kustomizationDoc("flapp-services.yaml"),
		"leader/a.yaml":                 flappDoc,
		"leader/flapp-services.yaml":    entry,
		"plain/kustomization.yaml":      "resources: [a.yaml]\n",
		"plain/a.yaml":                  flappDoc,
		"another/kustomization.yaml":    kustomizationDoc("fn.yaml"),
		"another/a.yaml":                flappDoc,
		"another/fn.yaml":               other,
		"component/kustomization.yaml":  component + "flapp-services.yaml\n",
		"component/flapp-services.yaml": entry,
		"via-dir/kustomization.yaml":    "resources: [../plain]\ntransformers: [fns]\n",
		// A transformers directory: its kustomization's resources are the
		// configurations of the transformers its referrer runs.
		"via-dir/fns/kustomization.yaml":  "resources: [flapp-services.yaml]\n",
		"via-dir/fns/flapp-services.yaml": entry,
	}
	cases := []struct {
		name  string
		app   string            // the Application's path
		files map[string]string // besides repo
		entry string            // the file of the entry, as the reason names it; "" means no match
	}{
		{"the entry in the root", "leader", nil, "flapp-services.yaml"},
		{"an overlay whose base holds the entry", "staging", map[string]string{
			"staging/kustomization.yaml": "resources: [../leader]\nnamespace: fl-leader-staging\n",
		}, "../leader/flapp-services.yaml"},
		{"an overlay through the legacy bases field", "staging", map[string]string{
			"staging/kustomization.yaml": "bases: [../leader]\nnamespace: fl-leader-staging\n",
		}, "../leader/flapp-services.yaml"},
		{"an overlay of an overlay of the base", "envs/prod", map[string]string{
			"envs/staging/kustomization.yaml": "resources: [../../leader]\nnamespace: staging\n",
			"envs/prod/kustomization.yaml":    "resources: [../staging]\nnamespace: prod\n",
		}, "../../leader/flapp-services.yaml"},
		{"a component holding the entry", "with-component", map[string]string{
			"with-component/kustomization.yaml": "resources: [../plain]\ncomponents: [../component]\n",
		}, "../component/flapp-services.yaml"},
		{"an overlay of a base with that component", "over-component", map[string]string{
			"with-component/kustomization.yaml": "resources: [../plain]\ncomponents: [../component]\n",
			"over-component/kustomization.yaml": "resources: [../with-component]\nnamespace: fl\n",
		}, "../component/flapp-services.yaml"},
		{"the entry in a directory listed under transformers", "via-dir", nil, "fns/flapp-services.yaml"},
		{"an overlay of a root with that transformers directory", "over-dir", map[string]string{
			"over-dir/kustomization.yaml": "resources: [../via-dir]\nnamespace: fl\n",
		}, "../via-dir/fns/flapp-services.yaml"},

		{"a kustomization of FLApps without the function", "plain", nil, ""},
		{"an overlay of a base without the function", "over-plain", map[string]string{
			"over-plain/kustomization.yaml": "resources: [../plain]\nnamespace: fl\n",
		}, ""},
		{"an overlay of a base running another function", "over-another", map[string]string{
			"over-another/kustomization.yaml": "resources: [../another]\n",
		}, ""},
		{"a component running another function", "other-component", map[string]string{
			"other-component/kustomization.yaml":      "resources: [../plain]\ncomponents: [comp]\n",
			"other-component/comp/kustomization.yaml": component + "fn.yaml\n",
			"other-component/comp/fn.yaml":            other,
		}, ""},
		{"a transformers directory running another function", "other-dir", map[string]string{
			"other-dir/kustomization.yaml":     "resources: [../plain]\ntransformers: [fns]\n",
			"other-dir/fns/kustomization.yaml": "resources: [fn.yaml]\n",
			"other-dir/fns/fn.yaml":            other,
		}, ""},
		{"a kustomization whose subdirectory, which it does not list, builds the base", "beside", map[string]string{
			"beside/kustomization.yaml":      "resources: [cm.yaml]\n",
			"beside/cm.yaml":                 configMapDoc,
			"beside/more/kustomization.yaml": "resources: [../../leader]\n",
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range repo {
				files[k] = v
			}
			for k, v := range c.files {
				files[k] = v
			}
			root := writeFiles(t, files)
			t.Chdir(filepath.Join(root, filepath.FromSlash(c.app)))
			t.Setenv("ARGOCD_APP_SOURCE_PATH", c.app)

			got, err := Discover(DiscoverOptions{Root: root})
			require.NoError(t, err)
			code, out, stderr := runMain([]string{"discover", "--argocd-env", "."}, "")
			assert.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			if c.entry == "" {
				assert.Empty(t, got)
				assert.Empty(t, out)
				return
			}
			want := "kustomization.yaml runs flapp-services as a transformer (" + c.entry + ")"
			assert.Equal(t, want, got)
			assert.Equal(t, want+"\n", out, "the command prints the reason")
		})
	}
}
