// Command gendocs writes the root command's help from README.md, as the kpt
// functions catalog's mdtogo writes a function's: the sections between
// <!--mdtogo:Short-->, <!--mdtogo:Long-->, <!--mdtogo:Examples--> and the
// closing <!--mdtogo--> become the Go constants readmeShort, readmeLong and
// readmeExamples. Run it with `go generate ./internal/cli`.
//
// mdtogo leaves the Markdown as it is, bar code fences (dropped, their lines
// indented two spaces), #### headings ("Title:") and HTML comments
// (dropped). gendocs does the same and also makes the text read well in a
// terminal: paragraphs and list items are re-wrapped at 80 columns, a table
// becomes aligned columns, **bold** loses its stars and a link shows its
// address (relative ones against the repository); a table cell that is one
// code span loses its backquotes. readmeLong starts with the
// Short paragraph, as `kpt fn doc` shows its own help. Markdown it does not
// know (nested blocks, HTML) is an error, not a garbled help.
//
// It imports nothing of this module (layers_test.go checks): it reads the
// README and writes Go source.
package main
