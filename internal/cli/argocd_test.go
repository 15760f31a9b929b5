package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookupIn is os.LookupEnv over a fixed environment.
func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

func noFlags(string) bool { return false }

// What Argo CD v3.6.1 sets for an Application whose plugin source has
// parameters: the JSON array and, for each string parameter, PARAM_<NAME>.
func argoCDParams(json, ownerRefs string) map[string]string {
	env := map[string]string{"ARGOCD_APP_PARAMETERS": json}
	if ownerRefs != "" {
		env["PARAM_OWNER_REFERENCES"] = ownerRefs
	}
	return env
}

func with(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestRenderOptionsFromArgoCD(t *testing.T) {
	cases := map[string]struct {
		env       map[string]string
		ownerRefs string
		config    string
	}{
		"nothing set: Never":             {nil, "Never", ""},
		"no parameters (JSON null)":      {argoCDParams("null", ""), "Never", ""},
		"plugin env":                     {map[string]string{"ARGOCD_ENV_FLAPP_OWNER_REFERENCES": "IfKnown"}, "IfKnown", ""},
		"parameter":                      {argoCDParams(`[{"name":"owner-references","string":"Required"}]`, "Required"), "Required", ""},
		"parameter over plugin env":      {with(argoCDParams(`[{"name":"owner-references","string":"Never"}]`, "Never"), "ARGOCD_ENV_FLAPP_OWNER_REFERENCES", "IfKnown"), "Never", ""},
		"empty parameter counts unset":   {with(argoCDParams(`[{"name":"owner-references","string":""}]`, ""), "ARGOCD_ENV_FLAPP_OWNER_REFERENCES", "IfKnown"), "IfKnown", ""},
		"empty plugin env counts unset":  {map[string]string{"ARGOCD_ENV_FLAPP_OWNER_REFERENCES": ""}, "Never", ""},
		"parameter spelt as Argo CD may": {argoCDParams(`[{"name":"Owner_References","string":"IfKnown"}]`, "IfKnown"), "IfKnown", ""},
		// Without the JSON (as from an Argo CD before v2.6) PARAM_ is read.
		"PARAM_ alone": {map[string]string{"PARAM_OWNER_REFERENCES": "IfKnown"}, "IfKnown", ""},
		// An empty ARGOCD_APP_PARAMETERS counts as unset, as every empty value.
		"PARAM_ under an empty JSON": {map[string]string{"ARGOCD_APP_PARAMETERS": "", "PARAM_OWNER_REFERENCES": "IfKnown"}, "IfKnown", ""},
		"PARAM_ under a blank JSON":  {map[string]string{"ARGOCD_APP_PARAMETERS": " \n", "PARAM_OWNER_REFERENCES": "Required"}, "Required", ""},
		// The JSON names every parameter with its type: it decides.
		"the JSON over PARAM_":    {argoCDParams("[]", "IfKnown"), "Never", ""},
		"config from plugin env":  {map[string]string{"ARGOCD_ENV_FLAPP_CONFIG": "flapp-services.yaml"}, "Never", "flapp-services.yaml"},
		"unrelated env untouched": {map[string]string{"ARGOCD_APP_NAME": "x", "ARGOCD_ENV_OTHER": "y", "PARAM_OTHER": "z"}, "Never", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			opts, err := RenderOptionsFromArgoCD(lookupIn(c.env), RenderOptions{Paths: []string{"."}}, noFlags)
			require.NoError(t, err)
			assert.Equal(t, RenderOptions{OwnerReferences: c.ownerRefs, Config: c.config, Paths: []string{"."}}, opts)
		})
	}
}

// An explicit flag wins over everything the environment says.
func TestRenderOptionsFromArgoCDFlagsWin(t *testing.T) {
	env := with(argoCDParams(`[{"name":"owner-references","string":"Required"}]`, "Required"), "ARGOCD_ENV_FLAPP_CONFIG", "from-env.yaml")
	given := RenderOptions{OwnerReferences: "IfKnown", Config: "from-flag.yaml"}
	opts, err := RenderOptionsFromArgoCD(lookupIn(env), given, func(string) bool { return true })
	require.NoError(t, err)
	assert.Equal(t, given, opts)

	// The flag --owner-references does not excuse a wrong value in the
	// environment: it is read whole, so a typo never hides.
	_, err = RenderOptionsFromArgoCD(lookupIn(map[string]string{"ARGOCD_ENV_FLAPP_OWNER_REFERENCES": "Sometimes"}), given, func(string) bool { return true })
	require.Error(t, err)
}

