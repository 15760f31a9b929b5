package krmio

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamWriterWritesARenderOverSpoolMemoryWhole: a render larger than
// SpoolMemory waits in a temporary file, and WriteTo writes every byte
// added, in order, across the move from memory to the file.
func TestStreamWriterWritesARenderOverSpoolMemoryWhole(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var input strings.Builder
	for i := 0; input.Len() <= 3*SpoolMemory; i++ {
		if i > 0 {
			input.WriteString("---\n")
		}
		fmt.Fprintf(&input, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\ndata:\n  v: %s\n", i, strings.Repeat("x", 1000+i%7))
	}
	w := NewStreamWriter()
	defer func() { require.NoError(t, w.Close()) }()
	err := readObjects([]byte(input.String()), "big.yaml", ReadLimits{MaxNodes: 1 << 30, MaxDocuments: 1 << 30}, w.Add)
	require.NoError(t, err)

	var out bytes.Buffer
	require.NoError(t, w.WriteTo(&out, nil))
	want, got := input.String(), out.String()
	if got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("the render (%d bytes) differs from what was added (%d bytes) from byte %d on", len(got), len(want), i)
	}
}
