package cli

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/fastyaml"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceList versions callers send; the answer uses the version received.
var resourceListVersions = []string{"config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1"}

// RunKRM is the KRM function mode: a ResourceList on in, a ResourceList on
// out, written as it is produced once the run has succeeded; on failure the
// input's items unchanged plus the error results. Errors also go to errOut.
func RunKRM(in io.Reader, out, errOut io.Writer) error {
	return drive(newKRMMode(in, out), errOut, false)
}

func newKRMMode(in io.Reader, out io.Writer) *krmMode {
	return &krmMode{rw: &kio.ByteReadWriter{Reader: in, Writer: out, KeepReaderAnnotations: true},
		maxObjectNodes: DefaultMaxObjectNodes, maxDocumentNodes: DefaultMaxDocumentNodes}
}

// krmMode reads the whole ResourceList, as every KRM function does (its
// caller holds it in memory too), and streams the answer.
type krmMode struct {
	rw   *kio.ByteReadWriter
	rl   *fastyaml.ResourceList
	kept []*yaml.RNode
	// copied is the item last read as a copy (fastyaml.Inline), and item
	// the item it was made from: the run reads the copy, the output keeps
	// the item as it came, as kyaml writes it.
	copied, item *yaml.RNode
	// The node ceilings on those copies: each (an object), and all of
	// them (a ResourceList is one document). KRM mode has no flags: they
	// are render's defaults.
	maxObjectNodes, maxDocumentNodes int
}

func (m *krmMode) open() (fn.Config, iter.Seq2[fn.Object, error], error) {
	rl, err := fastyaml.ReadResourceList(m.rw)
	if err != nil {
		return fn.Config{}, nil, fmt.Errorf("input is not a readable ResourceList: %w", err)
	}
	m.rl = rl
	if msg := checkWrapper(m.rw); msg != "" {
		// Answer with a ResourceList all the same, holding the error.
		m.rw.WrappingKind, m.rw.WrappingAPIVersion = kio.ResourceListKind, kio.ResourceListAPIVersion
		return fn.Config{}, nil, errors.New(msg)
	}
	cfg, results := fn.ParseConfig(m.rw.FunctionConfig)
	if results.ExitCode() != 0 {
		results.Sort()
		return cfg, nil, resultsError{results}
	}
	m.kept = make([]*yaml.RNode, 0, len(rl.Items))
	return cfg, func(yield func(fn.Object, error) bool) {
		budget := m.maxDocumentNodes // what is left for the copies
		defer func() { m.copied, m.item = nil, nil }()
		for i, item := range rl.Items {
			m.copied, m.item = nil, nil // the copy read last is not held
			obj := fn.ItemObject(i, item)
			copied, n := fastyaml.Inline(item.YNode(), min(m.maxObjectNodes, budget))
			if copied == nil {
				yield(fn.Object{}, m.inlineError(obj.Origin, item, budget))
				return
			}
			if copied != item.YNode() {
				budget -= n
				obj = fn.ItemObject(i, yaml.NewRNode(copied))
				m.copied, m.item = obj.Node, item
			}
			if !yield(obj, nil) {
				return
			}
		}
	}, nil
}

// inlineError refuses an item whose aliases to anchors of other items would
// expand past a node ceiling: the object's, or the document's when what the
// earlier items' copies left of it (budget) is less.
func (m *krmMode) inlineError(o fn.Origin, item *yaml.RNode, budget int) error {
	if budget < m.maxObjectNodes {
		return &inputError{o, fmt.Sprintf("the items' aliases to anchors of other items expand to over %d YAML nodes in all, over the ceiling per document (--max-document-nodes, fixed in KRM mode)",
			m.maxDocumentNodes)}
	}
	return &inputError{o, fmt.Sprintf("%s has over %d YAML nodes once its aliases to anchors of other items are expanded, over the ceiling per object (--max-object-nodes, fixed in KRM mode): no Kubernetes object is that large",
		describeObject(item), m.maxObjectNodes)}
}

func (m *krmMode) keep(obj fn.Object) error {
	node := obj.Node
	if node == m.copied {
		node = m.item
	}
	m.kept = append(m.kept, node)
	return nil
}

func (m *krmMode) write(out *fn.Output, results framework.Results) error {
	return m.rl.Write(m.kept, out, results)
}

// fail answers with the items as they came and the results; input that
// could not be read at all gets a ResourceList holding only the results.
func (m *krmMode) fail(results framework.Results) error {
	if m.rl != nil {
		return m.rl.Write(m.rl.Items, nil, results)
	}
	apiVersion := m.rw.WrappingAPIVersion
	if !slices.Contains(resourceListVersions, apiVersion) {
		apiVersion = kio.ResourceListAPIVersion
	}
	b, err := yaml.Marshal(results)
	if err != nil {
		return err
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		return err
	}
	w := kio.ByteWriter{Writer: m.rw.Writer, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: apiVersion, Results: node}
	return w.Write(nil)
}

func checkWrapper(rw *kio.ByteReadWriter) string {
	if rw.WrappingKind != kio.ResourceListKind {
		return "input is not a ResourceList (kind: ResourceList, apiVersion: config.kubernetes.io/v1): flapp-services reads a ResourceList on stdin; to render plain manifests, use 'flapp-services render PATH'"
	}
	if slices.Contains(resourceListVersions, rw.WrappingAPIVersion) {
		return ""
	}
	return fmt.Sprintf("unsupported ResourceList apiVersion %q: expected one of %s", rw.WrappingAPIVersion, strings.Join(resourceListVersions, ", "))
}
