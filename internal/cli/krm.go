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
	return drive(&krmMode{rw: &kio.ByteReadWriter{Reader: in, Writer: out, KeepReaderAnnotations: true}}, errOut, false)
}

// krmMode reads the whole ResourceList, as every KRM function does (its
// caller holds it in memory too), and streams the answer.
type krmMode struct {
	rw   *kio.ByteReadWriter
	rl   *fastyaml.ResourceList
	kept []*yaml.RNode
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
		for i, item := range rl.Items {
			if !yield(fn.ItemObject(i, item), nil) {
				return
			}
		}
	}, nil
}

func (m *krmMode) keep(obj fn.Object) error {
	m.kept = append(m.kept, obj.Node)
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
