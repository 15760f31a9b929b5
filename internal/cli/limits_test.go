package cli

import (
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

// TestSecurityLimitsTable: SECURITY.md lists every ceiling as Limits does.
// UPDATE_LIMITS=1 prints the table to paste.
func TestSecurityLimitsTable(t *testing.T) {
	want := limitsTable()
	if os.Getenv("UPDATE_LIMITS") == "1" {
		t.Log("\n" + want)
	}
	doc, err := os.ReadFile("../../SECURITY.md")
	require.NoError(t, err)
	assert.Contains(t, string(doc), want, "SECURITY.md's limits table differs from internal/cli.Limits")
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
