package krmio

import (
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// How a string scalar is written.
const (
	formUnknown = iota // not known for certain: encode the Service with kyaml
	formPlain          // as it is
	formQuoted         // in double quotes, no escapes needed
)

// scalarForm says how kyaml's encoder writes the !!str node kyaml's setters
// make for s (stringNode): double-quoted when yaml.IsValueNonString(s) (a plain s would
// be another type in YAML 1.1), otherwise as yaml.v3 writes a string of no
// style (plainly, unless YAML 1.2 resolves it to another type, then
// double-quoted, or the emitter cannot write it plainly).
// yaml.IsValueNonString runs a YAML 1.1 parse per call, so these shapes are
// decided here without it:
//   - ASCII letters, digits and '-', '.', '_', '/', starting with a letter:
//     yaml.v2 and yaml.v3 resolve such a plain scalar only by looking it up
//     in their tables of words, so it is another type only when it is one of
//     yaml.v2's bool/null words (isYAML11Word, which holds yaml.v3's
//     true/false/null). Those are quoted, with nothing to escape; the rest
//     are written plainly, since none of these characters is an indicator
//     inside a scalar. TestScalarFormYAML11 checks this against
//     yaml.IsValueNonString for every such string of up to 3 characters,
//     the words' spellings and neighbours, and the golden and random ones;
//   - all digits (at most 18, so it parses as an int64): an int (or, with a
//     leading 0, a float) in both YAMLs: quoted;
//   - a UUID (8-4-4-4-12 hex digits) that starts with a digit: not a
//     timestamp (no '-' after 4 digits), not an int, float, 0b/0o/0x
//     number or base-60 number (no ':') in either YAML: a string, written
//     plainly.
//
// Keys must also be at most 128 bytes long, the emitter's limit for a simple
// key; callers pass key=true for them.
func scalarForm(s string, key bool) int {
	n := len(s)
	if n == 0 || (key && n > 128) {
		return formUnknown
	}
	c := s[0]
	if isDigit(c) {
		if n <= 18 && allDigits(s) {
			return formQuoted
		}
		if isUUID(s) {
			return formPlain
		}
		return formUnknown
	}
	if !isLetter(c) {
		return formUnknown
	}
	for i := 1; i < n; i++ {
		if b := s[i]; !isLetter(b) && !isDigit(b) && b != '-' && b != '.' && b != '_' && b != '/' {
			return formUnknown
		}
	}
	if n <= 5 && isYAML11Word(s) {
		return formQuoted
	}
	return formPlain
}

// isYAML11Word says whether s is one of the plain scalars that yaml.v2
// (YAML 1.1, go.yaml.in/yaml/v2's resolve table) reads as a bool or null
// and that start with a letter. It includes yaml.v3's true/false/null words.
func isYAML11Word(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF",
		"null", "Null", "NULL":
		return true
	}
	return false
}

func isDigit(b byte) bool  { return b >= '0' && b <= '9' }
func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
func isHex(b byte) bool    { return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F') }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

type scalarKey struct {
	s           string
	key, single bool
}

// scalarMemo remembers how kyaml writes the strings scalarForm does not
// decide: Services repeat them (a namespace, a UID, a path).
var scalarMemo struct {
	sync.Mutex
	m map[scalarKey]string
}

const scalarMemoMax = 1 << 16

// oneLine says whether the emitter's out, ending in its line break, is one
// line: go.yaml.in/yaml/v3 also breaks lines at NEL, LS and PS, writing
// the next line's indentation after them.
func oneLine(out string) bool {
	return strings.Count(out, "\n") == 1 && !strings.ContainsAny(out, "\u0085\u2028\u2029")
}

// kyamlScalar is how kyaml's encoder writes the string s as a mapping key
// or value, as kyaml's setters make its node (stringNode: double-quoted when
// yaml.IsValueNonString; single: a value node in single-quoted style, as
// SetAnnotation makes), found by encoding a one-entry mapping. The encoder's line width
// is unlimited, so a scalar written on one line is written the same at any
// indentation; ok is false when it takes more than one line.
func kyamlScalar(s string, key, single bool) (string, bool) {
	k := scalarKey{s, key, single}
	scalarMemo.Lock()
	text, found := scalarMemo.m[k]
	scalarMemo.Unlock()
	if found {
		return text, text != ""
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	if key {
		m.Content = []*yaml.Node{stringNode(s), stringNode("v")}
	} else {
		v := stringNode(s)
		if single {
			v.Style = yaml.SingleQuotedStyle
		}
		m.Content = []*yaml.Node{stringNode("k"), v}
	}
	text = ""
	if b, err := yaml.Marshal(m); err == nil {
		out := string(b)
		prefix, suffix := "k: ", "\n"
		if key {
			prefix, suffix = "", ": v\n"
		}
		if strings.HasPrefix(out, prefix) && strings.HasSuffix(out, suffix) && oneLine(out) && !strings.HasPrefix(out, "? ") {
			text = out[len(prefix) : len(out)-len(suffix)]
		}
	}
	scalarMemo.Lock()
	if scalarMemo.m == nil {
		scalarMemo.m = make(map[scalarKey]string)
	}
	if len(scalarMemo.m) < scalarMemoMax {
		scalarMemo.m[k] = text
	}
	scalarMemo.Unlock()
	return text, text != ""
}
