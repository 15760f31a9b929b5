package argocd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

const notFound = `could not find cmp-server plugin with name "flapp-services" supporting the given repository`

// The shipped Application, through the shipped plugin: the manifests Argo CD
// gets are exactly `flapp-services render` of the same directory.
func TestExampleApplication(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "application.yaml"))
	require.NoError(t, err)
	var app v1alpha1.Application
	require.NoError(t, yaml.UnmarshalStrict(data, &app))
	src := app.Spec.Source
	require.NotNil(t, src.Plugin)
	require.Equal(t, pluginName, src.Plugin.Name, "application.yaml must name the plugin")

	root := t.TempDir()
	copyDir(t, filepath.Join(env.repo, filepath.FromSlash(src.Path)), filepath.Join(root, filepath.FromSlash(src.Path)))
	resp, err := generate(t, root, application{name: app.Name, namespace: app.Spec.Destination.Namespace, path: src.Path, plugin: src.Plugin})
	require.NoError(t, err)
	assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType)

	// The README's "try the render locally" command.
	readme, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "bin/flapp-services render --owner-references Never "+src.Path)
	want := render(t, root, "--owner-references", "Never", src.Path)
	assert.Equal(t, want, manifestValues(t, resp))

	// Argo CD compares renders: the same source gives the same manifests.
	again, err := generate(t, root, application{name: app.Name, namespace: "somewhere-else", path: src.Path, plugin: src.Plugin})
	require.NoError(t, err)
	assert.Equal(t, resp.Manifests, again.Manifests, "a different destination namespace or a second run changes nothing")

	objs := objectsOf(t, resp)
	for _, o := range objs {
		for k := range o.GetLabels() {
			assert.False(t, k == appLabelKey || strings.HasPrefix(k, "argocd.argoproj.io/"), "%s: the render writes Argo CD's label %s", o.GetName(), k)
		}
	}
	assert.Len(t, serviceNames(objs), 7, "the README promises seven Services for examples/argocd/app")
	for _, o := range objs {
		assert.Empty(t, o.GetOwnerReferences(), "%s: Never is the plugin's default", o.GetName())
		assert.Empty(t, o.GetNamespace(), "%s: the destination namespace is Argo CD's to set", o.GetName())
	}
}

// Every form of FLApp the render reads reaches generate, for an
// Application that names the plugin and for one that names none (discover).
func TestEveryFormTheRenderReads(t *testing.T) {
	a := flapp("mnist", "", 2)
	b := flapp("mnist-eval", "", 1)
	list := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": []any{a, b}}
	plain := toYAML(t, a)
	forms := map[string]map[string]string{
		// What `kubectl get flapps -o yaml` prints: the FLApps are items of a List.
		"list":          {"flapps.yaml": toYAML(t, list)},
		"quoted":        {"flapp.yaml": replaceLine(t, plain, "kind: FLApp", `kind: "FLApp"`)},
		"single-quoted": {"flapp.yaml": replaceLine(t, plain, "kind: FLApp", `kind: 'FLApp'`)},
		"comment":       {"flapp.yaml": replaceLine(t, plain, "kind: FLApp", "kind: FLApp # a federated job")},
		"json":          {"flapp.json": toJSON(t, a)},
		"json-list":     {"flapps.json": toJSON(t, list)},
		"multi-doc":     {"all.yml": configMap("settings") + "---\n" + plain + "---\n" + toYAML(t, b)},
		"nested":        {"team/a/flapp.yml": plain, "README.md": "# not a manifest\n"},
	}
	files := map[string]string{}
	for form, fs := range forms {
		for name, content := range fs {
			files["apps/"+form+"/"+name] = content
		}
	}
	root := repoDir(t, files)
	for form := range forms {
		t.Run(form, func(t *testing.T) {
			dir := filepath.Join(root, "apps", form)
			want := render(t, dir, "--owner-references", "Never", ".")

			named, err := generate(t, root, application{name: "fl-" + form, namespace: "fl", path: "apps/" + form, plugin: namedPlugin(nil, nil)})
			require.NoError(t, err, "an Application naming the plugin")
			assert.Equal(t, want, manifestValues(t, named))
			assert.NotEmpty(t, serviceNames(objectsOf(t, named)))

			unnamed, err := generate(t, root, application{name: "fl-" + form, namespace: "fl", path: "apps/" + form})
			require.NoError(t, err, "an Application naming no plugin")
			assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), unnamed.SourceType, "discover must match")
			assert.Equal(t, want, manifestValues(t, unnamed))
		})
	}
}

