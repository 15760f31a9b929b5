package cli

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/loader"
	"github.com/fedlearner/flapp-services/render"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DiscoverOptions are the flags of `flapp-services discover`.
type DiscoverOptions struct {
	Config string // the render's --config file, which is not a manifest
	Paths  []string
}

// Discover answers, for a GitOps engine's plugin discovery (Argo CD's
// discover.find), whether `render` of the same paths is this tool's job:
// it reports a reason when the tree holds an FLApp in any form the render
// reads (a List, quoted or commented kind, JSON, any document of a
// multi-document file), when a file mentioning FLApp does not parse (so the
// render reports it), or when the tree holds no object at all (so the
// render refuses the empty render with its own message). It reports ""
// when the tree holds objects but no FLApp: those directories are not ours.
//
// It reads the same files as the render, and parses only the files that
// can hold an FLApp: the kind FLApp cannot be spelt without the bytes
// "FLApp" or an escape sequence (a backslash) in the file.
func Discover(opts DiscoverOptions) (string, error) {
	// The render's own loader, restrictions and ceilings: discover reads
	// the same untrusted tree.
	ld, err := loader.New(loader.RootOnly, loader.Limits{})
	if err != nil {
		return "", err
	}
	skip := ""
	if opts.Config != "" {
		if skip, err = filepath.Abs(opts.Config); err != nil {
			return "", err
		}
		if resolved, err := filepath.EvalSymlinks(skip); err == nil {
			skip = resolved
		}
	}
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	roots, err := resolvePaths(ld, paths)
	if err != nil {
		return "", err
	}
	files, err := listFiles(ld, roots, skip)
	if err != nil {
		return "", err
	}
	sawObject := false
	for _, list := range files {
		for _, f := range list {
			data, err := ld.Read(f)
			if err != nil {
				return "", err
			}
			name := f.Name
			mentions := bytes.Contains(data, []byte(render.Kind))
			if sawObject && !mentions && !bytes.Contains(data, []byte{'\\'}) {
				continue
			}
			nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
			if err != nil {
				if mentions {
					return fmt.Sprintf("%s mentions %s but does not parse: the render will report it", name, render.Kind), nil
				}
				sawObject = true
				continue
			}
			var objs []*yaml.RNode
			for _, n := range nodes {
				_ = expandObjects(n, name, func(o *yaml.RNode) error { objs = append(objs, o); return nil })
			}
			for _, o := range objs {
				if o.YNode().Kind == yaml.MappingNode && fn.IsFLApp(scalar(o, "apiVersion"), scalar(o, "kind")) {
					return fmt.Sprintf("%s in %s", render.Kind, name), nil
				}
			}
			sawObject = sawObject || len(objs) > 0
		}
	}
	if !sawObject {
		return fmt.Sprintf("no Kubernetes objects in %s: the render will refuse an empty render", strings.Join(paths, ", ")), nil
	}
	return "", nil
}

// RunDiscover prints Discover's reason, or nothing; the exit code is 0 either
// way (what Argo CD's discover.find expects), 1 only when a file cannot be read.
func RunDiscover(opts DiscoverOptions, out, errOut io.Writer) error {
	reason, err := Discover(opts)
	if err != nil {
		_, _ = fmt.Fprintf(errOut, "error: %v\n", err)
		return ErrFailed
	}
	if reason != "" {
		_, err = fmt.Fprintln(out, reason)
	}
	return err
}
