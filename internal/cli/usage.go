package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// flagErrorWithHint answers a flag error (unknown flag, bad value) with the
// line that says where the flags are listed.
func flagErrorWithHint(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%w\n%s", err, usageHint(cmd))
}

// noArgs is cobra.NoArgs answering an unknown command with cobra's
// suggestions and the usage hint.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
		msg += " (did you mean " + strings.Join(suggestions, " or ") + "?)"
	}
	return fmt.Errorf("%s\n%s", msg, usageHint(cmd))
}

func usageHint(cmd *cobra.Command) string {
	return fmt.Sprintf("Run '%s --help' for usage.", cmd.CommandPath())
}
