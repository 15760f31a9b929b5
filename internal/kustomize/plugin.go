package kustomize

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What an entry of generators, transformers or validators asks kustomize to
// run, and which entries are remote.

// parseObjects reads the mapping documents of a YAML stream; anything that
// is not one (a plain path read as YAML) makes it an error.
func parseObjects(data []byte) ([]*yaml.RNode, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("not an object")
		}
	}
	return nodes, nil
}

type pluginKind int

const (
	builtin pluginKind = iota
	flappServices
	function
	plugin
)

// classify tells what a plugin configuration asks kustomize to run, and
// names it: a KRM function by its annotation (container, exec or
// starlark), a builtin, or an external (exec or Go) plugin by its kind.
func classify(obj *yaml.RNode) (pluginKind, string) {
	meta, _ := obj.GetMeta()
	if spec, err := runtimeutil.GetFunctionSpec(obj); err != nil {
		return function, "a function whose annotation does not parse (" + err.Error() + ")"
	} else if spec != nil {
		switch {
		case spec.Container.Image != "":
			if isOurImage(spec.Container.Image) {
				return flappServices, ""
			}
			return function, "the function image " + spec.Container.Image
		case spec.Exec.Path != "":
			if isOurExec(spec.Exec.Path) {
				return flappServices, ""
			}
			return function, "the exec function " + spec.Exec.Path
		default:
			return function, "a function"
		}
	}
	if meta.APIVersion == configAPIVersion && meta.Kind == configKind {
		return flappServices, ""
	}
	if group, version, _ := strings.Cut(meta.APIVersion, "/"); version == "" && group == konfig.BuiltinPluginApiVersion {
		return builtin, ""
	}
	return plugin, strings.TrimSpace(meta.APIVersion + " " + meta.Kind)
}

// isOurImage says whether an image reference names this function: its
// repository's last path segment is flapp-services, whatever the registry,
// tag or digest.
func isOurImage(image string) bool {
	repo, _, _ := strings.Cut(image, "@")
	if slash, colon := strings.LastIndex(repo, "/"), strings.LastIndex(repo, ":"); colon > slash {
		repo = repo[:colon]
	}
	return repo[strings.LastIndex(repo, "/")+1:] == Name
}

// isOurExec says whether an exec path names this function, written with
// slashes or, for Windows, backslashes.
func isOurExec(p string) bool {
	base := path.Base(strings.ReplaceAll(p, `\`, "/"))
	return base == Name || base == Name+".exe"
}

// remoteURL is what kustomize may read as a remote git repository or file
// (its internal/git.NewRepoSpecFromURL and loader.IsRemoteFile accept no
// more): a scheme, an SCP-style user@, or a GitHub host, after an optional
// git:: prefix. It errs on the side of remote: a local path such as x@y,
// which kustomize would fail to parse as a URL, is refused too.
var remoteURL = regexp.MustCompile(`(?i)^(git::)?([a-z][a-z0-9+.-]*://|[a-z][a-z0-9-]*@|github\.com[/:])`)

func isRemote(p string) bool { return remoteURL.MatchString(strings.TrimSpace(p)) }
