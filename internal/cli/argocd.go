package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/render"
)

// The environment argocd-cmp-server gives a Config Management Plugin's
// commands (Argo CD v3.6.1: cmpserver/plugin and the repo-server's
// getPluginEnvs). The Application's spec.source.plugin.env entries arrive
// as ARGOCD_ENV_<name>; its spec.source.plugin.parameters arrive twice: all
// of them as one JSON array in ARGOCD_APP_PARAMETERS, and each string
// parameter as PARAM_<NAME> (name upper-cased, [^A-Z0-9_] replaced by _).
const (
	argoCDParameters  = "ARGOCD_APP_PARAMETERS"
	argoCDSourcePath  = "ARGOCD_APP_SOURCE_PATH" // the Application's directory in the repository
	argoCDEnvConfig   = "ARGOCD_ENV_FLAPP_CONFIG"
	argoCDEnvPrefix   = "ARGOCD_ENV_"
	argoCDParamPrefix = "PARAM_"
)

// argoCDSetting is a setting the plugin takes as a parameter or, without
// one, from the Application's plugin env.
type argoCDSetting struct {
	parameter string // the plugin parameter (plugin.yaml declares it)
	env       string // the plugin env, without ARGOCD_ENV_
	values    string // for messages
	check     func(name, value string) error
}

// The plugin's parameters, in plugin.yaml's order.
var (
	argoCDOwnerReferences = argoCDSetting{"owner-references", "FLAPP_OWNER_REFERENCES", "IfKnown, Required or Never",
		func(name, v string) error { _, err := fn.ParseOwnerReferences(name, v); return err }}
	argoCDStrict = argoCDSetting{"strict", "FLAPP_STRICT", "true or false", func(name, v string) error {
		if v != "true" && v != "false" {
			return fmt.Errorf("%s must be true or false, not %q", name, v)
		}
		return nil
	}}
	argoCDSettings = []argoCDSetting{argoCDOwnerReferences, argoCDStrict}
)

// The usage of --argocd-env, the explicit switch: without it neither
// command reads this environment.
const (
	argoCDRenderFlagUsage = "read the settings no flag sets from Argo CD's plugin environment: --owner-references from the parameter " +
		"owner-references, else ARGOCD_ENV_FLAPP_OWNER_REFERENCES, else Never; --strict from the parameter strict, else ARGOCD_ENV_FLAPP_STRICT; " +
		"--config from " + argoCDEnvConfig + "; the repository root, where a kustomization may read, from " + argoCDSourcePath
	argoCDDiscoverFlagUsage = "read --config, unless set, from Argo CD's plugin environment (" + argoCDEnvConfig + "), and the repository root from " + argoCDSourcePath
)

// argoCDDefaultOwnerReferences is the policy when neither the parameter nor
// the plugin env sets one: Argo CD never prunes resources with owner
// references, so the render leaves them out unless asked.
const argoCDDefaultOwnerReferences = render.OwnerReferencesNever

// argoCDValues is what the plugin environment says about a render.
type argoCDValues struct {
	ownerReferences render.OwnerReferencePolicy
	strict          bool
	config          string // "" when the plugin env sets none
	root            string // the repository root, "" when it is the working directory
}

// readArgoCDEnv reads the plugin environment through lookup (os.LookupEnv
// in the command). Each setting comes from its parameter, else its plugin
// env, else its default; an empty value counts as unset. A wrong value
// (also one the other overrides), a parameter the plugin does not declare,
// or a parameter given as a map or an array is an error: the render never
// falls back silently.
func readArgoCDEnv(lookup func(string) (string, bool), wd func() (string, error)) (argoCDValues, error) {
	v := argoCDValues{ownerReferences: argoCDDefaultOwnerReferences}
	params, err := argoCDParameterValues(lookup)
	if err != nil {
		return v, err
	}
	for _, s := range argoCDSettings {
		value, err := s.read(lookup, params[s.parameter])
		if err != nil || value == "" {
			if err != nil {
				return v, err
			}
			continue
		}
		switch s.parameter {
		case argoCDOwnerReferences.parameter:
			v.ownerReferences = render.OwnerReferencePolicy(value)
		case argoCDStrict.parameter:
			v.strict = value == "true"
		}
	}
	v.config, _ = lookup(argoCDEnvConfig)
	if v.root, err = argoCDRoot(lookup, wd); err != nil {
		return v, err
	}
	return v, nil
}

// read is the setting's value: the parameter's, else the plugin env's;
// both are checked, so that a wrong value never hides behind the other.
func (s argoCDSetting) read(lookup func(string) (string, bool), param string) (string, error) {
	env, _ := lookup(argoCDEnvPrefix + s.env)
	if env != "" {
		if err := s.check(fmt.Sprintf("the plugin env %s (%s%s)", s.env, argoCDEnvPrefix, s.env), env); err != nil {
			return "", err
		}
	}
	if param != "" {
		if err := s.check(fmt.Sprintf("the plugin parameter %s (%s%s)", s.parameter, argoCDParamPrefix, argoCDEscape(s.parameter)), param); err != nil {
			return "", err
		}
		return param, nil
	}
	return env, nil
}

