package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/org/app-status-action/internal/sanitize"
)

// errReported ends a command whose error is already printed, with its exit code set.
var errReported = errors.New("reported")

// The groups of the commands in the help, by task.
const (
	groupRollout = "rollout"
	groupCI      = "ci"
	groupOther   = "other"
)

// newRootCommand is the command tree of app-status, as flux and kubectl lay theirs out: each
// command sets *code, the process's exit code, when it runs.
func newRootCommand(ctx context.Context, env Env, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:   "app-status",
		Short: "Verify that a Flux app is rolled out on many Kubernetes clusters at once",
		Long: `app-status verifies that a Flux app is rolled out on many Kubernetes clusters at once:
every requested Kustomization, HelmRelease or ResourceSet has applied the revision, and
every object of its inventory is Current, on every cluster, each cluster's verdict as soon
as it is known.`,
		Example: `  # Wait until the current context's my-app has applied the commit
  app-status verify ks/my-app --revision 5f1c0ff

  # Every context of the kubeconfig, as JSON
  app-status verify ks/my-app hr/my-chart --all-contexts -o json`,
		SilenceErrors:      true,
		SilenceUsage:       true,
		DisableSuggestions: true,
	}
	root.AddGroup(
		&cobra.Group{ID: groupRollout, Title: "Verify a rollout:"},
		&cobra.Group{ID: groupCI, Title: "In CI pipelines:"},
		&cobra.Group{ID: groupOther, Title: "Other commands:"},
	)
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)
	root.AddCommand(
		newVerifyCommand(false, code, runVerify(ctx, env, false)),
		newVerifyCommand(true, code, runVerify(ctx, env, true)),
		newMergeCommand(code, func(o *mergeOptions, args []string, parseErr error) int {
			return runMerge(o, args, env, parseErr)
		}),
		&cobra.Command{
			Use:     "action",
			Short:   "Run as a GitHub Action (reads INPUT_*)",
			GroupID: groupCI,
			Args:    cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				*code = runAction(ctx, env)
				return nil
			},
		},
		newExitCommand(code, func(args []string, parseErr error) int {
			return runExit(args, env, parseErr)
		}),
		&cobra.Command{
			Use:     "version",
			Short:   "Print the version",
			GroupID: groupOther,
			Args:    cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				_, err := fmt.Fprintf(c.OutOrStdout(), "app-status %s\n", programVersion())
				return err
			},
		},
	)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetContext(ctx)
	return root
}

// addVersionFlag gives root the --version flag cobra gives a command with a Version, and
// prints what the version command prints; as cobra's, it is added when a command line is run,
// not to the help printed without one. Not cobra's own: a version of another form than
// "NAME version V" takes cobra's SetVersionTemplate, whose text/template calls methods by
// name, and a binary that may call any method by name keeps every exported method of every
// type it holds (the linker's dead-code elimination gives up): 17 MB more, 12 MiB more
// resident at start.
func addVersionFlag(root *cobra.Command) {
	root.Flags().BoolP("version", "v", false, "version for "+root.Name())
	// As on cobra's: the shell completion offers nothing after it.
	_ = root.Flags().SetAnnotation("version", cobra.FlagSetByCobraAnnotation, []string{"true"})
	// root runs nothing of its own: cobra calls the help for it, whatever the flags.
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root && flagSet(c, "version") && !flagSet(c, "help") {
			if _, err := fmt.Fprintf(c.OutOrStdout(), "app-status %s\n", programVersion()); err != nil {
				c.PrintErrln(err)
			}
			return
		}
		help(c, args)
	})
}

// flagSet says whether c's bool flag name is given true.
func flagSet(c *cobra.Command, name string) bool {
	v, err := c.Flags().GetBool(name)
	return err == nil && v
}

// verifyFunc runs verify or get once the command line is parsed: the flags in o and fs, the
// Flux objects given as arguments in args, or the parse error. It returns the exit code.
type verifyFunc func(o *cliOptions, fs *pflag.FlagSet, args []string, parseErr error) int

// runVerify is the verifyFunc of the program: runCLI.
func runVerify(ctx context.Context, env Env, snapshot bool) verifyFunc {
	return func(o *cliOptions, fs *pflag.FlagSet, args []string, parseErr error) int {
		return runCLI(ctx, o, fs, args, env, snapshot, parseErr)
	}
}

