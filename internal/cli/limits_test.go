package cli

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// limitsTable is Limits as SECURITY.md's table shows them.
func limitsTable() string {
	var b strings.Builder
	b.WriteString("| limit | default | flag (`render`) | config key | where it is enforced |\n|---|---|---|---|---|\n")
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, l := range Limits {
		b.WriteString("| " + l.Name + " | " + l.Default + " | " + code(l.Flag) + " | " + code(l.ConfigKey) + " | " + l.Check + " |\n")
	}
	return b.String()
}

// The markers around SECURITY.md's limits table: everything between them
// is the generated table.
const (
	limitsBegin = "<!-- limits: generated from internal/cli.Limits by UPDATE_LIMITS=1 go test ./internal/cli -run TestSecurityLimitsTable -->\n"
	limitsEnd   = "<!-- end of limits -->\n"
)

const securityMD = "../../SECURITY.md"

// TestSecurityLimitsTable: SECURITY.md lists every ceiling as Limits does,
// and nothing else: the whole section between the markers must be the
// generated table (a blank line, the table, a blank line), so a paste
// inside it fails too. UPDATE_LIMITS=1 rewrites the section. This keeps the
// document in step with the code; what the defaults must be is
// userLimits, and what each does at its default is TestLimitsHoldAtTheirDefaults.
func TestSecurityLimitsTable(t *testing.T) {
	doc, err := os.ReadFile(securityMD)
	require.NoError(t, err)
	before, section, after, err := limitsSection(string(doc))
	require.NoError(t, err)
	want := "\n" + limitsTable() + "\n"
	if os.Getenv("UPDATE_LIMITS") == "1" {
		require.NoError(t, os.WriteFile(securityMD, []byte(before+want+after), 0o644))
		t.Skip("rewrote SECURITY.md's limits section; read the diff")
	}
	if section != want {
		t.Errorf("SECURITY.md's limits section (between %q and %q) is not the table internal/cli.Limits makes: "+
			"run UPDATE_LIMITS=1 go test ./internal/cli -run TestSecurityLimitsTable, then read the diff\n%s",
			strings.TrimSpace(limitsBegin), strings.TrimSpace(limitsEnd), lineDiff(want, section))
	}
}

// limitsSection splits doc at the limits markers, which must each appear
// once, in order, on lines of their own. The markers stay in before and
// after.
func limitsSection(doc string) (before, section, after string, err error) {
	if strings.Count(doc, limitsBegin) != 1 || strings.Count(doc, limitsEnd) != 1 {
		return "", "", "", fmt.Errorf("SECURITY.md must hold each limits marker once, on a line of its own: %q, %q", limitsBegin, limitsEnd)
	}
	begin, end := strings.Index(doc, limitsBegin), strings.Index(doc, limitsEnd)
	b := begin + len(limitsBegin)
	if end < b || (begin > 0 && doc[begin-1] != '\n') || doc[end-1] != '\n' {
		return "", "", "", fmt.Errorf("SECURITY.md's limits markers must be on lines of their own, the begin marker first")
	}
	return doc[:b], doc[b:end], doc[end:], nil
}

// lineDiff names the first line where got departs from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d of the section:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return ""
}

// userLimits is every ceiling as users rely on it, written by hand rather
// than taken from the constants Limits is built from: its name, its default,
// the flag of render that sets it and the functionConfig setting. A changed
// default must change this list too; SECURITY.md's table (generated from
// Limits, TestSecurityLimitsTable) then shows what is here.
var userLimits = []struct{ name, def, flag, configKey string }{
	{"file size", "8Mi", "--max-file-size", ""},
	{"input size", "32Mi", "--max-input-size", ""},
	{"YAML nodes per document", "600000", "--max-document-nodes", ""},
	{"YAML nodes per object", "100000", "--max-object-nodes", ""},
	{"objects", "200000", "--max-objects", ""},
	{"kustomization builds", "1000", "--max-build-count", ""},
	{"kustomize build cost", "30000000", "--max-build-cost", ""},
	{"kustomize build output", "64Mi", "--max-build-output", ""},
	{"kustomize build time", "45s", "--max-build-time", ""},
	{"Services per run", "100000", "--max-services", "maxServices"},
	{"Services of entries before the root's last", "2000", "", ""},
	{"Services per FLApp", "10000", "", "maxServicesPerFLApp"},
	{"--check file", "256Mi", "", ""},
	{"--check diff", "8Mi", "", ""},
	{"error results", "100", "", ""},
	{"echoed value", "256 bytes", "", ""},
	{"echoed message", "4096 bytes", "", ""},
	{"memory, hard (render)", "320Mi", "--max-memory", ""},
	{"CPU time (render)", "1m0s", "--max-cpu-time", ""},
	{"heap, soft (render mode)", "192Mi", "", ""},
	{"heap, soft (kustomize build)", "256Mi", "", ""},
	{"heap, soft (discover)", "96Mi", "", ""},
	{"render spool in memory", "1Mi", "", ""},
}

