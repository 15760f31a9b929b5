package argocd

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
)

// flappStates are the values of status.appState the fedlearner operator
// writes; the health check must have a test case for each.
var flappStates = []string{
	"FLStateNew", "FLStateBootstrapped", "FLStateSyncSent", "FLStateRunning",
	"FLStateComplete", "FLStateFailing", "FLStateShutDown", "FLStateFailed",
}

// healthTests is a health_test.yaml, the format of Argo CD's built-in checks.
type healthTests struct {
	Tests []struct {
		InputPath    string               `json:"inputPath"`
		HealthStatus *health.HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

func customizationsDir() string {
	return filepath.Join(env.repo, "examples", "argocd", "health")
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	obj := map[string]any{}
	require.NoError(t, yaml.Unmarshal(data, &obj))
	return &unstructured.Unstructured{Object: obj}
}

// Every case of every health_test.yaml under examples/argocd/health
// through Argo CD's own health code, as its application controller runs it:
// gitops-engine's health.GetResourceHealth with the script as a resource
// override (lua.ResourceHealthOverrides), so without Lua's open libraries,
// unlike Argo CD's own TestLuaHealthScript.
func TestHealthChecks(t *testing.T) {
	var scripts []string
	require.NoError(t, filepath.WalkDir(customizationsDir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "health.lua" {
			scripts = append(scripts, p)
		}
		return err
	}))
	require.NotEmpty(t, scripts)
	for _, script := range scripts {
		dir := filepath.Dir(script)
		rel, err := filepath.Rel(customizationsDir(), dir)
		require.NoError(t, err)
		source, err := os.ReadFile(script)
		require.NoError(t, err)
		var cases healthTests
		data, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
		require.NoError(t, err)
		require.NoError(t, yaml.UnmarshalStrict(data, &cases))
		require.NotEmpty(t, cases.Tests, rel)
		for _, tc := range cases.Tests {
			t.Run(filepath.Join(rel, tc.InputPath), func(t *testing.T) {
				obj := readObject(t, filepath.Join(dir, tc.InputPath))
				gk := obj.GroupVersionKind().GroupKind()
				require.Equal(t, filepath.ToSlash(rel), gk.Group+"/"+gk.Kind, "the directory names the object's group and kind")
				overrides := lua.ResourceHealthOverrides{
					lua.GetConfigMapKey(obj.GroupVersionKind()): v1alpha1.ResourceOverride{HealthLua: string(source)},
				}
				got, err := health.GetResourceHealth(obj, overrides)
				require.NoError(t, err)
				assert.Equal(t, tc.HealthStatus, got)
			})
		}
	}
}

// The FLApp check has a case for every state of the operator, a missing
// status and an unknown state; without it Argo CD has no health for an FLApp
// at all (so an Application of FLApps looks Healthy whatever the jobs do).
func TestFLAppHealthCoversEveryState(t *testing.T) {
	dir := filepath.Join(customizationsDir(), "fedlearner.k8s.io", "FLApp")
	var cases healthTests
	data, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, &cases))
	seen := map[string]health.HealthStatusCode{}
	for _, tc := range cases.Tests {
		obj := readObject(t, filepath.Join(dir, tc.InputPath))
		state, _, err := unstructured.NestedString(obj.Object, "status", "appState")
		require.NoError(t, err)
		seen[state] = tc.HealthStatus.Status
		assert.NotEmpty(t, tc.HealthStatus.Message, tc.InputPath)
		if state != "" {
			assert.True(t, strings.HasPrefix(tc.HealthStatus.Message, state+": ") || tc.HealthStatus.Status == health.HealthStatusUnknown,
				"%s: the message starts with the state", tc.InputPath)
		}
	}
	for _, s := range flappStates {
		assert.Contains(t, seen, s)
	}
	assert.Equal(t, health.HealthStatusProgressing, seen[""], "no status yet")
	unknown := 0
	for s, code := range seen {
		if code == health.HealthStatusUnknown {
			unknown++
			assert.NotContains(t, flappStates, s)
		}
	}
	assert.Equal(t, 1, unknown, "one case of a state the check does not know")

	builtIn, err := health.GetResourceHealth(readObject(t, filepath.Join(dir, "testdata", "failed.yaml")), nil)
	require.NoError(t, err)
	assert.Nil(t, builtIn, "Argo CD has no health check of its own for FLApp")
}

