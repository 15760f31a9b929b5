package main

import "testing"

func TestLineCounterCountsKindsAcrossWrites(t *testing.T) {
	stream := "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\nkind: Service\n" +
		"items:\n- apiVersion: v1\n  kind: Service\n- kind: Service\n  kind: ServiceAccount\nkind: Service"
	// Every way of cutting the stream into two writes counts the same.
	for cut := 0; cut <= len(stream); cut++ {
		c := &lineCounter{line: []byte("kind: Service")}
		_, _ = c.Write([]byte(stream[:cut]))
		_, _ = c.Write([]byte(stream[cut:]))
		c.finish()
		if c.count != 5 || c.bytes != int64(len(stream)) {
			t.Fatalf("cut at %d: counted %d lines in %d bytes, want 5 in %d", cut, c.count, c.bytes, len(stream))
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
