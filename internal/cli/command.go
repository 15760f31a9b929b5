package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

//go:generate go run ./gendocs -readme ../../README.md -out help_gen.go

const readme = "the README, https://github.com/fedlearner/flapp-services"

// Main runs the command line with args and returns the process's exit code.
// Errors that were already reported (ErrFailed) are not printed again; any
// other (a flag, an argument) is reported as a run's are.
func Main(version string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCommand(version)
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		if !errors.Is(err, ErrFailed) {
			report(stderr, fn.ErrorResults(err), framework.Error)
		}
		return 1
	}
	return 0
}

// newCommand builds the flapp-services command line.
func newCommand(version string) *cobra.Command {
	version = binaryVersion(version)
	root := &cobra.Command{
		Use: "flapp-services",
		// The root's help is the README's mdtogo sections, as the catalog's
		// functions and `kpt fn doc` show theirs (help_gen.go).
		Short:         readmeShort,
		Long:          readmeLong + "\n\nEverything else (the Services in full, pruning, owner references, the image,\nevery integration): " + readme,
		Example:       readmeExamples,
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseTerminal(cmd.InOrStdin()); err != nil {
				return err
			}
			return RunKRM(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}

	var opts RenderOptions
	var renderArgoCD, discoverArgoCD bool
	maxCPU := defaultMaxCPUTime
	renderCmd := &cobra.Command{
		Use:   "render [PATH...]",
		Short: "Print the given manifests plus the generated Services as one YAML stream",
		Long: `render reads the .yaml, .yml and .json files of each PATH (directories
recursively; '-' is stdin; no PATH means '.') and prints every object
followed by the generated Services. On any error nothing is printed on
stdout and the exit code is 1. Details: ` + readme,
		Example: `  flapp-services render examples/basic
  kubectl get flapps -o yaml | flapp-services render -
  flapp-services render --check rendered/all.yaml apps/   # CI drift check`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("max-services") && opts.MaxServices < 1 {
				return fmt.Errorf("--max-services must be a positive integer, not %d", opts.MaxServices)
			}
			if opts.MaxObjects < 1 {
				return fmt.Errorf("--max-objects must be a positive integer, not %d", opts.MaxObjects)
			}
			if opts.MaxDocumentNodes < 1 {
				return fmt.Errorf("--max-document-nodes must be a positive integer, not %d", opts.MaxDocumentNodes)
			}
			if opts.Build.MaxBuilds < 1 || opts.Build.MaxCost < 1 || opts.Build.MaxTime <= 0 {
				return fmt.Errorf("--max-build-count, --max-build-cost and --max-build-time must be positive")
			}
			if opts.MaxObjectNodes < 1 {
				return fmt.Errorf("--max-object-nodes must be a positive integer, not %d", opts.MaxObjectNodes)
			}
			opts.Paths = args
			if renderArgoCD {
				var err error
				if opts, err = RenderOptionsFromArgoCD(os.LookupEnv, opts, cmd.Flags().Changed); err != nil {
					return err
				}
			}
			heapLimit(renderMemoryLimit)
			if maxCPU <= 0 {
				return fmt.Errorf("--max-cpu-time must be positive")
			}
			defer watch(cmp.Or(opts.MaxMemory, defaultMaxMemory), maxCPU, cmd.ErrOrStderr())()
			return RunRender(opts, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	renderCmd.Flags().StringVar(&opts.Config, "config", "", "function config file: a ConfigMap or a FLAppServices object")
	renderCmd.Flags().StringVar(&opts.OwnerReferences, "owner-references", "", "owner-reference policy, overriding the config: IfKnown, Required or Never")
	renderCmd.Flags().StringVar(&opts.Check, "check", "", "compare the render with this file instead of printing it; exit 1 with a diff when they differ")
	renderCmd.Flags().Int64Var(&opts.MaxServices, "max-services", 0, fmt.Sprintf("most Services one run may generate; when unset, the config's maxServices applies (default %d)", fn.DefaultMaxServices))
	renderCmd.Flags().StringVar(&opts.LoadRestrictor, "load-restrictor", string(repofs.RootOnly),
		fmt.Sprintf("%s: follow symlinks only while they stay inside the PATH they are reached from; %s: anywhere (trusted trees only)", repofs.RootOnly, repofs.None))
	renderCmd.Flags().Var(byteSize{&opts.Limits.MaxFileSize, repofs.DefaultMaxFileSize}, "max-file-size", "largest file (or stdin) read")
	renderCmd.Flags().Var(byteSize{&opts.Limits.MaxInputSize, repofs.DefaultMaxInputSize}, "max-input-size", "most bytes read in one run, all files together")
	renderCmd.Flags().IntVar(&opts.MaxObjects, "max-objects", DefaultMaxObjects, "most objects read in one run, all files together")
	renderCmd.Flags().IntVar(&opts.MaxDocumentNodes, "max-document-nodes", DefaultMaxDocumentNodes, "most YAML nodes one document may hold, bounded on its bytes before it is parsed")
	renderCmd.Flags().IntVar(&opts.MaxObjectNodes, "max-object-nodes", DefaultMaxObjectNodes, "most YAML nodes one object (a document, or an item of a List) may hold")
	renderCmd.Flags().Int64Var(&opts.Build.MaxBuilds, "max-build-count", kustomize.DefaultMaxBuilds, "most kustomization builds one kustomize build may run (a base is built once for each way it is reached)")
	renderCmd.Flags().Int64Var(&opts.Build.MaxCost, "max-build-cost", kustomize.DefaultMaxCost, "most a kustomize build may cost, as estimated before it runs (SECURITY.md)")
	renderCmd.Flags().Var(byteSize{&opts.Build.MaxOutput, kustomize.DefaultMaxOutput}, "max-build-output", "most bytes a kustomize build may output, estimated before it runs and counted as it is written")
	renderCmd.Flags().DurationVar(&opts.Build.MaxTime, "max-build-time", kustomize.DefaultMaxTime, "longest a kustomize build may run: a backstop to --max-build-cost")
	renderCmd.Flags().Var(byteSize{&opts.MaxMemory, defaultMaxMemory}, "max-memory", "most memory the render may hold (the Go runtime's own figures, read every 10 ms): past it the process stops, exit 1")
	renderCmd.Flags().DurationVar(&maxCPU, "max-cpu-time", defaultMaxCPUTime, "most CPU time the whole render may use, serialization included (read every 10 ms): past it the process stops, exit 1")
	renderCmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on any warning (exit 1, nothing on stdout): Argo CD shows a plugin's stderr only when it fails")
	renderCmd.Flags().BoolVar(&renderArgoCD, "argocd-env", false, argoCDRenderFlagUsage)

	var dopts DiscoverOptions
	discoverCmd := &cobra.Command{
		Use:   "discover [PATH...]",
		Short: "Print why 'render' of the same paths is this tool's job, or nothing",
		Long: `discover reads the files 'render' would read and prints one line when they
hold an FLApp in any form the render reads (also inside a v1 List, in JSON,
in UTF-16, in any document of a file), when a file that mentions FLApp does
not parse, or when the PATH is a kustomization root whose build runs
flapp-services as a transformer. It prints nothing for anything else: files
without an FLApp, an empty directory, a Helm chart, another kustomization.
The exit code is 0 either way, 1 only when a path cannot be read: the
contract of Argo CD's discover.find command.`,
		Example:       `  flapp-services discover .   # Argo CD plugin discovery (examples/argocd/plugin.yaml)`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			dopts.Paths = args
			if discoverArgoCD {
				dopts = DiscoverOptionsFromArgoCD(os.LookupEnv, dopts, cmd.Flags().Changed)
			}
			heapLimit(discoverMemoryLimit)
			// The render's hard ceiling too: Argo CD runs discover on every
			// refresh, in the same sidecar.
			defer watch(defaultMaxMemory, defaultMaxCPUTime, cmd.ErrOrStderr())()
			return RunDiscover(dopts, cmd.OutOrStdout())
		},
	}
	discoverCmd.Flags().StringVar(&dopts.Config, "config", "", "the render's --config file, which is not a manifest")
	discoverCmd.Flags().BoolVar(&discoverArgoCD, "argocd-env", false, argoCDDiscoverFlagUsage)

	versionCmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "flapp-services", version)
			return err
		},
	}
	root.AddCommand(renderCmd, discoverCmd, versionCmd)
	root.Version = version
	root.SetVersionTemplate("flapp-services {{.Version}}\n")
	root.SetFlagErrorFunc(flagErrorWithHint)
	root.SuggestionsMinimumDistance = 2
	return root
}

// byteSize is a size flag written as a Kubernetes quantity (8Mi, 1G, 4096).
type byteSize struct {
	v   *int64
	def int64
}

func (b byteSize) String() string {
	n := b.def
	if b.v != nil && *b.v != 0 {
		n = *b.v
	}
	return repofs.Size(n)
}

func (b byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("not a size like 8Mi or 1048576: %w", err)
	}
	n, ok := q.AsInt64()
	if !ok || n < 1 {
		return fmt.Errorf("%s is not a positive number of bytes", s)
	}
	*b.v = n
	return nil
}

func (byteSize) Type() string { return "size" }

// heapLimit sets the process's soft heap limit for the mode it runs, once,
// as it starts: garbage from one document must not pile up over the next
// ones, and past the limit the collector runs more often (it never fails a
// run that needs more). A lower GOMEMLIMIT stays; a higher one is the
// operator's choice for render (which then keeps it) but not for discover,
// whose worst input is one document. The Run functions leave the limit as
// they find it.
func heapLimit(limit int64) {
	current := debug.SetMemoryLimit(-1) // -1 reads it
	if current > limit && (ownHeapLimit() || limit == discoverMemoryLimit) {
		debug.SetMemoryLimit(limit)
	}
}
