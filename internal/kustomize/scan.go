package kustomize

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fedlearner/flapp-services/internal/loader"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FileNames are the names of a kustomization file, in the order kustomize
// looks for them.
var FileNames = konfig.RecognizedKustomizationFileNames()

// Name is the function's name: its image's repository ends in it
// (ghcr.io/fedlearner/flapp-services:v1), or its exec path's file is it.
const Name = "flapp-services"

// The typed function config, which names the function even without the
// function annotation.
const (
	configAPIVersion = "fn.fedlearner.k8s.io/v1alpha1"
	configKind       = "FLAppServices"
)

// maxProblems bounds the problems a scan lists: every one up to it, then
// how many more there are.
const maxProblems = 20

// maxPluginConfigs bounds the configurations one plugin file or inline
// entry may hold, counted before they are parsed: parsing one costs about
// what a small object does, and each visits every object of the build.
const maxPluginConfigs = 1000

// Build is a kustomization root, scanned: what its build reads and runs.
type Build struct {
	tree   *loader.Tree
	dir    string // the root, resolved
	File   string // its kustomization file, as messages name it
	Dir    string // the root, as messages name it
	tight  bool   // kustomize's own LoadRestrictionsRootOnly
	limits Limits

	// Functions are flapp-services' transformer entries, in the order the
	// build meets them: the render's configuration.
	Functions []Function
	// Problems are what the build must not do (execute, fetch, leave the
	// repository) or cannot do within its ceilings, each naming where: the
	// render refuses the build when there is any.
	Problems []Problem
	// Cost is what the build is estimated to cost, before it runs.
	Cost Cost
	// Changes are the transformations of the build's kustomizations that
	// can change a Service after an entry of another kustomization made it,
	// in the order the scan meets them: a render names them when it
	// refuses a Service the fedlearner operator would not claim.
	Changes []Change

	key         string            // names this build's entries as its run reads them (entryAnnotation)
	rewrites    map[string][]byte // resolved file -> its content as the build reads it: flapp-services' entries as entryKind
	read        map[string][]byte // resolved file -> its content, as the scan read it (the build reads it from here once)
	dataFiles   map[string]bool   // resolved files the build reads as data (generator sources), not as YAML
	visits      map[visitKey]*Cost
	unread      bool // the scan stopped past --max-build-count kustomizations
	resmaps     *resmap.Factory
	objects     objectFiles        // where the build's FLApps and Services were read
	metadata    []string           // the root's buildMetadata
	sortOptions *types.SortOptions // the root's
	lastAllowed bool               // the root's entry may be last: no vars, no validators
	virtual     map[string][]byte  // path -> content of a file only the build reads: the render's own entry
}

type visitKey struct {
	dir     string // resolved
	plugins string // the field (generators, transformers or validators) that lists it, when it is built for its plugin configurations
}

// Change is a field of a kustomization that can change a Service's name,
// namespace, labels, selector or ports: namePrefix, nameSuffix, namespace,
// commonLabels, labels (with includeSelectors), patches or replacements,
// or transformers[i], listed after an entry of the same kustomization.
type Change struct {
	Kustomization string // as messages name it
	Field         string
}

// changes lists the fields of k that can change a Service.
func changes(kustomization string, k *types.Kustomization) []Change {
	var out []Change
	add := func(set bool, field string) {
		if set {
			out = append(out, Change{kustomization, field})
		}
	}
	add(k.NamePrefix != "", "namePrefix")
	add(k.NameSuffix != "", "nameSuffix")
	add(k.Namespace != "", "namespace")
	add(len(k.CommonLabels) > 0, "commonLabels") //nolint:staticcheck // reading it, not using it
	add(slices.ContainsFunc(k.Labels, func(l types.Label) bool { return l.IncludeSelectors }), "labels")
	add(len(k.Patches) > 0, "patches")
	add(len(k.Replacements) > 0, "replacements")
	return out
}

// Function is one flapp-services entry of a kustomization's transformers.
type Function struct {
	Kustomization string      // the kustomization file that lists it, as messages name it
	Source        string      // the file holding the entry (the kustomization itself for an inline one)
	Config        *yaml.RNode // the entry: a ConfigMap or FLAppServices, the functionConfig; nil for the render's own
	// Render says the entry is the render's own, added at the end of the
	// root's transformers of a build that lists none: the render's
	// configuration (--config, the flags) is its configuration.
	Render bool

	apiVersion, kind string // the entry's own, which the build reads as builtin and entryKind
	// last says nothing runs after the entry but kustomize's final steps,
	// which leave what it adds as it is: Run writes that after the build.
	last bool
}

