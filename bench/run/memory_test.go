package main

import (
	"strings"
	"testing"
)

func TestLineCounterCountsKindsAcrossWrites(t *testing.T) {
	stream := "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\nkind: Service\n" +
		"items:\n- apiVersion: v1\n  kind: Service\n- kind: Service\n  kind: ServiceAccount\nkind: Service"
	// Every way of cutting the stream into two writes counts the same.
	for cut := 0; cut <= len(stream); cut++ {
		c := &lineCounter{lines: [][]byte{[]byte("kind: Service"), []byte("kind: ServiceAccount")}, counts: []int{0, 0}}
		_, _ = c.Write([]byte(stream[:cut]))
		_, _ = c.Write([]byte(stream[cut:]))
		c.finish()
		if c.counts[0] != 5 || c.counts[1] != 1 || c.bytes != int64(len(stream)) {
			t.Fatalf("cut at %d: counted %v lines in %d bytes, want [5 1] in %d", cut, c.counts, c.bytes, len(stream))
		}
		if string(c.first) != "apiVersion: v1" || c.newlines != 10 {
			t.Fatalf("cut at %d: first line %q of %d, want %q of 10", cut, c.first, c.newlines, "apiVersion: v1")
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 137518: "137,518", 1677715: "1,677,715"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMeasureRowChecksTheOutput(t *testing.T) {
	sh := func(script string) command { return command{name: "sh", argv: []string{"/bin/sh", "-c", script}} }
	claim := expect{claim: "FLApp in a.yaml"}
	services := expect{counts: []count{{"kind: Service", 2}, {"namespace: prod", 3}}}
	for _, c := range []struct {
		name   string
		cmd    command
		expect expect
		wrong  string // a part of what measureRow says is wrong; "" when nothing is
	}{
		{"claim", sh(`echo "FLApp in a.yaml: document 1 (line 1)"`), claim, ""},
		{"claim of another file", sh(`echo "FLApp in b.yaml"`), claim, "want one that starts with"},
		{"claim and more", sh(`echo "FLApp in a.yaml"; echo more`), claim, "printed 2 lines"},
		{"no claim", sh(`true`), claim, "printed 0 lines"},
		{"nothing", sh(`true`), expect{}, ""},
		{"something", sh(`echo x`), expect{}, "2 bytes on stdout"},
		{"counts", sh(`printf 'kind: Service\nnamespace: prod\n  namespace: prod\n- kind: Service\n  namespace: prod\n'`), services, ""},
		{"one count short", sh(`printf 'kind: Service\nnamespace: prod\nkind: Service\nnamespace: prod\n'`), services, `printed 2 "namespace: prod", not 3`},
		{"exit code", sh(`echo oops >&2; exit 1`), expect{}, "exit code 1, not 0: oops"},
		{"refusal", sh(`echo "over 8Mi (--max-file-size)" >&2; exit 1`), expect{exit: 1, reason: "--max-file-size"}, ""},
		{"refusal for another reason", sh(`echo "over (--max-objects)" >&2; exit 1`), expect{exit: 1, reason: "--max-file-size"}, "stderr does not name --max-file-size"},
	} {
		_, wrong := measureRow(c.cmd, c.expect)
		if (c.wrong == "") != (wrong == "") || !strings.Contains(wrong, c.wrong) {
			t.Errorf("%s: measureRow says %q, want %q", c.name, wrong, c.wrong)
		}
	}
}
