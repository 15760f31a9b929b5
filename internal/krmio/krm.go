package krmio

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fedlearner/flapp-services/fn"
	corev1 "k8s.io/api/core/v1"
	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceList is a ResourceList read as framework.Execute reads it, for the
// caller to process and then Write.
type ResourceList struct {
	rw        *kio.ByteReadWriter
	Items     []*yaml.RNode
	nodeAnnos map[string]map[string]string
}

// ReadResourceList is the first half of framework.Execute: rw.Read, then
// kio.PreprocessResourcesForInternalAnnotationMigration. rw.FunctionConfig,
// rw.WrappingKind and rw.WrappingAPIVersion are set as rw.Read sets them.
func ReadResourceList(rw *kio.ByteReadWriter) (*ResourceList, error) {
	items, err := rw.Read()
	if err != nil {
		return nil, fmt.Errorf("input is not a readable ResourceList: %s", readFault(err))
	}
	nodeAnnos, err := kio.PreprocessResourcesForInternalAnnotationMigration(items)
	if err != nil {
		if aliased := aliasedMetadata(items); aliased != nil {
			err = aliased
		}
		return nil, fmt.Errorf("input is not a readable ResourceList: %w", err)
	}
	return &ResourceList{rw: rw, Items: items, nodeAnnos: nodeAnnos}, nil
}

// readFault is why rw.Read failed, as its innermost error says it: go-yaml's
// own message, without kyaml's wrapping (a MalformedYAMLError prefix and a
// stack).
func readFault(err error) string {
	for inner := errors.Unwrap(err); inner != nil; inner = errors.Unwrap(err) {
		err = inner
	}
	return err.Error()
}

// aliasedMetadata says which item kio could not annotate because it, or its
// metadata, is an alias (of another item's anchor): kyaml refuses the
// ResourceList, as every KRM function built on it does, in its own words
// ("expected MappingNode but got AliasNode"). Aliases inside metadata, and
// anywhere else, are read.
func aliasedMetadata(items []*yaml.RNode) error {
	const why = "kyaml, which reads and writes the ResourceList of every KRM function, annotates each item's metadata and cannot annotate an alias"
	for i, item := range items {
		n := item.YNode()
		if n.Kind == yaml.AliasNode {
			return fmt.Errorf("items[%d] is an alias (*%s) of another item: %s; write the item out", i, n.Value, why)
		}
		if md := item.Field(yaml.MetadataField); md != nil && md.Value.YNode().Kind == yaml.AliasNode {
			return fmt.Errorf("items[%d]: metadata is an alias (*%s): %s; write metadata out (its fields may be aliases, or a merge key: <<: *%s)",
				i, md.Value.YNode().Value, why, md.Value.YNode().Value)
		}
	}
	return nil
}

// Write is the second half of framework.Execute for a processor that set
// rl.Items to kept followed by a node for each Service of out and rl.Results
// to results, byte for byte, with the Services written by the fast encoder
// one at a time as the frame around them streams out: nothing proportional
// to the output is held. With a nil out (a failed run) the items are written
// as kept, which is then rl.Items as they came.
func (rl *ResourceList) Write(kept []*yaml.RNode, out *fn.Output, results framework.Results) error {
	rw := rl.rw
	if out == nil || len(kept) == 0 {
		items := kept
		if out != nil {
			var err error
			if items, err = withServiceNodes(kept, out.Services()); err != nil {
				return err
			}
		}
		if err := rl.finish(items, results); err != nil {
			return err
		}
		return rw.Write(items)
	}
	// Execute reconciles the items and the generated Services alike; the
	// Services' share is done by krmAnnotations as they are written.
	if err := rl.finish(kept, results); err != nil {
		return err
	}
	return writeResourceList(rw, kept, out, annotationsFormat(rl.nodeAnnos), rl.nodeAnnos)
}

// finish is what framework.Execute does between its processor and the write:
// kio.ReconcileInternalAnnotations, then the results into rw.Results.
func (rl *ResourceList) finish(items []*yaml.RNode, results framework.Results) error {
	if err := kio.ReconcileInternalAnnotations(items, rl.nodeAnnos); err != nil {
		return err
	}
	if len(results) > 0 {
		y, err := ResultsNode(results)
		if err != nil {
			return err
		}
		rl.rw.Results = y
	}
	return nil
}

// ResultsNode is the node framework.Execute makes of results: their text,
// as kyaml's encoder writes it (indent 2, compact sequences), parsed. It is
// not encoded straight into a node (yaml.Node.Encode): go.yaml.in/yaml/v3
// v3.0.5 does that through its own text, at indent 4, where it writes a
// sequence's string that starts with a line break, or with a space and
// holds one, as a block scalar indented less than its indentation indicator
// says, then loses the string or fails to parse it
// (TestResultsWrittenAsExecuteWritesThem).
func ResultsNode(results framework.Results) (*yaml.RNode, error) {
	b, err := yaml.Marshal(results)
	if err != nil {
		return nil, kerrors.Wrap(err)
	}
	y, err := yaml.Parse(string(b))
	if err != nil {
		return nil, kerrors.Wrap(err)
	}
	return y, nil
}

// annotationFormat is which of the internal and the legacy path/index/id
// annotations the output uses: kio's determineAnnotationsFormat, for input
// it has already accepted as consistent.
type annotationFormat struct{ internal, legacy bool }

