package kustomize

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
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

// Scan reads the kustomization files of the build rooted at the directory
// dir (absolute, inside tree), without building it, as kustomize would
// reach them: every resource, component, and every directory listed as a
// generator, transformer or validator (kustomize builds those as
// kustomizations too). file is the root's kustomization file as messages
// name it. With estimate, it also reads every resource file, to count the
// objects and estimate the build's cost against limits (render mode);
// without, it reads only kustomization and plugin configuration files
// (discover). Its error is a file that cannot be read or parsed; what the
// build must not do goes into Problems. Both are fn results.
func Scan(tree *repofs.Tree, dir, file string, restrictRoot bool, limits Limits, estimate bool) (*Root, error) {
	limits = limits.withDefaults()
	b := &Root{
		tree: tree, dir: dir, File: file, Dir: filepath.ToSlash(filepath.Dir(file)), tight: restrictRoot, limits: limits,
		key: newBuildKey(), rewrites: map[string][]byte{}, read: map[string][]byte{}, dataFiles: map[string]bool{}, visits: map[visitKey]*Cost{},
		resmaps: resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory()),
	}
	s := scan{Root: b, estimate: estimate}
	cost, err := s.visit(dir, &chain{name: file}, "")
	if err != nil {
		return nil, fn.Results{fn.BuildProblem([]string{file}, "", err.Error())}
	}
	b.Cost = cost
	if estimate {
		b.checkCost(&chain{name: file})
		if len(b.Functions) == 0 && b.problems.Len() == 0 {
			if err := b.addRenderEntry(); err != nil {
				return nil, fn.Results{fn.BuildProblem([]string{file}, "", err.Error())}
			}
		}
	}
	return b, nil
}

type scan struct {
	*Root
	estimate bool
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

// kustomizationFile finds the kustomization file of the directory dir.
func (b *Root) kustomizationFile(dir string) (string, bool) {
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
// (a copy a level would cost n²/2). A problem lists it (fn.Origin.Chain).
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
