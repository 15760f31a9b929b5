package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceList versions callers send; the answer uses the version received.
var resourceListVersions = []string{"config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1"}

// RunKRM is the KRM function mode, as framework.Execute runs a function:
// read the ResourceList whole (its caller holds it in memory too); parse the
// functionConfig; add each item to the run, keeping what the output keeps;
// finish; then write the answer as it is produced, or fail. On failure the
// answer is the input's items unchanged plus the error results, and the
// errors go to errOut too.
func RunKRM(in io.Reader, out, errOut io.Writer) (err error) {
	defer recoverInternal(&err, errOut)
	rw := &kio.ByteReadWriter{Reader: in, Writer: out, KeepReaderAnnotations: true}
	rl, err := krmio.ReadResourceList(rw)
	if err != nil {
		results := fn.ErrorResults(err)
		report(errOut, results, framework.Error)
		if err := writeResults(rw, results); err != nil {
			return err
		}
		return ErrFailed
	}
	fail := func(results fn.Results) error {
		report(errOut, results, framework.Error)
		if err := rl.Write(rl.Items, nil, results.Framework()); err != nil {
			return err
		}
		return ErrFailed
	}
	if err := checkWrapper(rw); err != nil {
		// Answered with a ResourceList all the same, holding the error.
		rw.WrappingKind, rw.WrappingAPIVersion = kio.ResourceListKind, kio.ResourceListAPIVersion
		return fail(fn.ErrorResults(err))
	}
	cfg, results := fn.ParseConfig(rw.FunctionConfig, fn.Origin{})
	if results.ExitCode() != 0 {
		results.Sort()
		return fail(results)
	}
	run := fn.NewRun()
	kept := make([]*yaml.RNode, 0, len(rl.Items))
	budget := DefaultMaxDocumentNodes // what is left for the items' copies
	for i, item := range rl.Items {
		read, n, err := readItem(i, item, budget)
		if err != nil {
			return fail(fn.ErrorResults(err))
		}
		budget -= n
		if run.Add(read) {
			kept = append(kept, item) // the item as it came, as kyaml writes it
		}
	}
	output, results := run.Finish(cfg)
	if results.ExitCode() != 0 {
		return fail(results)
	}
	report(errOut, results, framework.Warning)
	return rl.Write(kept, output, results.Framework())
}

// readItem is the i-th item as the run reads it: a copy with its aliases to
// anchors of other items expanded (krmio.Inline), of n nodes, when it
// has any, which must fit under the ceiling per object and what the earlier
// copies left of the ceiling per document (budget): a ResourceList is one
// document. KRM mode has no flags: the ceilings are render's defaults.
func readItem(i int, item *yaml.RNode, budget int) (obj fn.Object, n int, err error) {
	obj = fn.ItemObject(i, item)
	copied, n := krmio.Inline(item.YNode(), min(DefaultMaxObjectNodes, budget))
	switch {
	case copied == nil && budget < DefaultMaxObjectNodes:
		return obj, 0, &fn.InputError{Origin: obj.Origin, Err: fmt.Errorf(
			"the items' aliases to anchors of other items expand to over %d YAML nodes in all, over the ceiling per document (--max-document-nodes, fixed in KRM mode)",
			DefaultMaxDocumentNodes)}
	case copied == nil:
		return obj, 0, &fn.InputError{Origin: obj.Origin, Err: fmt.Errorf(
			"%s has over %d YAML nodes once its aliases to anchors of other items are expanded, over the ceiling per object (--max-object-nodes, fixed in KRM mode): no Kubernetes object is that large",
			fn.Describe(item), DefaultMaxObjectNodes)}
	case copied == item.YNode():
		return obj, 0, nil
	}
	return fn.ItemObject(i, yaml.NewRNode(copied)), n, nil
}

// writeResults answers input that could not be read as a ResourceList with
// a ResourceList holding only the results.
func writeResults(rw *kio.ByteReadWriter, results fn.Results) error {
	apiVersion := rw.WrappingAPIVersion
	if !slices.Contains(resourceListVersions, apiVersion) {
		apiVersion = kio.ResourceListAPIVersion
	}
	node, err := krmio.ResultsNode(results.Framework())
	if err != nil {
		return err
	}
	w := kio.ByteWriter{Writer: rw.Writer, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: apiVersion, Results: node}
	return w.Write(nil)
}

// checkWrapper refuses input that is not a ResourceList of a known version.
func checkWrapper(rw *kio.ByteReadWriter) error {
	if rw.WrappingKind != kio.ResourceListKind {
		return errors.New("input is not a ResourceList (kind: ResourceList, apiVersion: config.kubernetes.io/v1): flapp-services reads a ResourceList on stdin; to render plain manifests, use 'flapp-services render PATH'")
	}
	if slices.Contains(resourceListVersions, rw.WrappingAPIVersion) {
		return nil
	}
	return fmt.Errorf("unsupported ResourceList apiVersion %q: expected one of %s", rw.WrappingAPIVersion, strings.Join(resourceListVersions, ", "))
}
