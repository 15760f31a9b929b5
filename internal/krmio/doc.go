// Package krmio is the KRM stream I/O: it reads and writes what kyaml
// v0.21.2 reads and writes for the two modes, byte for byte, but in a
// stream: input documents one at a time, output as it is produced, each
// generated Service written straight to bytes instead of being built and
// encoded as a yaml node (BENCHMARKS.md, Where the time goes). It is fenced: it mirrors these
// kyaml v0.21.2 and go.yaml.in/yaml/v3 internals step by step, and is held
// to them by its differential tests.
//
//   - framework.Execute: ReadResourceList (its reading half) and
//     ResourceList.Write (its writing half);
//   - kio.ByteReader.Read with PreserveSeqIndent, and kio's
//     splitDocuments: ReadDocuments, decodeDocument, splitDocuments. The
//     annotations its reader sets (the file, the document's index, its
//     sequence indentation) are not written into the node to be cleared
//     again: the caller knows the file, and Document carries the rest;
//   - kio.ByteWriter.Write, the ResourceList branch with
//     KeepReaderAnnotations: writeResourceList; the stream branch with
//     ClearAnnotations: StreamWriter;
//   - kio.ReconcileInternalAnnotations (for a node it did not read) and
//     kio's determineAnnotationsFormat: krmAnnotations, annotationsFormat;
//   - kio's upWrapBareSequenceNode: upWrap;
//   - yaml.SetAnnotation's single-quoted values, and what yaml.NewEncoder
//     (go.yaml.in/yaml/v3's emitter: indent 2, compact sequences, its
//     quoting of strings that would resolve to another type, the "---"
//     between documents) writes for a Service node: appendService,
//     scalarForm, documentSeparator.
//
// One deliberate difference: an encoder is never kept for a whole stream.
// go.yaml.in/yaml/v3's emitter keeps every event it emitted, so kyaml's
// writers hold an event per node of the output; here each document (and
// each ResourceList item) gets an encoder of its own.
//
// Another: an item of a List that aliases an anchor of another item (a
// document's anchors hold across its items) is read as it reads alone, each
// such alias replaced by a copy of its anchor's value (Inline, within the
// node ceilings): a render writes each item as a document of its own, where
// kio.ByteWriter would write an alias that names nothing. KRM mode writes
// its items as kyaml does, aliases kept (the ResourceList stays one
// document), and gives fn the items' copies to read.
//
// The fast encoder (encoder.go) is the only encoder of a generated Service:
// where a Service goes to kyaml as a node (a path the fast encoder does not
// take, or a string it leaves to kyaml), the node is its bytes for that
// Service, parsed (serviceNode). The tests' reference is fntest.ServiceNode,
// the node a kyaml function would build: the fast encoder must write exactly
// what kyaml writes for it, and kyaml must write serviceNode's node the same.
//
// The rule: a kyaml or go-yaml upgrade must keep this package's
// differential tests and FuzzFastKRM green (go test ./internal/krmio;
// the fuzz test with -fuzz FuzzFastKRM). They compare every output of both
// modes with what kyaml's own code writes for the same input: KRM mode
// with framework.Execute of the function written as a kyaml function
// (fntest.Processor), render mode with kio's reader, fn and kio.ByteWriter.
// If they cannot be made green, the writers hand every node to kyaml as
// those references do (withServiceNodes, rw.Write, kio.ByteWriter): the
// output stays kyaml's, only slower and held whole (DEVELOPMENT.md).
//
// Its own parts, which mirror nothing: spool.go and chunk.go (where the
// output waits), inline.go (an item read alone). MIRRORED.md beside it
// names the versions mirrored and their license; a test fails when
// go.mod moves past them.
//
// Of this module it imports only fn (for Output and Origin) and
// internal/yamlnodes (to bound a document's nodes); never internal/cli, which
// drives it. Its differential tests, in package
// krmio_test, drive it through internal/cli.
package krmio