// discover matches a source with an FLApp and not one without, so
// Applications that name no plugin keep Argo CD's own handling of other
// directories. Argo CD v3.6.1 evaluates discover for Applications that name
// the plugin too: a tree of objects without any FLApp is refused for them.
func TestDiscover(t *testing.T) {
	root := repoDir(t, map[string]string{
		"plain/cm.yaml":        configMap("a"),
		"plain/more/cm.json":   `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}`,
		"mentions/cm.yaml":     configMap("flapp") + "# kind: FLApp lives elsewhere\n",
		"local/flapp.yaml":     replaceLine(t, toYAML(t, flapp("x", "", 1)), "name: x", "name: x\n  annotations: {config.kubernetes.io/local-config: \"true\"}"),
		"local/cm.yaml":        configMap("c"),
		"hidden/cm.yaml":       configMap("d"),
		"hidden/.old/fl.yaml":  toYAML(t, flapp("in-dot-dir", "", 1)),
		"other-group/cr.yaml":  "apiVersion: example.com/v1\nkind: FLApp\nmetadata:\n  name: not-fedlearner\n",
		"with-flapp/flapp.yml": toYAML(t, flapp("x", "", 1)),
	})
	for _, dir := range []string{"plain", "mentions", "local", "hidden", "other-group"} {
		t.Run(dir, func(t *testing.T) {
			unnamed, err := generate(t, root, application{name: "app", namespace: "fl", path: dir})
			require.NoError(t, err)
			assert.Equal(t, string(v1alpha1.ApplicationSourceTypeDirectory), unnamed.SourceType,
				"no FLApp here: discover must leave the directory to Argo CD")

			_, err = generate(t, root, application{name: "app", namespace: "fl", path: dir, plugin: namedPlugin(nil, nil)})
			require.Error(t, err)
			assert.Contains(t, err.Error(), notFound)
		})
	}
	resp, err := generate(t, root, application{name: "app", namespace: "fl", path: "with-flapp"})
	require.NoError(t, err)
	assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType)
}

// A bad FLApp anywhere in the tree fails the generate with the render's own
// reason and no manifests, never with "could not find plugin" (discover
// must match so that generate runs).
func TestBadFLAppFailsGenerate(t *testing.T) {
	bad := strings.ReplaceAll(toYAML(t, flapp("no-tf", "", 1)), "name: tensorflow", "name: main")
	good := toYAML(t, flapp("mnist", "", 2))
	cases := map[string]struct {
		files  map[string]string
		reason string
	}{
		"no tensorflow container, deep in the tree": {
			map[string]string{"good.yaml": good, "z/y/bad.yaml": bad},
			`z/y/bad.yaml: document 1 (line 1): FLApp no-tf: spec.flReplicaSpecs[`,
		},
		"bad FLApp in a List": {
			map[string]string{"good.yaml": good, "export.yaml": toYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{
				replaceRole(flapp("boss", "", 1), "Boss")}})},
			`FLApp boss: spec.role: Invalid value: "Boss"`,
		},
		"unparseable file that holds an FLApp": {
			map[string]string{"good.yaml": good, "broken.yaml": "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: [\n"},
			"broken.yaml",
		},
		"only a bad FLApp": {
			map[string]string{"bad.json": toJSON(t, replaceRole(flapp("boss", "", 1), "Boss"))},
			`FLApp boss: spec.role`,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range c.files {
				files["app/"+k] = v
			}
			root := repoDir(t, files)
			for _, plugin := range []*v1alpha1.ApplicationSourcePlugin{namedPlugin(nil, nil), nil} {
				resp, err := generate(t, root, application{name: "app", namespace: "fl", path: "app", plugin: plugin})
				require.Error(t, err, "named=%v", plugin != nil)
				assert.Nil(t, resp, "no manifests on failure")
				assert.Contains(t, err.Error(), c.reason)
				assert.NotContains(t, err.Error(), "could not find")
			}
		})
	}
}

