package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/fedlearner/flapp-services/render"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DiscoverOptions are the flags of `flapp-services discover`.
type DiscoverOptions struct {
	Config string // the render's --config file, which is not a manifest
	Root   string // the repository root, when not the current directory (Argo CD)
	Paths  []string
}

// Discover answers, for a GitOps engine's plugin discovery (Argo CD's
// discover.find, which Argo CD asks before its own Helm and kustomize
// detection), whether `render` of the same paths is this tool's job. It
// claims only what is ours:
//
//   - a kustomization root, when its build runs flapp-services as a
//     transformer (in any of its kustomizations): that asked for this
//     function, which Argo CD's own kustomize cannot run;
//   - a plain directory or file that holds an FLApp, in any form the render
//     reads (a List, quoted or escaped kind, JSON, any document of a file),
//     or a file mentioning FLApp that does not parse (so the render reports
//     it).
//
// It claims no Helm chart (a Chart.yaml at the root), no other
// kustomization, and no directory without an FLApp, empty ones included.
//
// It reads through the render's reader, with its ceilings, and parses only
// the files that can hold an FLApp: the kind cannot be spelt without the
// bytes "FLApp" or an escape sequence (a backslash) in the file.
func Discover(opts DiscoverOptions) (string, error) {
	ld, err := repofs.New(repofs.RootOnly, repofs.Limits{})
	if err != nil {
		return "", err
	}
	if opts.Root != "" {
		if err := ld.SetTop(opts.Root); err != nil {
			return "", err
		}
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
	limits := RenderOptions{}.resolved() // discover reads as a render does by default
	r := &reader{ld: ld, maxObjects: limits.MaxObjects, maxDocNodes: limits.MaxDocumentNodes, maxObjectNodes: limits.MaxObjectNodes}
	for _, p := range paths {
		if p == "-" {
			continue
		}
		root, err := ld.Resolve(p)
		if err != nil {
			return "", err
		}
		reason, err := discoverRoot(ld, r, root, skip)
		if reason != "" || err != nil {
			return reason, err
		}
	}
	return "", nil
}

// discoverRoot is Discover for one PATH.
func discoverRoot(ld *repofs.Loader, r *reader, root repofs.Root, skip string) (string, error) {
	if file, ok := ld.Find(root, kustomize.FileNames...); ok {
		b, err := kustomize.Scan(ld.Tree(root), root.Path(), file, true, kustomize.Limits{MaxDocumentNodes: DefaultMaxDocumentNodes}, false)
		if err != nil || len(b.Functions) == 0 {
			return "", nil // Argo CD's kustomize builds it, or reports what is wrong
		}
		return fmt.Sprintf("%s runs %s as a transformer (%s)", file, kustomize.Name, b.Functions[0].Source), nil
	}
	if _, ok := ld.Find(root, "Chart.yaml"); ok {
		return "", nil // Argo CD's Helm renders it
	}
	files, err := ld.Files(root, skip)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		data, err := ld.Read(f)
		if err != nil {
			return "", err
		}
		plainly, maybe := mentions(data, render.Kind)
		if !maybe {
			continue
		}
		objects := func(yield func(fn.Object, error) bool) {
			r.file(source{origin: fn.Origin{File: f.Name}, data: data}, yield)
		}
		for obj, err := range objects {
			if err != nil {
				if plainly {
					return fmt.Sprintf("%s mentions %s but does not parse (%s): the render will report it", f.Name, render.Kind, shortError(err)), nil
				}
				break
			}
			n := obj.Node
			if n.YNode().Kind == yaml.MappingNode && fn.IsFLApp(scalar(n, "apiVersion"), scalar(n, "kind")) {
				return fmt.Sprintf("%s in %s", render.Kind, obj.Origin), nil
			}
		}
	}
	return "", nil
}

// shortError is an error's message, cut to one short line.
func shortError(err error) string {
	msg := err.Error()
	var in *fn.InputError
	if errors.As(err, &in) {
		msg = in.Err.Error()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}

// RunDiscover prints Discover's reason, or nothing; the exit code is 0 either
// way (what Argo CD's discover.find expects), 1 only when a file cannot be read.
func RunDiscover(opts DiscoverOptions, out io.Writer) error {
	reason, err := Discover(opts)
	if err != nil {
		return err
	}
	if reason != "" {
		_, err = fmt.Fprintln(out, reason)
	}
	return err
}
