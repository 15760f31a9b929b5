package fn

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The typed function config.
const (
	ConfigAPIVersion = "fn.fedlearner.k8s.io/v1alpha1"
	ConfigKind       = "FLAppServices"
)

// Setting names, shared by the ConfigMap's data and the typed spec.
const (
	settingOwnerReferences     = "ownerReferences"
	settingMaxServicesPerFLApp = "maxServicesPerFLApp"
)

// Config is the function's configuration, from whichever form it came in.
type Config struct {
	OwnerReferences     render.OwnerReferencePolicy
	MaxServicesPerFLApp int64
}

// DefaultConfig is what an absent or empty functionConfig means.
func DefaultConfig() Config {
	return Config{
		OwnerReferences:     render.OwnerReferencesIfKnown,
		MaxServicesPerFLApp: render.DefaultMaxServicesPerFLApp,
	}
}

func (c Config) options() render.Options {
	return render.Options{OwnerReferences: c.OwnerReferences, MaxServicesPerFLApp: c.MaxServicesPerFLApp}
}

// ParseConfig reads a functionConfig: none, an empty object, a ConfigMap
// whose data holds the settings, or a FLAppServices object with a spec.
// Unknown settings are errors: a typo must not silently mean the default.
func ParseConfig(node *yaml.RNode) (Config, framework.Results) {
	cfg := DefaultConfig()
	if node == nil || node.IsNilOrEmpty() {
		return cfg, nil
	}
	if node.YNode().Kind != yaml.MappingNode {
		return cfg, framework.Results{configError(node, "", "functionConfig must be an object")}
	}
	apiVersion, kind := stringField(node, "apiVersion"), stringField(node, "kind")
	var settings *yaml.RNode
	var prefix string
	var fromStrings bool
	switch {
	case kind == "ConfigMap" && apiVersion == "v1":
		settings, prefix, fromStrings = fieldValue(node, "data"), "data", true
		if node.Field("binaryData") != nil {
			return cfg, framework.Results{configError(node, "binaryData", "binaryData is not supported: put the settings in data")}
		}
	case kind == ConfigKind && apiVersion == ConfigAPIVersion:
		settings, prefix = fieldValue(node, "spec"), "spec"
		var unknown []string
		for _, k := range keysOf(node) {
			if k != "apiVersion" && k != "kind" && k != "metadata" && k != "spec" {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			return cfg, framework.Results{configError(node, unknown[0],
				fmt.Sprintf("unknown field(s) %s in %s: settings belong under spec", strings.Join(unknown, ", "), ConfigKind))}
		}
	default:
		return cfg, framework.Results{configError(node, "kind", fmt.Sprintf(
			"unsupported functionConfig %s %s: use a v1 ConfigMap or %s %s", apiVersion, kind, ConfigAPIVersion, ConfigKind))}
	}
	if settings == nil || settings.IsNilOrEmpty() {
		return cfg, nil
	}
	if settings.YNode().Kind != yaml.MappingNode {
		return cfg, framework.Results{configError(node, prefix, prefix+" must be an object")}
	}

	var results framework.Results
	var unknown []string
	for _, key := range keysOf(settings) {
		value := settings.Field(key).Value.YNode()
		path := prefix + "." + key
		switch key {
		case settingOwnerReferences:
			policy := render.OwnerReferencePolicy(value.Value)
			if value.Kind != yaml.ScalarNode || !validPolicy(policy) {
				results = append(results, configError(node, path, fmt.Sprintf(
					"%s must be one of %s, not %q", key, policyList(), value.Value)))
				continue
			}
			cfg.OwnerReferences = policy
		case settingMaxServicesPerFLApp:
			n, err := strconv.ParseInt(value.Value, 10, 64)
			isInt := value.Kind == yaml.ScalarNode && (value.Tag == yaml.NodeTagInt || fromStrings && value.Tag == yaml.NodeTagString)
			if !isInt || err != nil || n < 1 {
				results = append(results, configError(node, path, fmt.Sprintf(
					"%s must be a positive integer, not %q", key, value.Value)))
				continue
			}
			cfg.MaxServicesPerFLApp = n
		default:
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		results = append(results, configError(node, prefix+"."+unknown[0], fmt.Sprintf(
			"unknown setting(s) %s; known settings are %s and %s",
			strings.Join(unknown, ", "), settingOwnerReferences, settingMaxServicesPerFLApp)))
	}
	return cfg, results
}

func validPolicy(p render.OwnerReferencePolicy) bool {
	for _, v := range render.OwnerReferencePolicies {
		if p == v {
			return true
		}
	}
	return false
}

func policyList() string {
	s := make([]string, len(render.OwnerReferencePolicies))
	for i, p := range render.OwnerReferencePolicies {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

func configError(node *yaml.RNode, path, msg string) *framework.Result {
	r := &framework.Result{Severity: framework.Error, Message: "functionConfig: " + msg, ResourceRef: refOf(node)}
	if path != "" {
		r.Field = &framework.Field{Path: path}
	}
	return r
}

// keysOf lists a mapping node's keys in document order.
func keysOf(node *yaml.RNode) []string {
	content := node.YNode().Content
	keys := make([]string, 0, len(content)/2)
	for i := 0; i+1 < len(content); i += 2 {
		keys = append(keys, content[i].Value)
	}
	return keys
}

// stringField is a top-level scalar's value, or "" when absent or not a scalar.
func stringField(node *yaml.RNode, name string) string {
	f := node.Field(name)
	if f == nil || f.Value.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return f.Value.YNode().Value
}

// refOf identifies an object for a result, as far as it can be identified.
func refOf(node *yaml.RNode) *yaml.ResourceIdentifier {
	if node == nil || node.YNode().Kind != yaml.MappingNode {
		return nil
	}
	ref := &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: stringField(node, "apiVersion"), Kind: stringField(node, "kind")},
	}
	ref.Name, ref.Namespace = metaString(node, "name"), metaString(node, "namespace")
	if *ref == (yaml.ResourceIdentifier{}) {
		return nil
	}
	return ref
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fieldValue is a top-level field's value node, or nil.
func fieldValue(node *yaml.RNode, name string) *yaml.RNode {
	if f := node.Field(name); f != nil {
		return f.Value
	}
	return nil
}