func replaceRole(app map[string]any, role string) map[string]any {
	app["spec"].(map[string]any)["role"] = role
	return app
}

// An empty directory (in Git: no manifest at all, e.g. every FLApp deleted)
// is not the plugin's: discover leaves it to Argo CD, which treats it as a
// Directory Application of no objects, as it does without the plugin. An
// Application naming the plugin fails there with Argo CD's "could not find
// cmp-server plugin" (never with zero manifests, which would prune
// everything).
func TestEmptyDirectoryIsNotClaimed(t *testing.T) {
	root := repoDir(t, map[string]string{"app/README.md": "# the FLApps were here\n", "app/sub/.keep": ""})
	resp, err := generate(t, root, application{name: "app", namespace: "fl", path: "app", plugin: namedPlugin(nil, nil)})
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.Contains(t, err.Error(), notFound)

	resp, err = generate(t, root, application{name: "app", namespace: "fl", path: "app"})
	require.NoError(t, err)
	assert.Equal(t, string(v1alpha1.ApplicationSourceTypeDirectory), resp.SourceType)
	assert.Empty(t, resp.Manifests)
}

// The owner-reference policy: the parameter wins over the plugin env, the env
// over the default Never; FLAPP_CONFIG names a function config file. Argo CD
// sets the parameters both as ARGOCD_APP_PARAMETERS (JSON) and as PARAM_*;
// `render --argocd-env` reads them.
func TestParametersAndEnv(t *testing.T) {
	const uid = "0f4e3a3e-8c53-4d1c-9d0e-6f0b7a1d2c3b"
	exported := flapp("mnist", "", 2)
	exported["metadata"].(map[string]any)["uid"] = uid
	root := repoDir(t, map[string]string{
		"export/flapps.yaml":            toYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{exported}}),
		"git/flapp.yaml":                toYAML(t, flapp("mnist", "", 3)),
		"git/flapp-services.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flapp-services\ndata:\n  maxServicesPerFLApp: \"10\"\n",
		"git/config/strict.yaml":        "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata:\n  name: strict\nspec:\n  maxServicesPerFLApp: 2\n",
		"git-without-config/flapp.yaml": toYAML(t, flapp("mnist", "", 3)),
		"git-without-config/other.yaml": configMap("other"),
		"shared/ceiling.yaml":           "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata:\n  name: ceiling\nspec:\n  maxServicesPerFLApp: 2\n",
	})
	ownerUIDs := func(t *testing.T, path string, plugin *v1alpha1.ApplicationSourcePlugin) []string {
		t.Helper()
		resp, err := generate(t, root, application{name: "app", namespace: "fl", path: path, plugin: plugin})
		require.NoError(t, err)
		var uids []string
		for _, o := range objectsOf(t, resp) {
			if isService(o) {
				refs := o.GetOwnerReferences()
				if len(refs) == 0 {
					uids = append(uids, "")
					continue
				}
				require.Len(t, refs, 1)
				assert.Equal(t, "FLApp", refs[0].Kind)
				uids = append(uids, string(refs[0].UID))
			}
		}
		require.NotEmpty(t, uids)
		return uids
	}
	all := func(v string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = v
		}
		return out
	}

	t.Run("default Never, even with the uid in the input", func(t *testing.T) {
		assert.Equal(t, all("", 3), ownerUIDs(t, "export", namedPlugin(nil, nil)))
	})
	t.Run("env FLAPP_OWNER_REFERENCES=IfKnown", func(t *testing.T) {
		assert.Equal(t, all(uid, 3), ownerUIDs(t, "export", namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, nil)))
	})
	t.Run("parameter owner-references=IfKnown", func(t *testing.T) {
		assert.Equal(t, all(uid, 3), ownerUIDs(t, "export", namedPlugin(nil, map[string]string{"owner-references": "IfKnown"})))
	})
	t.Run("the parameter wins over the env", func(t *testing.T) {
		assert.Equal(t, all("", 3), ownerUIDs(t, "export",
			namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, map[string]string{"owner-references": "Never"})))
		assert.Equal(t, all(uid, 3), ownerUIDs(t, "export",
			namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "Never"}, map[string]string{"owner-references": "Required"})))
	})
	t.Run("equals the render with the same policy", func(t *testing.T) {
		resp, err := generate(t, root, application{name: "app", namespace: "fl", path: "export",
			plugin: namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, nil)})
		require.NoError(t, err)
		assert.Equal(t, render(t, filepath.Join(root, "export"), "--owner-references", "IfKnown", "."), manifestValues(t, resp))
	})
	failures := map[string]struct {
		path   string
		plugin *v1alpha1.ApplicationSourcePlugin
		reason string
	}{
		"Required without a uid (env)":   {"git", namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "Required"}, nil), "ownerReferences is Required but the FLApp's UID is unknown"},
		"Required without a uid (param)": {"git", namedPlugin(nil, map[string]string{"owner-references": "Required"}), "ownerReferences is Required but the FLApp's UID is unknown"},
		"a wrong value (env)": {"git", namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "Sometimes"}, nil),
			`the plugin env FLAPP_OWNER_REFERENCES (ARGOCD_ENV_FLAPP_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "Sometimes"`},
		"a wrong value (param)": {"git", namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, map[string]string{"owner-references": "never"}),
			`the plugin parameter owner-references (PARAM_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "never"`},
		"an array parameter": {"git", arrayParameter("owner-references", "IfKnown"),
			"the plugin parameter owner-references must be a string (IfKnown, Required or Never), not a map or an array"},
		"an unknown parameter": {"git", namedPlugin(nil, map[string]string{"owner-reference": "IfKnown"}),
			`unknown plugin parameter "owner-reference" in the Application; the plugin's parameters are owner-references and strict`},
		"FLAPP_CONFIG with a ceiling of 2": {"git", namedPlugin(map[string]string{"FLAPP_CONFIG": "config/strict.yaml"}, nil),
			"more than maxServicesPerFLApp (2)"},
		"FLAPP_CONFIG naming a missing file": {"git-without-config", namedPlugin(map[string]string{"FLAPP_CONFIG": "flapp-services.yaml"}, nil),
			"flapp-services.yaml: no such file or directory"},
		// The config may lie anywhere in the repository (the working directory
		// less ARGOCD_APP_SOURCE_PATH), never outside it.
		"FLAPP_CONFIG elsewhere in the repository, with a ceiling of 2": {"git-without-config",
			namedPlugin(map[string]string{"FLAPP_CONFIG": "../shared/ceiling.yaml"}, nil), "more than maxServicesPerFLApp (2)"},
		"FLAPP_CONFIG outside the repository": {"git-without-config", namedPlugin(map[string]string{"FLAPP_CONFIG": "/etc/passwd"}, nil),
			"outside the repository root"},
	}
	for name, c := range failures {
		t.Run(name, func(t *testing.T) {
			resp, err := generate(t, root, application{name: "app", namespace: "fl", path: c.path, plugin: c.plugin})
			require.Error(t, err)
			assert.Nil(t, resp)
			assert.Contains(t, err.Error(), c.reason)
		})
	}
	t.Run("FLAPP_CONFIG is read, and is not a manifest", func(t *testing.T) {
		resp, err := generate(t, root, application{name: "app", namespace: "fl", path: "git",
			plugin: namedPlugin(map[string]string{"FLAPP_CONFIG": "flapp-services.yaml"}, nil)})
		require.NoError(t, err)
		for _, o := range objectsOf(t, resp) {
			assert.NotEqual(t, "flapp-services", o.GetName(), "the config file must not be applied")
		}
		assert.Equal(t, render(t, filepath.Join(root, "git"), "--owner-references", "Never", "--config", "flapp-services.yaml", "."),
			manifestValues(t, resp))
	})
}