// argoCDRoot is the repository root: the working directory (where
// argocd-cmp-server runs the command, the Application's directory in its
// copy of the repository) less ARGOCD_APP_SOURCE_PATH.
func argoCDRoot(lookup func(string) (string, bool), wd func() (string, error)) (string, error) {
	source, _ := lookup(argoCDSourcePath)
	source = filepath.Clean(filepath.FromSlash(source))
	if source == "." || source == "" {
		return "", nil
	}
	dir, err := wd()
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(source) || strings.HasPrefix(source, "..") {
		return "", fmt.Errorf("%s=%s is not a path inside the repository", argoCDSourcePath, source)
	}
	root, found := strings.CutSuffix(filepath.Clean(dir), string(filepath.Separator)+source)
	if !found {
		return "", fmt.Errorf("the working directory does not end in %s=%s: the command must run in the Application's directory of the repository", argoCDSourcePath, source)
	}
	if root == "" {
		root = string(filepath.Separator)
	}
	return root, nil
}

// argoCDParameter is one item of ARGOCD_APP_PARAMETERS, as Argo CD's
// ApplicationSourcePluginParameter marshals it.
type argoCDParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string"`
	Map    map[string]string `json:"map"`
	Array  []string          `json:"array"`
}

// argoCDParameterValues returns the value of each parameter the Application
// gives, by its name in plugin.yaml. ARGOCD_APP_PARAMETERS, when set, is
// the whole truth (it names every parameter with its type); the PARAM_
// variables are read only without it.
func argoCDParameterValues(lookup func(string) (string, bool)) (map[string]string, error) {
	values := map[string]string{}
	raw, ok := lookup(argoCDParameters)
	if !ok || strings.TrimSpace(raw) == "" {
		for _, s := range argoCDSettings {
			values[s.parameter], _ = lookup(argoCDParamPrefix + argoCDEscape(s.parameter))
		}
		return values, nil
	}
	var params []argoCDParameter // "null" when the Application has none
	if err := json.Unmarshal([]byte(raw), &params); err != nil {
		return nil, fmt.Errorf("%s is not the JSON array of plugin parameters Argo CD sends: %w", argoCDParameters, err)
	}
	given := map[string]bool{}
	for _, p := range params {
		i := slices.IndexFunc(argoCDSettings, func(s argoCDSetting) bool { return argoCDEscape(s.parameter) == argoCDEscape(p.Name) })
		if i < 0 {
			return nil, fmt.Errorf("unknown plugin parameter %q in the Application; the plugin's parameters are %s", p.Name, argoCDParameterNames())
		}
		s := argoCDSettings[i]
		if given[s.parameter] {
			return nil, fmt.Errorf("the plugin parameter %s is given twice in the Application", s.parameter)
		}
		if p.String == nil {
			return nil, fmt.Errorf("the plugin parameter %s must be a string (%s), not a map or an array", s.parameter, s.values)
		}
		given[s.parameter], values[s.parameter] = true, *p.String
	}
	return values, nil
}

func argoCDParameterNames() string {
	names := make([]string, len(argoCDSettings))
	for i, s := range argoCDSettings {
		names[i] = s.parameter
	}
	return strings.Join(names, " and ")
}

var argoCDInvalidEnvChars = regexp.MustCompile(`[^A-Z0-9_]`)

// argoCDEscape is how Argo CD turns a parameter name into the tail of its
// PARAM_ variable, so the two spellings of a parameter agree here too.
func argoCDEscape(name string) string {
	return argoCDInvalidEnvChars.ReplaceAllString(strings.ToUpper(name), "_")
}

// RenderOptionsFromArgoCD fills the settings of opts that the command line
// left unset (flagSet reports those it set) from the plugin environment.
func RenderOptionsFromArgoCD(lookup func(string) (string, bool), opts RenderOptions, flagSet func(name string) bool) (RenderOptions, error) {
	v, err := readArgoCDEnv(lookup, os.Getwd)
	if err != nil {
		return opts, err
	}
	if !flagSet("owner-references") {
		opts.OwnerReferences = string(v.ownerReferences)
	}
	if !flagSet("strict") {
		opts.Strict = v.strict
	}
	if !flagSet("config") && v.config != "" {
		opts.Config = v.config
	}
	opts.Root = v.root
	return opts, nil
}

// DiscoverOptionsFromArgoCD is RenderOptionsFromArgoCD for discover, which
// needs only the config file (to skip it) and the repository root. The
// other settings are the render's to check: a wrong one fails the generate
// with its reason.
func DiscoverOptionsFromArgoCD(lookup func(string) (string, bool), opts DiscoverOptions, flagSet func(name string) bool) DiscoverOptions {
	if config, _ := lookup(argoCDEnvConfig); !flagSet("config") && config != "" {
		opts.Config = config
	}
	if root, err := argoCDRoot(lookup, os.Getwd); err == nil {
		opts.Root = root
	}
	return opts
}