// Problem is one thing the build must not do, or a ceiling it would pass,
// and where.
type Problem struct {
	// Chain is the kustomization files from the root's to the one at
	// fault, the root's as messages name it, each other as the one before
	// refers to it (../../base/kustomization.yaml).
	Chain []string
	Entry string // the field or entry at fault (transformers[0]); "" for the file itself
	Msg   string
}

func (p Problem) String() string {
	s := strings.Join(p.Chain, " → ")
	if p.Entry != "" {
		s += ": " + p.Entry
	}
	return s + ": " + p.Msg
}

// Err is the build's problems as one error, every one listed up to
// maxProblems, or nil.
func (b *Build) Err() error {
	switch len(b.Problems) {
	case 0:
		return nil
	case 1:
		return errors.New(b.Problems[0].String())
	}
	lines := make([]string, 0, len(b.Problems)+1)
	lines = append(lines, fmt.Sprintf("%s: the build is refused, for %d reasons:", b.File, len(b.Problems)))
	for _, p := range b.Problems {
		lines = append(lines, "  "+p.String())
	}
	if len(b.Problems) == maxProblems {
		lines = append(lines, fmt.Sprintf("  (the scan stopped listing at %d)", maxProblems))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// Scan reads the kustomization files of the build rooted at the directory
// dir (absolute, inside tree), without building it, as kustomize would
// reach them: every resource, component, and every directory listed as a
// generator, transformer or validator (kustomize builds those as
// kustomizations too). file is the root's kustomization file as messages
// name it. With estimate, it also reads every resource file, to count the
// objects and estimate the build's cost against limits (render mode);
// without, it reads only kustomization and plugin configuration files
// (discover). Its error is a file that cannot be read or parsed; what the
// build must not do goes into Problems.
func Scan(tree *loader.Tree, dir, file string, restrictRoot bool, limits Limits, estimate bool) (*Build, error) {
	limits = limits.withDefaults()
	b := &Build{
		tree: tree, dir: dir, File: file, Dir: filepath.ToSlash(filepath.Dir(file)), tight: restrictRoot, limits: limits,
		key: newBuildKey(), rewrites: map[string][]byte{}, read: map[string][]byte{}, dataFiles: map[string]bool{}, visits: map[visitKey]*Cost{},
		resmaps: resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory()),
	}
	s := scan{Build: b, estimate: estimate}
	cost, err := s.visit(dir, &chain{name: file}, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	b.Cost = cost
	if estimate {
		b.checkCost(&chain{name: file})
		if len(b.Functions) == 0 && len(b.Problems) == 0 {
			if err := b.addRenderEntry(); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
		}
	}
	return b, nil
}

// renderEntry is the file of the render's own entry, in the root: the
// build reads it, the disk never holds it.
const renderEntry = ".flapp-services.render.yaml"

// addRenderEntry lists the render's own entry last in the root's
// transformers, for a build that lists no flapp-services entry: its FLApps
// are rendered as the root's transformers leave them. It is a file (an
// inline entry would run before the root's other entries, as kustomize
// runs inline ones first).
func (b *Build) addRenderEntry() error {
	kustFile, _ := b.kustomizationFile(b.dir)
	resolved, err := b.tree.Resolve(kustFile)
	if err != nil {
		return err
	}
	content, ok := b.rewrites[resolved]
	if !ok {
		content = b.read[resolved]
	}
	node, err := yaml.Parse(string(content))
	if err != nil {
		return err
	}
	list, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "transformers"))
	if err != nil || list.YNode().Kind != yaml.SequenceNode {
		return fmt.Errorf("transformers is not a list")
	}
	list.YNode().Style = 0
	list.YNode().Content = append(list.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Value: renderEntry})
	rewritten, err := node.String()
	if err != nil {
		return err
	}
	config := yaml.NewMapRNode(nil)
	config.SetApiVersion(configAPIVersion)
	config.SetKind(configKind)
	if err := config.SetName(Name); err != nil {
		return err
	}
	entry, err := entryDocument(config, b.key, len(b.Functions))
	if err != nil {
		return err
	}
	b.Functions = append(b.Functions, Function{Kustomization: b.File, Source: b.File, Render: true, apiVersion: configAPIVersion, kind: configKind, last: b.lastAllowed})
	b.rewrites[resolved] = []byte(rewritten)
	b.virtual = map[string][]byte{filepath.Join(b.dir, renderEntry): []byte(entry)}
	return nil
}

type scan struct {
	*Build
	estimate bool
}

