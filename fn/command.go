package fn

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewCommand builds the flapp-services command line.
func NewCommand(version string) *cobra.Command {
	root := &cobra.Command{
		Use:   "flapp-services",
		Short: "Render the Kubernetes Services of fedlearner FLApps as plain manifests",
		Long: `flapp-services turns FLApps (fedlearner.k8s.io/v1alpha1) into the Services the
fedlearner operator creates for them: one per replica index, with the operator's
names, labels, selector, ports and (when the FLApp's UID is known) owner reference.

Without arguments it is a KRM function: it reads a ResourceList on stdin and
writes one on stdout, as kustomize (transformers:), kpt (pipeline.mutators) and
other KRM tools call it. Services it generated earlier are replaced, and pruned
when their replica, replica type or FLApp is gone. Any error exits non-zero
with the input items unchanged.`,
		Example: `  # as a KRM function
  kustomize build --enable-alpha-plugins --enable-exec .
  flapp-services < resource-list.yaml

  # render a directory of manifests (Argo CD plugin, CI)
  flapp-services render apps/
  flapp-services render --owner-references Never apps/ > rendered/all.yaml
  flapp-services render --check rendered/all.yaml apps/`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return RunKRM(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}

	var opts RenderOptions
	renderCmd := &cobra.Command{
		Use:   "render [PATH...]",
		Short: "Print the given manifests plus the generated Services as one YAML stream",
		Long: `render reads .yaml, .yml and .json files (directories recursively, in lexical
order, hidden directories skipped; '-' is stdin; no PATH means '.'), expands v1
Lists, drops objects annotated config.kubernetes.io/local-config: "true", and
prints every object followed by the generated Services.

On any error nothing is printed on stdout, the reasons go to stderr and the
exit code is 1: an empty or partial render must never reach a GitOps engine.`,
		Example: `  flapp-services render examples/basic
  flapp-services render --config fn-config.yaml apps/ team-b/flapp.yaml
  kubectl get flapps -o yaml | flapp-services render -
  flapp-services render --check rendered/all.yaml apps/   # CI drift check`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return RunRender(opts, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	renderCmd.Flags().StringVar(&opts.Config, "config", "", "function config file: a ConfigMap or a FLAppServices object")
	renderCmd.Flags().StringVar(&opts.OwnerReferences, "owner-references", "", "owner-reference policy, overriding the config: IfKnown, Required or Never")
	renderCmd.Flags().StringVar(&opts.Check, "check", "", "compare the render with this file instead of printing it; exit 1 with a diff when they differ")

	versionCmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "flapp-services", version)
			return err
		},
	}
	root.AddCommand(renderCmd, versionCmd)
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}