// newVerifyCommand is `app-status verify`, or `app-status get` when snapshot, which run runs.
func newVerifyCommand(snapshot bool, code *int, run verifyFunc) *cobra.Command {
	o := &cliOptions{}
	cmd := &cobra.Command{
		Use:     "verify KIND/NAME... [flags]",
		Short:   "Wait until every cluster has rolled the Flux objects out",
		GroupID: groupRollout,
		Long: `Wait until every Flux object named has applied the revision and every object of its
inventory is Current, on every cluster: the current context of the kubeconfig, the contexts
--context names, every context (--all-contexts), or the clusters of --clusters-file or
--kubeconfig-dir. Exits 0 when every cluster is Current, 1 when not, 2 on bad input.`,
		Example: `  # The current context, until my-app has applied the commit
  app-status verify ks/my-app --revision 5f1c0ff

  # Two objects on two contexts, flags after the arguments, as JSON
  app-status verify ks/my-app hr/my-chart --context prod-eu --context prod-us -o json

  # Every context of the kubeconfig, for at most 10 minutes
  app-status verify kustomization/my-app --all-contexts --timeout 10m

  # The clusters of a file (name=source lines)
  app-status verify ks/my-app --clusters-file clusters.txt --revision v1.4.2`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeResource,
		RunE: func(c *cobra.Command, args []string) error {
			*code = run(o, c.Flags(), args, nil)
			return nil
		},
	}
	if snapshot {
		cmd.Use = "get KIND/NAME... [flags]"
		cmd.Short = "Print the state of the Flux objects on every cluster now, without waiting"
		cmd.Long = `Print the state of every Flux object named, and of its inventory, on every cluster now: a
snapshot, no watches, 5s per request. The clusters are chosen as for verify.`
		cmd.Example = `  # The current context's state of my-app
  app-status get ks/my-app

  # Every context, as markdown
  app-status get hr/my-chart -n apps --all-contexts -o markdown`
	}
	fs := newFlagSet(cmd.Name(), o)
	cmd.Flags().AddFlagSet(fs)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "markdown", "junit"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("evidence", cobra.FixedCompletions([]string{"full", "no-logs", "none"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		*code = run(o, c.Flags(), nil, err)
		return errReported
	})
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// completeResource completes an argument of verify and get with the kinds' prefixes.
func completeResource(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"kustomization/", "ks/", "helmrelease/", "hr/", "resourceset/", "rset/"}, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// groupedUsage prints a command's usage with its flags in their groups (flagGroups), the
// flags of no group last.
func groupedUsage(c *cobra.Command) error {
	w := c.OutOrStderr()
	fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
	if c.HasExample() {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	}
	for _, g := range flagGroups() {
		set := pflag.NewFlagSet(g, pflag.ContinueOnError)
		set.SortFlags = false
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			in := f.Annotations[flagGroupKey]
			if (len(in) > 0 && in[0] == g) || (len(in) == 0 && g == "Other") {
				set.AddFlag(f)
			}
		})
		if set.HasFlags() {
			fmt.Fprintf(w, "\n%s:\n%s", g, set.FlagUsagesWrapped(100))
		}
	}
	return nil
}

// run is the program, its mode chosen by args.
func run(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		if env.Getenv("GITHUB_ACTIONS") == "true" {
			return runAction(ctx, env)
		}
		root := newRootCommand(ctx, env, new(int))
		root.SetOut(env.Stderr)
		_ = root.Help()
		return 2
	}
	code := 0
	root := newRootCommand(ctx, env, &code)
	addVersionFlag(root)
	args = append([]string{args[0]}, flagPackageSpellings(root, args[0], args[1:])...)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case errors.Is(err, errReported):
		return code
	case err != nil:
		stderr := sanitize.NewCommandsWriter(env.Stderr)
		fmt.Fprintf(stderr, "app-status: %s\nSee 'app-status --help' for usage.\n", sanitize.Line(err.Error()))
		_ = stderr.Flush()
		return 2
	}
	return code
}

// flagPackageSpellings rewrites the command's flags as Go's flag package, which app-status
// used before, also took them to pflag's: -name to --name for a long flag (-help included),
// --x to -x for a shorthand (--o json). Scripts written then keep working. Nothing after "--"
// is rewritten, nor anything of a command that parses its own flags.
func flagPackageSpellings(root *cobra.Command, command string, args []string) []string {
	c, _, err := root.Find([]string{command})
	if err != nil || c == root || c.DisableFlagParsing {
		return args
	}
	c.InitDefaultHelpFlag()
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		twoDashes := strings.HasPrefix(a, "--")
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case twoDashes && len(name) == 1 && c.Flags().ShorthandLookup(name) != nil:
			out[i] = a[1:]
		case !twoDashes && len(name) > 1 && c.Flags().Lookup(name) != nil:
			out[i] = "-" + a
		}
	}
	return out
}