// problem records a problem, up to maxProblems, once.
func (b *Build) problem(chain *chain, entry, format string, args ...any) {
	p := Problem{Chain: chain.list(), Entry: entry, Msg: fmt.Sprintf(format, args...)}
	if len(b.Problems) < maxProblems && !slices.ContainsFunc(b.Problems, func(q Problem) bool { return q.String() == p.String() }) {
		b.Problems = append(b.Problems, p)
	}
}

// kustomizationFile finds the kustomization file of the directory dir.
func (b *Build) kustomizationFile(dir string) (string, bool) {
	for _, name := range FileNames {
		if info, err := b.tree.Stat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() {
			return filepath.Join(dir, name), true
		}
	}
	return "", false
}

// errCycle is a kustomization reached again while it is scanned.
var errCycle = errors.New("it is part of a cycle: a kustomization that includes itself")

// visit scans the kustomization of the directory dir, reached through
// chain, and depth first what it refers to, and returns what its build is
// estimated to cost: each base as often as it is reached, as kustomize
// builds it once per reference. Its error is the root's own failure to
// read its kustomization; below the root a caller makes it a problem at
// the entry that led there.
func (s *scan) visit(dir string, chain *chain, plugins string) (Cost, error) {
	resolved, err := s.tree.Resolve(dir)
	if err != nil {
		return Cost{}, err
	}
	key := visitKey{resolved, plugins}
	if c, ok := s.visits[key]; ok {
		if c == nil {
			return Cost{}, errCycle
		}
		return *c, nil
	}
	if int64(len(s.visits)) > s.limits.MaxBuilds {
		// Each kustomization is built at least once: past the ceiling,
		// the scan reads no more, so that its work stays within it
		// whatever lies beyond (discover, which does not estimate,
		// included).
		s.unread = true
		return Cost{Builds: 1}, nil
	}
	s.visits[key] = nil
	// Below here, paths are relative to the directory resolved, as
	// kustomize's loader takes them (each root confirmed through
	// CleanedAbs): a chain of symlinked directories does not make the
	// paths, and each resolution, longer at every level.
	dir = resolved
	kustFile, ok := s.kustomizationFile(dir)
	if !ok {
		return Cost{}, nil // kustomize says what is missing
	}
	content, err := s.readFile(kustFile)
	if err != nil {
		return Cost{}, err
	}
	if !s.checkYAML(chain, "", "", content) {
		return Cost{}, nil
	}
	var k types.Kustomization
	if err := k.Unmarshal(content); err != nil {
		return Cost{}, fmt.Errorf("not a kustomization: %w", err)
	}
	root := chain.up == nil && plugins == ""
	if root {
		s.metadata, s.sortOptions = k.BuildMetadata, k.SortOptions
		// Only where nothing can change objects after the transformers:
		// kustomize v5.8.1 still resolves vars, deprecated, after them.
		s.lastAllowed = len(k.Vars) == 0 && len(k.Validators) == 0 //nolint:staticcheck // reading vars, not using them

	}
	legacyHelm := len(k.HelmChartInflationGenerator)
	k.FixKustomization()
	s.Changes = append(s.Changes, changes(s.tree.Name(kustFile), &k)...)
	s.checkInline(chain, content)

	var own Cost
	own.Builds = 1
	s.refuseExecuting(chain, &k, legacyHelm)
	s.dataPaths(chain, dir, &k)
	for _, list := range []struct {
		field string
		paths []string
	}{{"resources", k.Resources}, {"components", k.Components}} {
		for i, p := range list.paths {
			own.add(s.resource(chain, dir, fmt.Sprintf("%s[%d]", list.field, i), p, plugins))
		}
	}
	inline := map[int]string{} // transformers[i] -> the entry as the build reads it
	transforms := builtinTransforms(&k)
	for _, list := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for i, entry := range list.entries {
			c, ours, rewritten := s.plugin(chain, s.tree.Name(kustFile), dir, list.field, i, entry)
			if ours && plugins != "" {
				s.problem(chain, fmt.Sprintf("%s[%d]", list.field, i), "runs flapp-services in a kustomization built for plugin configurations, where it would render nothing: list it under transformers of the kustomization whose objects it renders")
				continue
			}
			if rewritten != "" {
				inline[i] = rewritten
			}
			if !ours && list.field == "transformers" && slices.ContainsFunc(s.Functions, func(f Function) bool { return f.Kustomization == s.tree.Name(kustFile) }) {
				// A transformer after an entry of this kustomization: it
				// sees the entry's Services.
				s.Changes = append(s.Changes, Change{s.tree.Name(kustFile), fmt.Sprintf("transformers[%d]", i)})
			}
			if ours && root && s.lastAllowed && rewritten == "" && list.field == "transformers" && i == len(list.entries)-1 {
				// The last file kustomize runs (it runs the inline
				// entries first, then the files in order).
				s.Functions[len(s.Functions)-1].last = true
			}
			if ours {
				continue // it adds Services, which the output's size counts
			}
			// A plugin directory is built like a base; its objects are
			// configurations, each of which makes an object or more
			// (generators) or visits every object (the others).
			own.add(Cost{Builds: c.Builds, Work: c.Work})
			switch list.field {
			case "generators":
				own.Objects = sat(own.Objects + c.Objects)
			default:
				transforms = sat(transforms + c.Objects)
			}
		}
	}
	own.Objects += int64(len(k.ConfigMapGenerator) + len(k.SecretGenerator))
	own.finish(transforms, metadataBytes(&k))
	if len(inline) > 0 {
		rewritten, err := withInlineEntries(content, inline)
		if err != nil {
			return Cost{}, err
		}
		resolvedFile, err := s.tree.Resolve(kustFile)
		if err != nil {
			return Cost{}, err
		}
		s.rewrites[resolvedFile] = rewritten
	}
	s.visits[key] = &own
	return own, nil
}

