package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
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
	argoCDParameters         = "ARGOCD_APP_PARAMETERS"
	argoCDParamOwnerRefs     = "PARAM_OWNER_REFERENCES"
	argoCDEnvOwnerRefs       = "ARGOCD_ENV_FLAPP_OWNER_REFERENCES"
	argoCDEnvConfig          = "ARGOCD_ENV_FLAPP_CONFIG"
	argoCDOwnerRefsParameter = "owner-references"
)

// The usage of --argocd-env, the explicit switch: without it neither
// command reads this environment.
const (
	argoCDRenderFlagUsage = "read the settings no flag sets from Argo CD's plugin environment: --owner-references from the parameter " +
		argoCDOwnerRefsParameter + ", else " + argoCDEnvOwnerRefs + ", else Never; --config from " + argoCDEnvConfig
	argoCDDiscoverFlagUsage = "read --config, unless set, from Argo CD's plugin environment (" + argoCDEnvConfig + ")"
)

// argoCDDefaultOwnerReferences is the policy when neither the parameter nor
// the plugin env sets one: Argo CD never prunes resources with owner
// references, so the render leaves them out unless asked.
const argoCDDefaultOwnerReferences = render.OwnerReferencesNever

// argoCDSettings is what the plugin environment says about a render.
type argoCDSettings struct {
	ownerReferences render.OwnerReferencePolicy
	config          string // "" when the plugin env sets none
}

// readArgoCDEnv reads the plugin environment through lookup (os.LookupEnv
// in the command). The owner-reference policy comes from the parameter
// owner-references, else the plugin env FLAPP_OWNER_REFERENCES, else Never;
// an empty value counts as unset. A wrong value (also one the other
// overrides), a parameter the plugin does not declare, or owner-references
// given as a map or an array is an error: the render never falls back
// silently.
func readArgoCDEnv(lookup func(string) (string, bool)) (argoCDSettings, error) {
	s := argoCDSettings{ownerReferences: argoCDDefaultOwnerReferences}
	param, err := ownerReferencesParameter(lookup)
	if err != nil {
		return s, err
	}
	// Both are checked, so that a wrong value never hides behind another.
	if env, _ := lookup(argoCDEnvOwnerRefs); env != "" {
		if s.ownerReferences, err = fn.ParseOwnerReferences(fmt.Sprintf("the plugin env FLAPP_OWNER_REFERENCES (%s)", argoCDEnvOwnerRefs), env); err != nil {
			return s, err
		}
	}
	if param != "" {
		if s.ownerReferences, err = fn.ParseOwnerReferences(fmt.Sprintf("the plugin parameter %s (%s)", argoCDOwnerRefsParameter, argoCDParamOwnerRefs), param); err != nil {
			return s, err
		}
	}
	s.config, _ = lookup(argoCDEnvConfig)
	return s, nil
}

// argoCDParameter is one item of ARGOCD_APP_PARAMETERS, as Argo CD's
// ApplicationSourcePluginParameter marshals it.
type argoCDParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string"`
	Map    map[string]string `json:"map"`
	Array  []string          `json:"array"`
}

// ownerReferencesParameter returns the value of the parameter
// owner-references, "" when it is not given. ARGOCD_APP_PARAMETERS, when
// set, is the whole truth (it names every parameter with its type);
// PARAM_OWNER_REFERENCES is read only without it.
func ownerReferencesParameter(lookup func(string) (string, bool)) (string, error) {
	raw, ok := lookup(argoCDParameters)
	if !ok || strings.TrimSpace(raw) == "" {
		v, _ := lookup(argoCDParamOwnerRefs)
		return v, nil
	}
	var params []argoCDParameter // "null" when the Application has none
	if err := json.Unmarshal([]byte(raw), &params); err != nil {
		return "", fmt.Errorf("%s is not the JSON array of plugin parameters Argo CD sends: %w", argoCDParameters, err)
	}
	value, found := "", false
	for _, p := range params {
		if argoCDEscape(p.Name) != argoCDEscape(argoCDOwnerRefsParameter) {
			return "", fmt.Errorf("unknown plugin parameter %q in the Application; the plugin's only parameter is %s", p.Name, argoCDOwnerRefsParameter)
		}
		if found {
			return "", fmt.Errorf("the plugin parameter %s is given twice in the Application", argoCDOwnerRefsParameter)
		}
		if p.String == nil {
			return "", fmt.Errorf("the plugin parameter %s must be a string (IfKnown, Required or Never), not a map or an array", argoCDOwnerRefsParameter)
		}
		value, found = *p.String, true
	}
	return value, nil
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
	s, err := readArgoCDEnv(lookup)
	if err != nil {
		return opts, err
	}
	if !flagSet("owner-references") {
		opts.OwnerReferences = string(s.ownerReferences)
	}
	if !flagSet("config") && s.config != "" {
		opts.Config = s.config
	}
	return opts, nil
}

// DiscoverOptionsFromArgoCD is RenderOptionsFromArgoCD for discover, which
// needs only the config file (to skip it). The owner-reference settings are
// the render's to check: a wrong one fails the generate with its reason.
func DiscoverOptionsFromArgoCD(lookup func(string) (string, bool), opts DiscoverOptions, flagSet func(name string) bool) DiscoverOptions {
	if config, _ := lookup(argoCDEnvConfig); !flagSet("config") && config != "" {
		opts.Config = config
	}
	return opts
}
