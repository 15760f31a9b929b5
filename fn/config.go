package fn

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The typed function config.
const (
	configAPIVersion = "fn.fedlearner.k8s.io/v1alpha1"
	configKind       = "FLAppServices"
)

// Setting names, shared by the ConfigMap's data and the typed spec.
const (
	settingOwnerReferences     = "ownerReferences"
	settingMaxServicesPerFLApp = "maxServicesPerFLApp"
	settingMaxServices         = "maxServices"
)

// DefaultMaxServices bounds the Services of one run unless configured: ten
// times Kubernetes' scalability envelope of about 10,000 Services per cluster.
const DefaultMaxServices = 100000

// Config is the function's configuration, from whichever form it came in.
type Config struct {
	OwnerReferences     render.OwnerReferencePolicy
	MaxServicesPerFLApp int64
	MaxServices         int64 // in one run, over all FLApps
}

// DefaultConfig is what an absent or empty functionConfig means.
func DefaultConfig() Config {
	return Config{
		OwnerReferences:     render.OwnerReferencesIfKnown,
		MaxServicesPerFLApp: render.DefaultMaxServicesPerFLApp,
		MaxServices:         DefaultMaxServices,
	}
}

func (c Config) options() render.Options {
	return render.Options{OwnerReferences: c.OwnerReferences, MaxServicesPerFLApp: c.MaxServicesPerFLApp}
}

// ParseConfig reads a functionConfig: none, an empty object, a ConfigMap
// whose data holds the settings, or a FLAppServices object with a spec.
// Unknown settings are errors: a typo must not silently mean the default.
// Its results name where the config was read, o: a file (--config, a
// kustomization's entry), or nothing (a ResourceList's functionConfig).
func ParseConfig(node *yaml.RNode, o Origin) (Config, Results) {
	cfg := DefaultConfig()
	if node == nil || node.IsNilOrEmpty() {
		return cfg, nil
	}
	if node.YNode().Kind != yaml.MappingNode {
		return cfg, Results{configError(o, node, "", "functionConfig must be an object")}
	}
	apiVersion, kind := stringField(node, "apiVersion"), stringField(node, "kind")
	var settings *yaml.RNode
	var prefix string
	var fromStrings bool
	switch {
	case kind == "ConfigMap" && apiVersion == "v1":
		settings, prefix, fromStrings = fieldValue(node, "data"), "data", true
		if node.Field("binaryData") != nil {
			return cfg, Results{configError(o, node, "binaryData", "binaryData is not supported: put the settings in data")}
		}
	case kind == configKind && apiVersion == configAPIVersion:
		settings, prefix = fieldValue(node, "spec"), "spec"
		var unknown []string
		for _, k := range fieldNames(node) {
			if !slices.Contains([]string{"apiVersion", "kind", "metadata", "spec"}, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			return cfg, Results{configError(o, node, unknown[0],
				fmt.Sprintf("unknown field(s) %s in %s: settings belong under spec", strings.Join(unknown, ", "), configKind))}
		}
	default:
		return cfg, Results{configError(o, node, "kind", fmt.Sprintf(
			"unsupported functionConfig %s %s: use a v1 ConfigMap or %s %s", apiVersion, kind, configAPIVersion, configKind))}
	}
	if settings == nil || settings.IsNilOrEmpty() {
		return cfg, nil
	}
	if settings.YNode().Kind != yaml.MappingNode {
		return cfg, Results{configError(o, node, prefix, prefix+" must be an object")}
	}

	var results Results
	var unknown []string
	for _, key := range fieldNames(settings) {
		value := settings.Field(key).Value.YNode()
		path := prefix + "." + key
		switch key {
		case settingOwnerReferences:
			policy, err := ParseOwnerReferences(key, value.Value)
			if value.Kind != yaml.ScalarNode && err == nil {
				err = policyError(key, value.Value)
			}
			if err != nil {
				results = append(results, configError(o, node, path, err.Error()))
				continue
			}
			cfg.OwnerReferences = policy
		case settingMaxServicesPerFLApp, settingMaxServices:
			n, err := strconv.ParseInt(value.Value, 10, 64)
			isInt := value.Kind == yaml.ScalarNode && (value.Tag == yaml.NodeTagInt || fromStrings && value.Tag == yaml.NodeTagString)
			if !isInt || err != nil || n < 1 {
				results = append(results, configError(o, node, path, fmt.Sprintf(
					"%s must be a positive integer, not %q", key, value.Value)))
				continue
			}
			// A configuration comes from the repository (a kpt package,
			// an entry, FLAPP_CONFIG): it may lower a ceiling, never raise
			// it past its default, which protects the process rendering it
			// (Argo CD's sidecar). --max-services, a flag of whoever runs
			// the render, raises maxServices.
			ceiling := int64(DefaultMaxServices)
			if key == settingMaxServicesPerFLApp {
				ceiling = render.DefaultMaxServicesPerFLApp
			}
			if n > ceiling {
				results = append(results, configError(o, node, path, fmt.Sprintf(
					"%s is %d, over its ceiling of %d: a configuration may lower it, not raise it%s", key, n, ceiling, raiseHint(key))))
				continue
			}
			if key == settingMaxServices {
				cfg.MaxServices = n
			} else {
				cfg.MaxServicesPerFLApp = n
			}
		default:
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		results = append(results, configError(o, node, prefix+"."+unknown[0], fmt.Sprintf(
			"unknown setting(s) %s; known settings are %s, %s and %s",
			strings.Join(unknown, ", "), settingOwnerReferences, settingMaxServicesPerFLApp, settingMaxServices)))
	}
	return cfg, results
}

// ParseOwnerReferences reads the owner-reference policy named by the
// setting or flag name.
func ParseOwnerReferences(name, value string) (render.OwnerReferencePolicy, error) {
	policy := render.OwnerReferencePolicy(value)
	if !slices.Contains(render.OwnerReferencePolicies, policy) {
		return "", policyError(name, value)
	}
	return policy, nil
}

func policyError(name, value string) error {
	s := make([]string, len(render.OwnerReferencePolicies))
	for i, p := range render.OwnerReferencePolicies {
		s[i] = string(p)
	}
	return fmt.Errorf("%s must be one of %s, not %q", name, strings.Join(s, ", "), value)
}

func raiseHint(key string) string {
	if key == settingMaxServices {
		return " (--max-services on the command line raises it: the render's caller decides, not the repository)"
	}
	return ""
}