// chain is the kustomization files from the root's to the one being
// scanned, each as the one before refers to it, the last first: one node a
// level, shared by everything below it, so a chain of n bases costs n nodes
// (a copy a level would cost n²/2). A problem lists it (Problem.Chain).
type chain struct {
	up   *chain
	name string
}

// list is the chain from the root's kustomization on.
func (c *chain) list() []string {
	var names []string
	for ; c != nil; c = c.up {
		names = append(names, c.name)
	}
	slices.Reverse(names)
	return names
}

// descend is the chain to the kustomization a directory entry leads to:
// the referrer names its entry, the directory's kustomization file is
// named as the referrer refers to it.
func descend(c *chain, at, entry, file string) *chain {
	referrer := &chain{up: c.up, name: c.name + " (" + at + ")"}
	return &chain{up: referrer, name: path.Join(filepath.ToSlash(entry), filepath.Base(file))}
}

// subBuild scans the kustomization of the directory full, which the entry
// at of chain's last kustomization names as entry; what stops it is a
// problem at that entry.
func (s *scan) subBuild(chain *chain, at, entry, full string, plugins string) Cost {
	file, ok := s.kustomizationFile(full)
	if !ok {
		return Cost{} // kustomize says what is missing
	}
	next := descend(chain, at, entry, file)
	c, err := s.visit(full, next, plugins)
	if err != nil {
		s.problem(chain, at, "%s: %v", shown(entry), err)
		return Cost{}
	}
	return c
}

// refuseExecuting records the fields whose build runs a program: Helm
// chart inflation runs helm. legacy is how many of the helmCharts came
// from helmChartInflationGenerator, which FixKustomization moved there.
func (s *scan) refuseExecuting(chain *chain, k *types.Kustomization, legacy int) {
	const why = "Helm chart inflation runs the helm program, which flapp-services' build never runs: " +
		"render the chart with helm template and pipe it to flapp-services render -"
	for i := range k.HelmCharts {
		if at := len(k.HelmCharts) - legacy; i < at {
			s.problem(chain, fmt.Sprintf("helmCharts[%d]", i), why)
		} else {
			s.problem(chain, fmt.Sprintf("helmChartInflationGenerator[%d]", i-at), why)
		}
	}
	if k.HelmGlobals != nil {
		s.problem(chain, "helmGlobals", why)
	}
}

// dataPaths checks every path the build reads as a file (patches,
// replacements, configurations, crds, openapi, generator sources): each
// must be a path inside the repository, and each the build parses must be
// within the node ceiling. A missing one is left to kustomize, which reads
// it through the same confined file system.
func (s *scan) dataPaths(chain *chain, dir string, k *types.Kustomization) {
	for _, f := range filePaths(k) {
		resolved, err := s.local(dir, f.path)
		switch {
		case err != nil:
			s.problem(chain, f.entry, "%v", err)
		case resolved == "":
		case f.data:
			s.dataFiles[resolved] = true
		default:
			full := filepath.Join(dir, f.path)
			if data, err := s.readFile(full); err != nil {
				s.problem(chain, f.entry, "%v", err)
			} else if s.checkYAML(chain, f.entry, s.tree.Name(full), data) && strings.HasPrefix(f.entry, "crds[") {
				if cycle := crdCycle(data); cycle != nil {
					s.problem(chain, f.entry, "%s: type %s refers to itself through $ref (%s): kustomize would recurse until the process crashes",
						s.tree.Name(full), cycle[0], strings.Join(cycle, " -> "))
				}
			}
		}
	}
}