// arrayParameter is an Application parameter given as an array, which Argo CD
// passes in ARGOCD_APP_PARAMETERS and as PARAM_<NAME>_<i>, never as PARAM_<NAME>.
func arrayParameter(name string, values ...string) *v1alpha1.ApplicationSourcePlugin {
	p := namedPlugin(nil, nil)
	p.Parameters = append(p.Parameters, v1alpha1.ApplicationSourcePluginParameter{Name: name, OptionalArray: &v1alpha1.OptionalArray{Array: values}})
	return p
}

// The plugin parameter strict (announced in plugin.yaml, default "false"):
// Argo CD shows a plugin's stderr only when the command fails, so the render's
// warnings (here the pair check's: a leader with 2 paired Workers, its
// follower with 3) reach the Application only as a failed generate. With
// strict true (parameter, or plugin env FLAPP_STRICT) the generate fails with
// the warning in Argo CD's error; false or unset renders and the warning is
// lost.
func TestStrictParameter(t *testing.T) {
	leader := flapp("mnist", "fl-leader", 2)
	follower := replaceRole(flapp("mnist", "fl-follower", 3), "Follower")
	follower["spec"].(map[string]any)["peerSpecs"] = map[string]any{"Leader": map[string]any{"peerURL": "fl-leader.example.com:443"}}
	root := repoDir(t, map[string]string{"pair/leader.yaml": toYAML(t, leader), "pair/follower.yaml": toYAML(t, follower)})
	const warning = "paired replica type Worker has 2 replicas in Leader FLApp fl-leader/mnist but 3 replicas in Follower FLApp fl-follower/mnist"

	for name, plugin := range map[string]*v1alpha1.ApplicationSourcePlugin{
		"parameter strict=true": namedPlugin(nil, map[string]string{"strict": "true"}),
		"env FLAPP_STRICT=true": namedPlugin(map[string]string{"FLAPP_STRICT": "true"}, nil),
		"the parameter wins":    namedPlugin(map[string]string{"FLAPP_STRICT": "false"}, map[string]string{"strict": "true"}),
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := generate(t, root, application{name: "pair", namespace: "fl", path: "pair", plugin: plugin})
			require.Error(t, err)
			assert.Nil(t, resp)
			assert.Contains(t, err.Error(), warning)
			assert.Contains(t, err.Error(), "--strict makes every warning a failure")
		})
	}
	for name, plugin := range map[string]*v1alpha1.ApplicationSourcePlugin{
		"parameter strict=false": namedPlugin(nil, map[string]string{"strict": "false"}),
		"unset":                  namedPlugin(nil, nil),
		"no plugin named":        nil,
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := generate(t, root, application{name: "pair", namespace: "fl", path: "pair", plugin: plugin})
			require.NoError(t, err)
			assert.Equal(t, render(t, filepath.Join(root, "pair"), "--owner-references", "Never", "."), manifestValues(t, resp))
		})
	}
	t.Run("a wrong value", func(t *testing.T) {
		_, err := generate(t, root, application{name: "pair", namespace: "fl", path: "pair", plugin: namedPlugin(nil, map[string]string{"strict": "yes"})})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `the plugin parameter strict (PARAM_STRICT) must be true or false, not "yes"`)
	})

	// plugin.yaml announces it, for Argo CD's UI, next to owner-references.
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"))
	require.NoError(t, err)
	var pc struct {
		Spec struct {
			Parameters struct {
				Static []struct {
					Name, Title, Tooltip string
					String               *string `json:"string"`
				} `json:"static"`
			} `json:"parameters"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &pc))
	var names []string
	for _, p := range pc.Spec.Parameters.Static {
		names = append(names, p.Name)
		if p.Name == "strict" {
			require.NotNil(t, p.String)
			assert.Equal(t, "false", *p.String)
			assert.NotEmpty(t, p.Title)
			assert.NotEmpty(t, p.Tooltip)
		}
	}
	assert.Equal(t, []string{"owner-references", "strict"}, names)
}