// argocd-cm-patch.yaml installs exactly health.lua.
func TestArgoCDConfigMapPatchHoldsTheHealthCheck(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(customizationsDir(), "fedlearner.k8s.io", "FLApp", "health.lua"))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "argocd-cm-patch.yaml"))
	require.NoError(t, err)
	var patch struct {
		Data map[string]string `json:"data"`
	}
	require.NoError(t, yaml.UnmarshalStrict(data, &patch))
	assert.Equal(t, map[string]string{"resource.customizations.health.fedlearner.k8s.io_FLApp": string(script)}, patch.Data)
}

// luaHealthTests is health_test.yaml as Argo CD's own TestLuaHealthScript
// (util/lua/health_test.go) reads it: sigs.k8s.io/yaml, not strict.
type luaHealthTests struct {
	Tests []struct {
		InputPath    string               `yaml:"inputPath"`
		HealthStatus *health.HealthStatus `yaml:"healthStatus"`
	} `yaml:"tests"`
}

// examples/argocd/health is laid out as Argo CD's resource_customizations/,
// so that its fedlearner.k8s.io folder can be submitted as it is. This runs
// it the way Argo CD v3.6.1's TestLuaHealthScript runs every built-in check
// (that test is in a _test.go file, so it is restated here, call for call):
// walk the folder for health.lua, read health_test.yaml beside it, and for
// each case a VM with UseOpenLibs (built-in scripts get Lua's open
// libraries), the script found where the built-in lookup
// (getPredefinedLuaScripts) would look for it, <group>/<Kind>/health.lua of
// the object's own group and kind, and ExecuteHealthLua's result equal to
// the case's healthStatus. Argo CD v3.6.1 has no built-in FLApp check: the
// VM's own lookup (GetHealthScript) finds none, or this test would be
// testing a script that Argo CD does not use.
func TestLuaHealthScriptAsBuiltIn(t *testing.T) {
	root := customizationsDir()
	builtIn := os.DirFS(root) // stands for resource_customizations.Embedded
	found := 0
	err := filepath.Walk(root, func(path string, _ os.FileInfo, err error) error {
		if !strings.Contains(path, "health.lua") {
			return nil
		}
		require.NoError(t, err)
		found++
		dir := filepath.Dir(path)
		yamlBytes, err := os.ReadFile(dir + "/health_test.yaml")
		require.NoError(t, err)
		var resourceTest luaHealthTests
		require.NoError(t, yaml.Unmarshal(yamlBytes, &resourceTest))
		require.NotEmpty(t, resourceTest.Tests, dir)
		for i := range resourceTest.Tests {
			test := resourceTest.Tests[i]
			t.Run(filepath.Join(strings.TrimPrefix(dir, root+"/"), test.InputPath), func(t *testing.T) {
				vm := lua.VM{UseOpenLibs: true}
				obj := readObject(t, filepath.Join(dir, test.InputPath))
				upstream, _, err := vm.GetHealthScript(obj)
				require.NoError(t, err)
				require.Empty(t, upstream, "Argo CD now has a built-in check for %s: compare it with this one", obj.GroupVersionKind().GroupKind())
				script, err := fs.ReadFile(builtIn, lua.GetConfigMapKey(obj.GroupVersionKind())+"/health.lua")
				require.NoError(t, err, "the built-in lookup finds the script by the object's group and kind")
				result, err := vm.ExecuteHealthLua(obj, string(script))
				require.NoError(t, err)
				assert.Equal(t, test.HealthStatus, result)
			})
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 1, found, "one health check: FLApp")
}