// local checks p, a path a kustomization names, relative to its directory
// dir: it must not be remote (flapp-services fetches nothing) nor lead out
// of the repository. It returns p resolved, or "" when it does not exist.
func (s *scan) local(dir, p string) (string, error) {
	if isRemote(p) {
		return "", fmt.Errorf("%s is remote: flapp-services builds only what the repository holds, and fetches nothing", shown(p))
	}
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%s is an absolute path: a kustomization in a repository names its files relative to itself", shown(p))
	}
	resolved, err := s.tree.Resolve(filepath.Join(dir, p))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return resolved, err
}

// existing resolves p as local does, and records a problem at the entry at
// when p is remote, outside or nothing at all (kustomize would try it as a
// remote repository). It returns the path to read and whether it is a
// directory, or "" when there is a problem.
func (s *scan) existing(chain *chain, at, dir, p string) (string, bool) {
	resolved, err := s.local(dir, p)
	if err != nil {
		s.problem(chain, at, "%v", err)
		return "", false
	}
	if resolved == "" {
		s.problem(chain, at, "%s is neither a file nor a directory of the repository: kustomize would try it as a remote repository, and flapp-services fetches nothing", shown(p))
		return "", false
	}
	full := filepath.Join(dir, p)
	info, err := s.tree.Stat(full)
	if err != nil {
		s.problem(chain, at, "%v", err)
		return "", false
	}
	return full, info.IsDir()
}

// resource scans one entry of resources or components: a file of objects,
// or a directory with a kustomization of its own.
func (s *scan) resource(chain *chain, dir, at, p string, plugins string) Cost {
	full, isDir := s.existing(chain, at, dir, p)
	switch {
	case full == "":
		return Cost{}
	case isDir:
		return s.subBuild(chain, at, p, full, plugins)
	case plugins != "":
		// A plugin directory's resources are plugin configurations: its
		// objects are the transformations it brings its referrer.
		n, _ := s.pluginFile(chain, chain.name, at, full, plugins)
		return Cost{Objects: n}
	case !s.estimate:
		return Cost{}
	}
	data, err := s.readFile(full)
	if err != nil {
		s.problem(chain, at, "%v", err)
		return Cost{}
	}
	name := s.tree.Name(full)
	if !s.checkYAML(chain, at, name, data) {
		return Cost{}
	}
	if msg := objectProblem(data, s.limits.MaxObjectNodes); msg != "" {
		s.problem(chain, at, "%s: %s", name, msg)
		return Cost{}
	}
	s.objects.add(name, data)
	return Cost{Objects: countObjects(data), Bytes: int64(len(data))}
}

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

// readFile reads a file of the tree once for the scan and the build: the
// build's first read of it is served from memory and not counted again.
func (b *Build) readFile(p string) ([]byte, error) {
	resolved, err := b.tree.Resolve(p)
	if err != nil {
		return nil, err
	}
	if data, ok := b.read[resolved]; ok {
		return data, b.tree.Charge(b.tree.Name(p), int64(len(data)))
	}
	data, err := b.tree.ReadFile(p)
	if err != nil {
		return nil, err
	}
	b.read[resolved] = data
	return data, nil
}

// shown is an entry as a message quotes it: as written when it is a plain
// path, else quoted and, past 100 bytes, cut.
func shown(entry string) string {
	if len(entry) <= 100 && strconv.Quote(entry) == `"`+entry+`"` {
		return entry
	}
	if len(entry) > 100 {
		return strconv.Quote(entry[:100]) + "..."
	}
	return strconv.Quote(entry)
}

// withInlineEntries is a kustomization file's content with the inline
// entries transformers[i] replaced by entries[i]: what krusty reads in its
// place.
func withInlineEntries(content []byte, entries map[int]string) ([]byte, error) {
	node, err := yaml.Parse(string(content))
	if err != nil {
		return nil, err
	}
	list, err := node.Pipe(yaml.Lookup("transformers"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("transformers is not a list")
	}
	for i, entry := range entries {
		if i >= len(list.YNode().Content) {
			return nil, fmt.Errorf("transformers has no entry %d", i)
		}
		list.YNode().Content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Style: yaml.LiteralStyle, Value: entry}
	}
	s, err := node.String()
	return []byte(s), err
}
