// Package fastyaml writes a run's output, the ResourceList of KRM mode or
// the YAML stream of render mode, byte for byte as kyaml v0.21.2 writes it,
// but with each generated Service written straight to bytes instead of
// being built and encoded as a yaml node, which is most of a kyaml
// function's cost. Everything else (the pass-through items, functionConfig,
// results, the annotation bookkeeping) still goes through kyaml.
//
// It mirrors these kyaml v0.21.2 functions step by step:
//
//   - framework.Execute: Execute;
//   - kio.ByteWriter.Write, the ResourceList branch with
//     KeepReaderAnnotations (kio.ByteReadWriter.Write): writeResourceList;
//     the stream branch with ClearAnnotations: WriteStream;
//   - kio.ReconcileInternalAnnotations (for a node it did not read) and
//     kio's determineAnnotationsFormat: krmAnnotations, annotationsFormat;
//   - kio's upWrapBareSequenceNode: upWrap;
//   - yaml.SetAnnotation's single-quoted values, and what yaml.NewEncoder
//     (go.yaml.in/yaml/v3's emitter: indent 2, compact sequences, its
//     quoting of strings that would resolve to another type) writes for a
//     Service node: appendService, scalarForm.
//
// serviceNode (reference.go) is the reference encoder: a Service as a yaml
// node, written by kyaml. The fast encoder must write exactly what kyaml
// writes for that node; WithServiceNodes gives the reference item list.
//
// The rule: a kyaml upgrade must keep this package's differential tests and
// FuzzFastKRM green (go test ./internal/fastyaml; the fuzz test with
// -fuzz FuzzFastKRM), or the fast path is switched off. Switching it off is
// one line: fastPath = false in execute.go. Execute and WriteStream then call
// framework.Execute and kio.ByteWriter themselves; the output stays kyaml's,
// only slower (BENCHMARKS.md). The differential tests compare every output
// with the fast path on and off.
//
// This package must never import package fn, internal/cli or render: the
// KRM processing uses it, never the other way. It knows Services only as
// corev1.Service and items only as yaml nodes. (Its differential tests, in
// package fastyaml_test, drive it through fn and internal/cli.)
package fastyaml
