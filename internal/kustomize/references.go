package kustomize

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
)

// The fields of a kustomization that name files and directories: each
// is read inside the repository, and what would run a program is refused.

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