func annotationsFormat(nodeAnnos map[string]map[string]string) annotationFormat {
	if len(nodeAnnos) == 0 {
		return annotationFormat{true, true}
	}
	var f annotationFormat
	for _, annos := range nodeAnnos {
		_, path := annos[kioutil.PathAnnotation]
		_, index := annos[kioutil.IndexAnnotation]
		_, id := annos[kioutil.IdAnnotation]
		_, lpath := annos[kioutil.LegacyPathAnnotation]
		_, lindex := annos[kioutil.LegacyIndexAnnotation]
		_, lid := annos[kioutil.LegacyIdAnnotation]
		if path || index || id || lpath || lindex || lid {
			return annotationFormat{path || index || id, lpath || lindex || lid}
		}
	}
	return f
}

// The internal annotations and their legacy twins, in the order kio
// reconciles them.
var annotationPairs = [3][2]string{
	{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation},
	{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation},
	{kioutil.IdAnnotation, kioutil.LegacyIdAnnotation},
}

// krmAnnotations is what kio.ReconcileInternalAnnotations leaves of the
// annotations of a generated Service (a node it did not see in the input):
// for each of path, index and id, a missing twin is appended (by
// SetAnnotation, so single-quoted), then the format the input did not use is
// removed. ok is false for annotations a generated Service never has (a twin
// already present, an empty value, the migration id): those take the exact
// path.
func krmAnnotations(m map[string]string, f annotationFormat) (out []annotation, ok bool) {
	if _, found := m[kioutil.InternalAnnotationsMigrationResourceIDAnnotation]; found {
		return nil, false
	}
	out = sortedAnnotations(m)
	for _, pair := range annotationPairs {
		v, hasNew := m[pair[0]]
		_, hasLegacy := m[pair[1]]
		if hasLegacy || (hasNew && v == "") {
			return nil, false
		}
		if hasNew {
			out = append(out, annotation{key: pair[1], value: v, single: true})
		}
	}
	drop := func(key string) bool {
		for _, pair := range annotationPairs {
			if (!f.internal && key == pair[0]) || (!f.legacy && key == pair[1]) {
				return true
			}
		}
		return false
	}
	return slices.DeleteFunc(out, func(a annotation) bool { return drop(a.key) }), true
}

// writeResourceList writes what rw.Write(withServiceNodes(kept,
// out.Services())) writes after framework.Execute's reconciliation, in the
// order the encoder would write that one document: the wrapper's
// apiVersion and kind, then "items:" and each kept item, each encoded by an
// encoder of its own as a one-item sequence, then the Services, then
// functionConfig and results. Every part is a block at column 0 of the
// document, so encoding them apart gives the bytes of encoding them
// together; one encoder for all the items would keep an event for every
// node of the input (go.yaml.in/yaml/v3 never trims its event queue): more
// than the input's tree itself.
func writeResourceList(rw *kio.ByteReadWriter, kept []*yaml.RNode, out *fn.Output, f annotationFormat, nodeAnnos map[string]map[string]string) error {
	if rw.NoWrap || rw.WrappingKind == "" || rw.Style != 0 || len(kept) == 0 {
		items, err := withServiceNodes(kept, out.Services())
		if err != nil {
			return err
		}
		return rw.Write(items)
	}
	// ByteWriter.Write, wrapping branch, with KeepReaderAnnotations (the
	// only setting KRM mode uses). It copies the nodes first so the
	// caller's stay untouched; nothing uses them afterwards, so they are
	// written as they are.
	for _, n := range kept {
		if err := yaml.ClearEmptyAnnotations(n); err != nil {
			return err
		}
	}
	cw := newChunkWriter(rw.Writer)
	var err error
	if cw.buf, err = appendEncoded(cw.buf, mapping(
		entry{"apiVersion", &yaml.Node{Kind: yaml.ScalarNode, Value: rw.WrappingAPIVersion}},
		entry{"kind", &yaml.Node{Kind: yaml.ScalarNode, Value: rw.WrappingKind}})); err != nil {
		return err
	}
	cw.buf = append(cw.buf, "items:\n"...)
	for _, n := range kept {
		if cw.buf, err = appendEncoded(cw.buf, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{n.YNode()}}); err != nil {
			return err
		}
		cw.flushIfFull()
	}
	for svc := range out.Services() {
		if annos, ok := krmAnnotations(svc.Annotations, f); ok {
			cw.buf, err = encodeServiceItem(cw.buf, svc, annos)
		} else {
			cw.buf, err = exactServiceItem(cw.buf, svc, nodeAnnos)
		}
		if err != nil {
			return err
		}
		cw.flushIfFull()
	}
	var tail []entry
	if rw.FunctionConfig != nil {
		tail = append(tail, entry{"functionConfig", rw.FunctionConfig.YNode()})
	}
	if rw.Results != nil {
		tail = append(tail, entry{"results", rw.Results.YNode()})
	}
	if len(tail) > 0 {
		if cw.buf, err = appendEncoded(cw.buf, mapping(tail...)); err != nil {
			return err
		}
	}
	return cw.flush()
}

// entry is one key and value of a mapping the writer builds.
type entry struct {
	key   string
	value *yaml.Node
}

// mapping is a block mapping of the entries.
func mapping(entries ...entry) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range entries {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.key}, e.value)
	}
	return m
}

// exactServiceItem reconciles the node of one Service with kio itself and
// encodes it as a ResourceList item.
func exactServiceItem(buf []byte, svc *corev1.Service, nodeAnnos map[string]map[string]string) ([]byte, error) {
	node, err := serviceNode(svc, sortedAnnotations(svc.Annotations))
	if err != nil {
		return buf, err
	}
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, nodeAnnos); err != nil {
		return buf, err
	}
	if err := yaml.ClearEmptyAnnotations(node); err != nil {
		return buf, err
	}
	return appendEncoded(buf, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{node.YNode()}})
}
