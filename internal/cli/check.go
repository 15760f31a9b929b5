package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/pmezard/go-difflib/difflib"
)

// checkDiffCeiling bounds what --check holds to print a diff: a render up to
// this size is diffed line by line; past it, the first differing line is
// named instead.
const checkDiffCeiling = 8 << 20

// check compares the render with the committed file as both stream by, for
// CI drift checks, and fails with a diff when they differ.
func check(ld *repofs.Loader, name, confined string, w *krmio.StreamWriter, out *fn.Output) error {
	committed, err := ld.OpenConfined("--check", name, confined, checkCeiling)
	if err != nil {
		return err
	}
	defer func() { _ = committed.Close() }()
	cmp := &comparer{old: bufio.NewReader(committed), line: 1}
	if err := w.WriteTo(cmp, out); err != nil {
		return err
	}
	if !cmp.differ {
		if _, err := cmp.old.ReadByte(); err != io.EOF {
			cmp.differ = true
		}
	}
	if !cmp.differ {
		return nil
	}
	stale := fmt.Sprintf("%s is out of date with its sources; re-render it with 'flapp-services render' and commit the result:", name)
	if cmp.overflow {
		return fmt.Errorf("%s\n(the render is over %d MiB: no diff; they first differ at line %d)", stale, checkDiffCeiling>>20, cmp.line)
	}
	old, err := ld.ReadConfined("--check", name, confined, checkCeiling)
	if err != nil {
		return err
	}
	diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(cmp.fresh.String()),
		FromFile: name + " (committed)", ToFile: name + " (fresh render)", Context: 3,
	})
	return fmt.Errorf("%s\n%s", stale, strings.TrimSuffix(diff, "\n"))
}

// comparer is the destination of a render under --check: it compares what
// is written with old, keeps the render for a diff while it is small, and
// counts lines up to the first difference.
type comparer struct {
	old      *bufio.Reader
	scratch  []byte
	differ   bool
	line     int
	fresh    bytes.Buffer
	overflow bool
}

func (c *comparer) Write(p []byte) (int, error) {
	if !c.overflow {
		if c.fresh.Len()+len(p) > checkDiffCeiling {
			c.overflow, c.fresh = true, bytes.Buffer{}
		} else {
			c.fresh.Write(p)
		}
	}
	if c.differ {
		return len(p), nil
	}
	if cap(c.scratch) < len(p) {
		c.scratch = make([]byte, len(p))
	}
	old := c.scratch[:len(p)]
	n, _ := io.ReadFull(c.old, old)
	for i := range n {
		if old[i] != p[i] {
			c.differ = true
			return len(p), nil
		}
		if p[i] == '\n' {
			c.line++
		}
	}
	c.differ = n < len(p)
	return len(p), nil
}