func TestRenderOptionsFromArgoCDErrors(t *testing.T) {
	cases := map[string]struct {
		env map[string]string
		msg string
	}{
		"a wrong plugin env": {map[string]string{"ARGOCD_ENV_FLAPP_OWNER_REFERENCES": "Sometimes"},
			`the plugin env FLAPP_OWNER_REFERENCES (ARGOCD_ENV_FLAPP_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "Sometimes"`},
		"a wrong parameter": {argoCDParams(`[{"name":"owner-references","string":"never"}]`, "never"),
			`the plugin parameter owner-references (PARAM_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "never"`},
		"a wrong PARAM_ alone": {map[string]string{"PARAM_OWNER_REFERENCES": "Always"},
			`the plugin parameter owner-references (PARAM_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "Always"`},
		"a wrong parameter, a good plugin env": {with(argoCDParams(`[{"name":"owner-references","string":"x"}]`, "x"), "ARGOCD_ENV_FLAPP_OWNER_REFERENCES", "Never"),
			`the plugin parameter owner-references (PARAM_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "x"`},
		"a good parameter, a wrong plugin env": {with(argoCDParams(`[{"name":"owner-references","string":"Never"}]`, "Never"), "ARGOCD_ENV_FLAPP_OWNER_REFERENCES", "x"),
			`the plugin env FLAPP_OWNER_REFERENCES (ARGOCD_ENV_FLAPP_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "x"`},
		"an unknown parameter": {argoCDParams(`[{"name":"owner-reference","string":"IfKnown"}]`, ""),
			`unknown plugin parameter "owner-reference" in the Application; the plugin's parameters are owner-references and strict`},
		"a map": {argoCDParams(`[{"name":"owner-references","map":{"a":"IfKnown"}}]`, ""),
			"the plugin parameter owner-references must be a string (IfKnown, Required or Never), not a map or an array"},
		"an array": {argoCDParams(`[{"name":"owner-references","array":["IfKnown"]}]`, ""),
			"the plugin parameter owner-references must be a string (IfKnown, Required or Never), not a map or an array"},
		"twice": {argoCDParams(`[{"name":"owner-references","string":"IfKnown"},{"name":"owner_references","string":"Never"}]`, "Never"),
			"the plugin parameter owner-references is given twice in the Application"},
		"not JSON": {argoCDParams(`owner-references=IfKnown`, ""),
			"ARGOCD_APP_PARAMETERS is not the JSON array of plugin parameters Argo CD sends"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := RenderOptionsFromArgoCD(lookupIn(c.env), RenderOptions{}, noFlags)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestDiscoverOptionsFromArgoCD(t *testing.T) {
	env := lookupIn(map[string]string{"ARGOCD_ENV_FLAPP_CONFIG": "cfg.yaml", "ARGOCD_ENV_FLAPP_OWNER_REFERENCES": "Sometimes"})
	assert.Equal(t, DiscoverOptions{Config: "cfg.yaml"}, DiscoverOptionsFromArgoCD(env, DiscoverOptions{}, noFlags))
	assert.Equal(t, DiscoverOptions{Config: "flag.yaml"}, DiscoverOptionsFromArgoCD(env, DiscoverOptions{Config: "flag.yaml"}, func(string) bool { return true }))
	assert.Equal(t, DiscoverOptions{}, DiscoverOptionsFromArgoCD(lookupIn(nil), DiscoverOptions{}, noFlags))
}

const exportedFLApp = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: normal
  uid: 0f4e3a3e-8c53-4d1c-9d0e-6f0b7a1d2c3b
spec:
  role: Leader
  peerSpecs:
    Follower: {peerURL: "follower:8100"}
  flReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - name: tensorflow
              ports:
                - {name: flapp-port, containerPort: 50051}
`

// Through the command line: only --argocd-env reads the environment, and
// flags still win. The plain render's default is the config's IfKnown, the
// plugin's is Never.
func TestMainArgoCDEnv(t *testing.T) {
	dir := writeFiles(t, map[string]string{"flapp.yaml": exportedFLApp})
	t.Setenv("ARGOCD_APP_PARAMETERS", "null")
	t.Setenv("ARGOCD_ENV_FLAPP_OWNER_REFERENCES", "")

	code, out, stderr := runMain([]string{"render", dir}, "")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "ownerReferences:", "plain render: the config's default IfKnown")

	code, out, stderr = runMain([]string{"render", "--argocd-env", dir}, "")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "ownerReferences:", "--argocd-env: Never by default")

	t.Setenv("PARAM_OWNER_REFERENCES", "Required")
	t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"owner-references","string":"Required"}]`)
	code, out, stderr = runMain([]string{"render", "--argocd-env", dir}, "")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "uid: 0f4e3a3e-8c53-4d1c-9d0e-6f0b7a1d2c3b")

	code, out, stderr = runMain([]string{"render", "--argocd-env", "--owner-references", "Never", dir}, "")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "ownerReferences:", "the flag wins over the parameter")

	t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"owner-references","string":"Sometimes"}]`)
	code, out, stderr = runMain([]string{"render", "--argocd-env", dir}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "error: the plugin parameter owner-references (PARAM_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not \"Sometimes\"\n", stderr)

	code, _, stderr = runMain([]string{"render", dir}, "")
	assert.Equal(t, 0, code, "without --argocd-env the environment is not read: %s", stderr)
}

// discover --argocd-env skips the config file the plugin env names: it is
// not a manifest. A broken one mentions FLApp (kind FLAppServices), which
// discover would otherwise claim so that the render reports it.
func TestMainDiscoverArgoCDEnv(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"flapp-services.yaml": "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nspec: [\n",
		"cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	})
	t.Chdir(dir)
	t.Setenv("ARGOCD_ENV_FLAPP_CONFIG", "flapp-services.yaml")

	code, out, stderr := runMain([]string{"discover", "."}, "")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "flapp-services.yaml mentions FLApp but does not parse", "without --argocd-env the config file is read as a manifest")

	code, out, stderr = runMain([]string{"discover", "--argocd-env", "."}, "")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, out)
}

// The strict parameter is read the way owner-references is: the parameter,
// else the plugin env FLAPP_STRICT, else false; true or false only.
func TestRenderOptionsFromArgoCDStrict(t *testing.T) {
	for name, c := range map[string]struct {
		env    map[string]string
		strict bool
		err    string
	}{
		"unset":                     {nil, false, ""},
		"parameter":                 {map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"strict","string":"true"}]`, "PARAM_STRICT": "true"}, true, ""},
		"PARAM_ alone":              {map[string]string{"PARAM_STRICT": "true"}, true, ""},
		"plugin env":                {map[string]string{"ARGOCD_ENV_FLAPP_STRICT": "true"}, true, ""},
		"parameter over plugin env": {map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"strict","string":"false"}]`, "ARGOCD_ENV_FLAPP_STRICT": "true"}, false, ""},
		"both parameters":           {map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"owner-references","string":"IfKnown"},{"name":"strict","string":"true"}]`}, true, ""},
		"empty counts unset":        {map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"strict","string":""}]`, "ARGOCD_ENV_FLAPP_STRICT": "true"}, true, ""},
		"a wrong value":             {map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"strict","string":"yes"}]`}, false, `the plugin parameter strict (PARAM_STRICT) must be true or false, not "yes"`},
		"a wrong plugin env":        {map[string]string{"ARGOCD_ENV_FLAPP_STRICT": "1"}, false, `the plugin env FLAPP_STRICT (ARGOCD_ENV_FLAPP_STRICT) must be true or false, not "1"`},
		"an array":                  {map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"strict","array":["true"]}]`}, false, "the plugin parameter strict must be a string (true or false), not a map or an array"},
	} {
		t.Run(name, func(t *testing.T) {
			opts, err := RenderOptionsFromArgoCD(lookupIn(c.env), RenderOptions{}, noFlags)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.strict, opts.Strict)
		})
	}
	opts, err := RenderOptionsFromArgoCD(lookupIn(map[string]string{"PARAM_STRICT": "true"}), RenderOptions{Strict: false}, func(name string) bool { return name == "strict" })
	require.NoError(t, err)
	assert.False(t, opts.Strict, "the flag wins")
}

// The repository root is the working directory less ARGOCD_APP_SOURCE_PATH.
func TestArgoCDRoot(t *testing.T) {
	wd := func(dir string) func() (string, error) { return func() (string, error) { return dir, nil } }
	for name, c := range map[string]struct {
		source, wd, root, err string
	}{
		"unset":          {"", "/w/repo/apps/prod", "", ""},
		"the root":       {".", "/w/repo", "", ""},
		"a subdirectory": {"apps/prod", "/w/repo/apps/prod", "/w/repo", ""},
		"a trailing /":   {"apps/prod/", "/w/repo/apps/prod", "/w/repo", ""},
		"elsewhere":      {"apps/prod", "/w/repo/other", "", "the working directory does not end in ARGOCD_APP_SOURCE_PATH=apps/prod"},
		"a partial name": {"prod", "/w/repo/apps/preprod", "", "the working directory does not end in"},
		"above":          {"../x", "/w/x", "", "is not a path inside the repository"},
	} {
		t.Run(name, func(t *testing.T) {
			root, err := argoCDRoot(lookupIn(map[string]string{"ARGOCD_APP_SOURCE_PATH": c.source}), wd(c.wd))
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.root, root)
		})
	}
}

// Under --argocd-env an overlay in the Application's directory reads its
// base from the repository root above it.
func TestMainArgoCDEnvBuildsAnOverlay(t *testing.T) {
	dir := overlayRepo(t, nil)
	t.Chdir(filepath.Join(dir, "overlays", "prod"))
	t.Setenv("ARGOCD_APP_SOURCE_PATH", "overlays/prod")
	code, out, stderr := runMain([]string{"render", "--argocd-env", "."}, "")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "name: normal-leader-worker-3")
	code, out, _ = runMain([]string{"render", "."}, "")
	assert.Equal(t, 1, code, "without --argocd-env the base is outside the current directory")
	assert.Empty(t, out)
}
