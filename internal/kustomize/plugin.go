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

// maxPluginConfigs bounds the configurations one plugin file or inline
// entry may hold, counted before they are parsed: parsing one costs about
// what a small object does, and each visits every object of the build.
const maxPluginConfigs = 1000

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

// plugin classifies one entry of generators, transformers or validators:
// inline YAML (when kustomize reads it so), a file of plugin
// configurations, or a directory built as a kustomization whose objects
// are. It returns what it costs, its Objects being the configurations it
// holds; whether it is flapp-services' own entry; and, for an inline one,
// the entry as the build reads it (a file's is rewritten in place).
func (s *scan) plugin(chain *chain, kustName, dir, field string, i int, entry string) (Cost, bool, string) {
	at := fmt.Sprintf("%s[%d]", field, i)
	// Held to the ceilings before kustomize's parser sees it, which
	// expands aliases.
	if !s.checkConfigs(chain, at, "the entry", []byte(entry)) || !s.checkYAML(chain, at, "", []byte(entry)) {
		return Cost{}, false, ""
	}
	if _, err := s.resmaps.NewResMapFromBytes([]byte(entry)); err == nil {
		// kustomize's own test (KustTarget.configureExternalTransformers):
		// what parses as objects is inline.
		objects, err := parseObjects([]byte(entry))
		if err != nil {
			s.problem(chain, at, "an inline entry that is not a list of objects")
			return Cost{}, false, ""
		}
		first := len(s.Functions)
		ours := s.classify(chain, kustName, at, field, kustName, objects, true)
		if !ours {
			return Cost{Objects: int64(len(objects))}, false, ""
		}
		rewritten, err := s.entries(objects, first)
		if err != nil {
			s.problem(chain, at, "%v", err)
		}
		return Cost{Objects: int64(len(objects))}, true, rewritten
	}
	full, isDir := s.existing(chain, at, dir, entry)
	switch {
	case full == "":
		return Cost{}, false, ""
	case isDir:
		return s.subBuild(chain, at, entry, full, field), false, ""
	}
	n, ours := s.pluginFile(chain, kustName, at, full, field)
	return Cost{Objects: n}, ours, ""
}

// pluginFile classifies the plugin configurations of a file, listed by a
// kustomization's generators, transformers or validators (field), or in
// the resources of a directory listed there, and counts them; kustName is
// the kustomization listing it, as messages name it. A file of
// flapp-services' entries is read by the build as entryKind; ours says
// the file is one.
func (s *scan) pluginFile(chain *chain, kustName, at, full, field string) (n int64, ours bool) {
	data, err := s.readFile(full)
	if err != nil {
		s.problem(chain, at, "%v", err)
		return 0, false
	}
	name := s.tree.Name(full)
	if !s.checkYAML(chain, at, name, data) || !s.checkConfigs(chain, at, name, data) {
		return 0, false
	}
	objects, err := parseObjects(data)
	if err != nil {
		s.problem(chain, at, "%s: %v", name, err)
		return 0, false
	}
	first := len(s.Functions)
	if !s.classify(chain, kustName, at, field, name, objects, false) {
		return int64(len(objects)), false
	}
	rewritten, err := s.entries(objects, first)
	if err != nil {
		s.problem(chain, at, "%s: %v", name, err)
		return 0, false
	}
	resolved, err := s.tree.Resolve(full)
	if err != nil {
		s.problem(chain, at, "%v", err)
		return 0, false
	}
	s.rewrites[resolved] = []byte(rewritten)
	return int64(len(objects)), true
}

// entries is the YAML stream the build reads for objects, flapp-services'
// entries Functions[first:]: each as entryKind, naming the build and
// itself.
func (s *scan) entries(objects []*yaml.RNode, first int) (string, error) {
	docs := make([]string, len(objects))
	for j, obj := range objects {
		doc, err := entryDocument(obj, s.key, first+j)
		if err != nil {
			return "", err
		}
		docs[j] = doc
	}
	return strings.Join(docs, "---\n"), nil
}

// classify records a problem for every configuration that would run
// anything but a builtin, and says whether the entry is flapp-services'
// own. kustName is the kustomization file listing the entry and source the
// file the configurations are in (the kustomization itself when inline),
// both as messages name them.
func (s *scan) classify(chain *chain, kustName, at, field, source string, objects []*yaml.RNode, inline bool) bool {
	where := source
	if inline {
		where = "the inline entry"
	}
	ours := 0
	for _, obj := range objects {
		kind, what := classify(obj)
		switch kind {
		case builtin:
		case flappServices:
			ours++
			if field != "transformers" {
				s.problem(chain, at, "%s lists flapp-services, a transformer: list it under transformers", where)
				continue
			}
			meta, _ := obj.GetMeta()
			s.Functions = append(s.Functions, Function{Kustomization: kustName, Source: source, Config: obj, apiVersion: meta.APIVersion, kind: meta.Kind})
		case function:
			s.problem(chain, at, "%s runs %s: flapp-services' build runs no KRM function; its own entry is read as its configuration, and nothing else is executed", where, what)
		case plugin:
			s.problem(chain, at, "%s configures the kustomize plugin %s: flapp-services' build runs builtin transformers and generators only", where, what)
		}
	}
	if ours > 0 && ours < len(objects) {
		s.problem(chain, at, "%s holds flapp-services' entry and other configurations: give flapp-services' entry a file of its own", where)
	}
	return ours > 0 && field == "transformers"
}

// checkConfigs records a problem when data holds more documents than a
// plugin file may, and says whether it is within the ceiling.
func (s *scan) checkConfigs(chain *chain, at, where string, data []byte) bool {
	if n := len(splitDocuments(data)); n > maxPluginConfigs {
		s.problem(chain, at, "%s holds %d plugin configurations, over the ceiling of %d", where, n, maxPluginConfigs)
		return false
	}
	return true
}
