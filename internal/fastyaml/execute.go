package fastyaml

import (
	"bytes"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fastPath switches the fast path on. Setting it to false is the one change
// that switches it off: Execute and WriteStream then call framework.Execute
// and kio.ByteWriter as they are, and the output is kyaml's own, slower. The
// differential tests switch it off to get their reference.
var fastPath = true

// Generator is a KRM processor that keeps its pass-through items in rl.Items
// and returns the Services it generated, typed. What framework.Execute would
// write for it is rl.Items followed by the reference node of each Service
// (WithServiceNodes); on error, rl.Items as they are.
type Generator func(rl *framework.ResourceList) ([]corev1.Service, error)

// Execute is framework.Execute(p, rw), byte for byte, with the generated
// Services written by the fast encoder. The steps are Execute's, in its order.
func Execute(p Generator, rw *kio.ByteReadWriter) error {
	if !fastPath {
		return framework.Execute(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
			services, err := p(rl)
			rl.Items = WithServiceNodes(rl.Items, services)
			return err
		}), rw)
	}
	rl := framework.ResourceList{}
	var err error
	if rl.Items, err = rw.Read(); err != nil {
		return kerrors.WrapPrefixf(err, "failed to read ResourceList input")
	}
	rl.FunctionConfig = rw.FunctionConfig

	nodeAnnos, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return err
	}

	services, retErr := p(&rl)

	// Execute reconciles the items and the generated Services alike; the
	// Services' share is done by krmAnnotations when they are written.
	if err := kio.ReconcileInternalAnnotations(rl.Items, nodeAnnos); err != nil {
		return err
	}

	if len(rl.Results) > 0 {
		b, err := yaml.Marshal(rl.Results)
		if err != nil {
			return kerrors.Wrap(err)
		}
		y, err := yaml.Parse(string(b))
		if err != nil {
			return kerrors.Wrap(err)
		}
		rw.Results = y
	}
	if len(services) == 0 {
		if err := rw.Write(rl.Items); err != nil {
			return err
		}
		return retErr
	}
	if err := writeResourceList(rw, rl.Items, services, annotationsFormat(nodeAnnos), nodeAnnos); err != nil {
		return err
	}
	return retErr
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

// writeResourceList writes what rw.Write(WithServiceNodes(kept, services))
// writes after framework.Execute's reconciliation. The wrapper, the kept
// items, functionConfig and results are encoded by kyaml in one document, with
// a placeholder item where the Services go; the placeholder's line is then
// replaced by the Services.
func writeResourceList(rw *kio.ByteReadWriter, kept []*yaml.RNode, services []corev1.Service, f annotationFormat, nodeAnnos map[string]map[string]string) error {
	if rw.NoWrap || rw.WrappingKind == "" || rw.Style != 0 {
		return rw.Write(WithServiceNodes(kept, services))
	}
	// ByteWriter.Write, wrapping branch, with KeepReaderAnnotations (the
	// only setting fn.RunKRM uses). It copies the nodes first so the
	// caller's stay untouched; nothing here uses them afterwards.
	for _, n := range kept {
		if err := yaml.ClearEmptyAnnotations(n); err != nil {
			return err
		}
	}
	token := placeholder()
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, n := range kept {
		items.Content = append(items.Content, n.YNode())
	}
	items.Content = append(items.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: token})
	list := &yaml.Node{
		Kind: yaml.MappingNode,
		Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "apiVersion"},
			{Kind: yaml.ScalarNode, Value: rw.WrappingAPIVersion},
			{Kind: yaml.ScalarNode, Value: "kind"},
			{Kind: yaml.ScalarNode, Value: rw.WrappingKind},
			{Kind: yaml.ScalarNode, Value: "items"}, items,
		}}
	if rw.FunctionConfig != nil {
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "functionConfig"}, rw.FunctionConfig.YNode())
	}
	if rw.Results != nil {
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "results"}, rw.Results.YNode())
	}
	frame, err := appendEncoded(nil, &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{list}})
	if err != nil {
		return err
	}
	mark := []byte("\n- " + token + "\n")
	at := bytes.Index(frame, mark)
	if at < 0 || bytes.Count(frame, []byte(token)) != 1 {
		// Cannot happen with a random token; stay exact anyway.
		return errors.New("internal error: placeholder not found in the encoded ResourceList")
	}

	cw := newChunkWriter(rw.Writer, len(frame)+len(services)*700)
	cw.write(frame[:at+1])
	for i := range services {
		svc := &services[i]
		var err error
		if annos, ok := krmAnnotations(svc.Annotations, f); ok {
			cw.buf, err = encodeServiceItem(cw.buf, svc, annos)
		} else {
			cw.buf, err = exactServiceItem(cw.buf, serviceNode(svc), nodeAnnos)
		}
		if err != nil {
			return err
		}
		cw.flushIfFull()
	}
	cw.write(frame[at+len(mark):])
	return cw.flush()
}

// exactServiceItem reconciles one Service node with kio itself and encodes it
// as a ResourceList item.
func exactServiceItem(buf []byte, node *yaml.RNode, nodeAnnos map[string]map[string]string) ([]byte, error) {
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, nodeAnnos); err != nil {
		return buf, err
	}
	if err := yaml.ClearEmptyAnnotations(node); err != nil {
		return buf, err
	}
	return appendEncoded(buf, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{node.YNode()}})
}
