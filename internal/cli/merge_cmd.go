package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/sanitize"
)

// mergeOptions is what the merge command's flags set.
type mergeOptions struct {
	mergeSettings
	output, summaryFile string
	onlyFailed          bool
	evidence            report.Evidence
}

// mergeFunc runs merge once the command line is parsed: the flags in o, the report files (or
// patterns) given as arguments in args, or the parse error. It returns the exit code.
type mergeFunc func(o *mergeOptions, args []string, parseErr error) int

// newMergeCommand is `app-status merge`, which run runs.
func newMergeCommand(code *int, run mergeFunc) *cobra.Command {
	o := &mergeOptions{}
	cmd := &cobra.Command{
		Use:     "merge REPORT... [flags]",
		Short:   "Join the -o json reports of a run's shards (or legs) into one run",
		GroupID: groupCI,
		Long: `Join the -o json (--json-file) reports of a run's shards, or of its legs split by network,
into one run over every cluster: its output, summary and exit code are those of one run. No
cluster is contacted. A report of another CI run is refused, and so are reports of other
resources or another revision than --resource and --revision name, when given. REPORT is a
file or a pattern (reports/*.json). Exits 0 when every cluster is Current, 1 when not, 2 on
bad input.`,
		Example: `  # The shards' reports of this CI run, as one run
  app-status merge reports/*.json

  # Checked against the resource and revision the legs verify, as JSON
  app-status merge shard-*.json --resource ks/my-app --revision 5f1c0ff -o json

  # Reports written in another CI run, or on a workstation, on purpose
  app-status merge --allow-foreign-reports shard-1.json shard-2.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			*code = run(o, args, nil)
			return nil
		},
	}
	cmd.Flags().AddFlagSet(newMergeFlagSet(o))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "markdown", "junit"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("evidence", cobra.FixedCompletions([]string{"full", "no-logs", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("resource", completeResource)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		*code = run(o, nil, err)
		return errReported
	})
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// newMergeFlagSet defines the flags of `app-status merge`, writing into o, each in its group
// of the help (flagGroups). Their names and defaults are those of the flag package's set the
// command had before; -o is also --output, as verify's, and --namespace also -n.
func newMergeFlagSet(o *mergeOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("app-status merge", pflag.ContinueOnError)
	fs.SortFlags = false
	group := func(g string, names ...string) {
		for _, n := range names {
			_ = fs.SetAnnotation(n, flagGroupKey, []string{g})
		}
	}
	fs.StringArrayVar(&o.resources, "resource", nil, "the Flux object the legs verify, as verify's --resource (repeat for several): a report of others is refused")
	fs.StringVarP(&o.namespace, "namespace", "n", defaultSettings().namespace, "namespace of the Flux objects of --resource")
	fs.StringVar(&o.revision, "revision", "", "the revision the legs verify, as verify's --revision: a report of another is refused")
	fs.BoolVar(&o.allowForeign, "allow-foreign-reports", false, "merge reports written in another CI run (another repository, workflow run or pipeline, or none) on purpose")
	group(groupReports, "resource", "namespace", "revision", "allow-foreign-reports")

	fs.StringVarP(&o.output, "output", "o", "text", "output format: text, json, markdown or junit")
	fs.BoolVar(&o.onlyFailed, "only-failed", false, "text output: list only the clusters that are not Current")
	o.evidence = report.EvidenceFull
	fs.Var(evidenceFlag{&o.evidence}, "evidence", "how much of a failure's evidence the outputs keep: full, no-logs (no container logs) or none (no logs, no events)")
	fs.StringVar(&o.summaryFile, "summary-file", "", "also write the markdown summary to this file")
	group(groupOutput, "output", "only-failed", "evidence", "summary-file")
	return fs
}

// badUsage ends a command whose command line is wrong: what is wrong, on one line, and where
// the usage is, exit 2.
func badUsage(env Env, command string, err error) int {
	stderr := sanitize.NewCommandsWriter(env.Stderr)
	fmt.Fprintf(stderr, "app-status %s: %s\nSee 'app-status %s --help' for usage.\n", command, sanitize.Line(err.Error()), command)
	_ = stderr.Flush()
	return 2
}