// render --help shows every --max-* flag with the default userLimits gives
// it, and no other; the two config settings default to what it gives them.
func TestRenderHelpShowsTheLimits(t *testing.T) {
	code, out, stderr := runMain([]string{"render", "--help"}, "")
	require.Equal(t, 0, code, stderr)
	want := map[string]string{}
	for _, l := range userLimits {
		if l.flag != "" {
			want[l.flag] = l.def
		}
	}
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(--max-[a-z-]+) \S+ .*\(default ([^)]*)\)$`).FindAllStringSubmatch(out, -1) {
		got[m[1]] = m[2]
	}
	assert.Equal(t, want, got, out)
	assert.Len(t, regexp.MustCompile(`(?m)^\s+--max-`).FindAllString(out, -1), len(want), "a --max-* flag without a default in the help:\n%s", out)

	cfg := fn.DefaultConfig()
	for _, l := range userLimits {
		switch l.configKey {
		case "":
		case "maxServices":
			assert.Equal(t, l.def, strconv.FormatInt(cfg.MaxServices, 10), l.configKey)
		case "maxServicesPerFLApp":
			assert.Equal(t, l.def, strconv.FormatInt(cfg.MaxServicesPerFLApp, 10), l.configKey)
		default:
			t.Errorf("config key %s: not checked", l.configKey)
		}
	}
}

// A loader built without ceilings enforces the file and input sizes users
// are told.
func TestLoaderDefaultsAreTheUserLimits(t *testing.T) {
	ld, err := repofs.New(repofs.RootOnly, repofs.Limits{})
	require.NoError(t, err)
	def := map[string]string{}
	for _, l := range userLimits {
		def[l.flag] = l.def
	}
	fileSize, inputSize := resource.MustParse(def["--max-file-size"]), resource.MustParse(def["--max-input-size"])
	assert.Equal(t, fileSize.Value(), ld.Limits().MaxFileSize)
	assert.Equal(t, inputSize.Value(), ld.Limits().MaxInputSize)
}

// yamlNodes counts the nodes of an object as written (the mapping and
// everything in it), independently of the code under test.
func yamlNodes(t *testing.T, object string) int {
	t.Helper()
	n, err := yaml.Parse(object)
	require.NoError(t, err)
	var count func(*yaml.Node) int
	count = func(n *yaml.Node) int {
		c := 1
		for _, child := range n.Content {
			c += count(child)
		}
		return c
	}
	return count(n.YNode())
}

// configMap is a ConfigMap with entries data entries.
func configMap(name string, entries int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n")
	for i := range entries {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	return b.String()
}

// --max-object-nodes: an object of exactly the ceiling's nodes, counted as
// written (not the annotations the reader adds), is read; one over it is
// refused with the flag named, nothing on stdout, exit 1.
func TestMaxObjectNodes(t *testing.T) {
	item := configMap("big", 20)
	nodes := yamlNodes(t, item)
	list := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(item, "\n"), "\n", "\n  ") + "\n"
	for name, tc := range map[string]struct {
		file, ceiling, want string // want "" when the render passes
	}{
		"a List item at the ceiling": {list, strconv.Itoa(nodes), ""},
		"a List item over it":        {list, strconv.Itoa(nodes - 1), fmt.Sprintf("x.yaml: document 1, items[0] (line 4): ConfigMap big has over %d YAML nodes (--max-object-nodes)", nodes-1)},
		"a document at it":           {item, strconv.Itoa(nodes), ""},
		"a document over it":         {item, strconv.Itoa(nodes - 1), fmt.Sprintf("x.yaml: document 1 (line 1): ConfigMap big has over %d YAML nodes (--max-object-nodes)", nodes-1)},
		"the default":                {configMap("huge", DefaultMaxObjectNodes/2), "", fmt.Sprintf("x.yaml: document 1 (line 1): ConfigMap huge has over %d YAML nodes (--max-object-nodes)", DefaultMaxObjectNodes)},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"x.yaml": tc.file})
			args := []string{"render", dir}
			if tc.ceiling != "" {
				args = []string{"render", "--max-object-nodes", tc.ceiling, dir}
			}
			code, out, stderr := runMain(args, "")
			if tc.want == "" {
				assert.Equal(t, 0, code, stderr)
				assert.Contains(t, out, "name: big")
				return
			}
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// --max-objects: exactly the ceiling's objects are read, however they are
// spread over files, documents and Lists; one more is refused with the
// flag named.
func TestMaxObjectsBoundary(t *testing.T) {
	cm := func(name string) string { return configMap(name, 1) }
	items := func(n int) string {
		s := "apiVersion: v1\nkind: List\nitems:\n"
		for i := range n {
			s += fmt.Sprintf("- {apiVersion: v1, kind: ConfigMap, metadata: {name: i%d}}\n", i)
		}
		return s
	}
	for name, tc := range map[string]struct {
		files map[string]string
		want  string // "" when 3 objects pass
	}{
		"files at it":        {map[string]string{"a.yaml": cm("a"), "b.yaml": cm("b"), "c.yaml": cm("c")}, ""},
		"files over it":      {map[string]string{"a.yaml": cm("a"), "b.yaml": cm("b"), "c.yaml": cm("c"), "d.yaml": cm("d")}, "d.yaml: holds up to 1 documents, bringing the input over the ceiling of 3 objects (--max-objects)"},
		"documents at it":    {map[string]string{"a.yaml": cm("a") + "---\n" + cm("b"), "b.yaml": cm("c")}, ""},
		"documents over it":  {map[string]string{"a.yaml": cm("a") + "---\n" + cm("b"), "b.yaml": cm("c") + "---\n" + cm("d")}, "b.yaml: holds up to 2 documents, bringing the input over the ceiling of 3 objects (--max-objects)"},
		"a List at it":       {map[string]string{"l.yaml": items(3)}, ""},
		"a List over it":     {map[string]string{"l.yaml": items(4)}, "l.yaml: document 1, items[3] (line 7): brings the input to 4 objects, over the ceiling of 3 (--max-objects)"},
		"a List after files": {map[string]string{"a.yaml": cm("a"), "l.yaml": items(3)}, "l.yaml: document 1, items[2] (line 6): brings the input to 4 objects, over the ceiling of 3 (--max-objects)"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			code, out, stderr := runMain([]string{"render", "--max-objects", "3", dir}, "")
			if tc.want == "" {
				assert.Equal(t, 0, code, stderr)
				assert.Len(t, objects(t, out), 3)
				return
			}
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// --max-input-size counts stdin together with the files, wherever "-"
// stands among the PATHs.
func TestMaxInputSizeCountsStdin(t *testing.T) {
	file := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: file\n"
	stdin := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stdin\n"
	dir := writeFiles(t, map[string]string{"x.yaml": file})
	both := len(file) + len(stdin)
	over := fmt.Sprintf("<stdin> brings the input to %d bytes, over the ceiling of %d bytes in total (--max-input-size)", both, both-1)
	for name, tc := range map[string]struct {
		paths   []string
		stdin   string
		ceiling int
		want    string // "" when the render passes
	}{
		"the files alone": {[]string{dir}, "", both - 1, ""},
		"stdin alone":     {[]string{"-"}, stdin, both - 1, ""},
		"stdin, then dir": {[]string{"-", dir}, stdin, both - 1, over},
		"dir, then stdin": {[]string{dir, "-"}, stdin, both - 1, over},
		"both, at it":     {[]string{"-", dir}, stdin, both, ""},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runMain(append([]string{"render", "--max-input-size", strconv.Itoa(tc.ceiling)}, tc.paths...), tc.stdin)
			if tc.want == "" {
				assert.Equal(t, 0, code, stderr)
				assert.NotEmpty(t, out)
				return
			}
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
