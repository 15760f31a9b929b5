package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitsTable is Limits as SECURITY.md's table shows them.
func limitsTable() string {
	var b strings.Builder
	b.WriteString("| limit | default | flag (`render`) | config key | where it is enforced |\n|---|---|---|---|---|\n")
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, l := range Limits {
		b.WriteString("| " + l.Name + " | " + l.Default + " | " + code(l.Flag) + " | " + code(l.ConfigKey) + " | " + l.Check + " |\n")
	}
	return b.String()
}

// The markers around SECURITY.md's limits table: everything between them
// is the generated table.
const (
	limitsBegin = "<!-- limits: generated from internal/cli.Limits by UPDATE_LIMITS=1 go test ./internal/cli -run TestSecurityLimitsTable -->\n"
	limitsEnd   = "<!-- end of limits -->\n"
)

const securityMD = "../../SECURITY.md"

// TestSecurityLimitsTable: SECURITY.md lists every ceiling as Limits does,
// and nothing else: the whole section between the markers must be the
// generated table (a blank line, the table, a blank line), so a paste
// inside it fails too. UPDATE_LIMITS=1 rewrites the section.
func TestSecurityLimitsTable(t *testing.T) {
	doc, err := os.ReadFile(securityMD)
	require.NoError(t, err)
	before, section, after, err := limitsSection(string(doc))
	require.NoError(t, err)
	want := "\n" + limitsTable() + "\n"
	if os.Getenv("UPDATE_LIMITS") == "1" {
		require.NoError(t, os.WriteFile(securityMD, []byte(before+want+after), 0o644))
		t.Skip("rewrote SECURITY.md's limits section; read the diff")
	}
	if section != want {
		t.Errorf("SECURITY.md's limits section (between %q and %q) is not the table internal/cli.Limits makes: "+
			"run UPDATE_LIMITS=1 go test ./internal/cli -run TestSecurityLimitsTable, then read the diff\n%s",
			strings.TrimSpace(limitsBegin), strings.TrimSpace(limitsEnd), lineDiff(want, section))
	}
}

// limitsSection splits doc at the limits markers, which must each appear
// once, in order, on lines of their own. The markers stay in before and
// after.
func limitsSection(doc string) (before, section, after string, err error) {
	if strings.Count(doc, limitsBegin) != 1 || strings.Count(doc, limitsEnd) != 1 {
		return "", "", "", fmt.Errorf("SECURITY.md must hold each limits marker once, on a line of its own: %q, %q", limitsBegin, limitsEnd)
	}
	begin, end := strings.Index(doc, limitsBegin), strings.Index(doc, limitsEnd)
	b := begin + len(limitsBegin)
	if end < b || (begin > 0 && doc[begin-1] != '\n') || doc[end-1] != '\n' {
		return "", "", "", fmt.Errorf("SECURITY.md's limits markers must be on lines of their own, the begin marker first")
	}
	return doc[:b], doc[b:end], doc[end:], nil
}

// lineDiff names the first line where got departs from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d of the section:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return ""
}

// Every flag a limit names exists on render, with the limit's default.
func TestLimitFlagsExist(t *testing.T) {
	render, _, err := newCommand("test").Find([]string{"render"})
	require.NoError(t, err)
	for _, l := range Limits {
		if l.Flag == "" {
			continue
		}
		f := render.Flags().Lookup(strings.TrimPrefix(l.Flag, "--"))
		if assert.NotNil(t, f, l.Flag) && f.Name != "max-services" {
			assert.Equal(t, strings.ReplaceAll(l.Default, ",", ""), f.DefValue, l.Flag)
		}
	}
}
