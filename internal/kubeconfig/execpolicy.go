package kubeconfig

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
)

// An exec credential plugin is a program the kubeconfig names, run with the job's environment:
// a kubeconfig of a file: source, which can come from the repository and so from a pull
// request, that runs one is code execution. So such a plugin never runs when it is
//
//   - a shell, an interpreter or a command runner (shellLike): its arguments are a script;
//   - a relative path: the program would be the repository's, and client-go would look for
//     it from the working folder, not the kubeconfig's;
//   - given an env that says which code a program loads (codeEnv);
//
// and in CI (Env.CI) it runs only with the pipeline's opt-in (Env.AllowExec), and only a
// program installed outside the workspace and the kubeconfig's folder. The plugins a built-in
// provider knows (EKS, GKE, AKS) are served by it there, whatever is installed. The workflow's
// own kubeconfigs (env: sources, the kubeconfig input, --kubeconfig) keep kubectl's rules.

// shellNames are the programs whose arguments are code, by their name in lower case, without
// ".exe" and a version ("python3.12" is python).
var shellNames = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "pdksh": true, "ash": true, "csh": true,
	"tcsh": true, "fish": true, "busybox": true, "toybox": true, "pwsh": true, "powershell": true, "cmd": true,
	"python": true, "pythonw": true, "py": true, "perl": true, "ruby": true, "node": true, "nodejs": true, "deno": true,
	"bun": true, "php": true, "lua": true, "luajit": true, "tclsh": true, "wish": true, "expect": true, "awk": true,
	"gawk": true, "mawk": true, "nawk": true, "java": true, "jshell": true, "osascript": true, "cscript": true,
	"wscript": true, "mshta": true, "rundll32": true, "env": true, "xargs": true, "sudo": true, "doas": true, "su": true,
	"nohup": true, "nice": true, "ionice": true, "timeout": true, "stdbuf": true, "setsid": true, "chroot": true,
	"unshare": true, "nsenter": true, "flock": true, "time": true, "watch": true, "script": true, "exec": true,
	"eval": true, "command": true, "find": true, "make": true, "ssh": true,
}

// version is what shellLike drops from a program's name: "3.12", "5.36.0", "-7".
var version = regexp.MustCompile(`[-_.]?[0-9][0-9._-]*$`)

// shellLike reports whether the command is a shell, an interpreter or a command runner.
func shellLike(command string) bool {
	name := strings.ToLower(filepath.Base(strings.ReplaceAll(command, `\`, "/")))
	name = strings.TrimSuffix(name, ".exe")
	return shellNames[name] || shellNames[version.ReplaceAllString(name, "")]
}

// relativeCommand reports whether the command is a path that is not absolute ("./get-token",
// "bin/get-token"): a bare name is looked for in PATH, ~/ starts at the home folder.
func relativeCommand(command string) bool {
	if !strings.ContainsAny(command, `/\`) || filepath.IsAbs(command) || strings.HasPrefix(command, "~/") {
		return false
	}
	return true
}

// codeEnvNames are the variables of an exec env that make a program load other code: the
// dynamic loader's, PATH, and the shells' and interpreters' start-up hooks. LD_ and DYLD_
// variables are refused whatever their name.
var codeEnvNames = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "ZDOTDIR": true, "PROMPT_COMMAND": true, "SHELLOPTS": true,
	"BASHOPTS": true, "IFS": true, "NODE_OPTIONS": true, "NODE_PATH": true, "PYTHONPATH": true, "PYTHONSTARTUP": true,
	"PYTHONHOME": true, "PYTHONUSERBASE": true, "PERL5LIB": true, "PERLLIB": true, "PERL5OPT": true, "RUBYOPT": true,
	"RUBYLIB": true, "GCONV_PATH": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_EXEC_PATH": true, "SSH_ASKPASS": true,
}

// codeEnv returns the first variable of the exec env that makes a program load other code.
func codeEnv(env []clientcmdapi.ExecEnvVar) (string, bool) {
	for _, e := range env {
		n := strings.ToUpper(e.Name)
		if codeEnvNames[n] || strings.HasPrefix(n, "LD_") || strings.HasPrefix(n, "DYLD_") {
			return e.Name, true
		}
	}
	return "", false
}

// repoExecRefused says why the exec plugin of a repository kubeconfig may not run, before it
// is looked for; empty means it may be, if it is installed (see repoProgramRefused).
func (l *loader) repoExecRefused(d *doc, userName string, exec *clientcmdapi.ExecConfig) string {
	name := filepath.Base(strings.ReplaceAll(exec.Command, `\`, "/"))
	what := fmt.Sprintf("the kubeconfig's user %q of %s has the exec credential plugin %q", userName, d.origin, name)
	whatever := ""
	if l.env.CI {
		whatever = ", whatever " + l.allowExecName() + " says"
	}
	switch {
	case shellLike(exec.Command):
		return fmt.Sprintf("%s, a shell or interpreter, which runs the code its arguments hold: %s, which can come from the repository and so from a pull request, never runs one%s: %s%s",
			what, repoKind(d), whatever, tokenAdvice, l.ownKubeconfig(d))
	case relativeCommand(exec.Command):
		return fmt.Sprintf("%s by a relative path, a program of the repository's: %s, which can come from the repository and so from a pull request, never runs one%s: name an installed plugin by its absolute path or its name in PATH, %s%s",
			what, repoKind(d), whatever, tokenAdvice, l.ownKubeconfig(d))
	}
	if v, ok := codeEnv(exec.Env); ok {
		return fmt.Sprintf("%s whose env sets %s, which makes a program load other code: %s, which can come from the repository and so from a pull request, never sets it%s: remove it%s",
			what, sanitizeEnvName(v), repoKind(d), whatever, l.ownKubeconfig(d))
	}
	if l.env.CI && !l.env.AllowExec {
		return fmt.Sprintf("%s (%s), which is not run in a CI job: %s can come from the repository, so from a pull request, and its exec plugin would run a program of its choosing with the job's environment, and no built-in provider replaces this one (see %s): %s (%s)%s, or, if the pipeline trusts every file: kubeconfig it reads, %s",
			what, execSummary(name, exec.Args), repoKind(d), cloudauth.DocsURL, tokenAdvice, execHint(name, exec.Args), l.ownKubeconfig(d), l.allowExecFix())
	}
	return ""
}

// repoProgramRefused says why the program LookPath found for a repository kubeconfig's exec
// plugin may not run in CI: it is in the workspace (the repository's clone) or in the
// kubeconfig's folder, so the repository's own. Empty means it may.
func (l *loader) repoProgramRefused(d *doc, userName, path string) string {
	if !l.env.CI {
		return ""
	}
	program := realPath(path)
	for _, dir := range []string{l.env.Workspace, d.dir} {
		if dir == "" || filepath.Dir(dir) == dir {
			continue // no folder, or the root (a step run from /): it holds every program
		}
		if rel, err := filepath.Rel(realPath(dir), program); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return fmt.Sprintf("the kubeconfig's user %q of %s has the exec credential plugin %q, a program in the workspace or the kubeconfig's folder, so the repository's: %s, which can come from the repository and so from a pull request, never runs one, whatever %s says: install the plugin outside the workspace and name it by that path%s",
				userName, d.origin, filepath.Base(path), repoKind(d), l.allowExecName(), l.ownKubeconfig(d))
		}
	}
	return ""
}

// realPath is path with its links resolved, or path itself when they cannot be.
func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return filepath.Clean(path)
}

// allowExecName names the opt-in of this mode.
func (l *loader) allowExecName() string {
	if l.in.CLI {
		return "--allow-exec"
	}
	return "the allow-exec input"
}

// allowExecFix says how to opt in.
func (l *loader) allowExecFix() string {
	if l.in.CLI {
		return "pass --allow-exec (the allow-exec input of the GitLab component and of the Tekton Task)"
	}
	return "set the allow-exec input to true (the plugin must be a program the action's container can run)"
}

// ownKubeconfig is the end of a fix: give the kubeconfig as the pipeline's own, whose plugins
// keep kubectl's rules; nothing for the action, which runs no plugin of any kubeconfig unless
// allow-exec is set.
func (l *loader) ownKubeconfig(d *doc) string {
	switch {
	case !l.in.CLI:
		return ""
	case d.envLine():
		return ", or put the line in the pipeline itself (--cluster in the job's script), whose env: lines are its own"
	}
	return ", or give the kubeconfig as the pipeline's own (an env: source, or --kubeconfig)"
}

// repoKind names a repository kubeconfig's source in messages.
func repoKind(d *doc) string {
	if d.envLine() {
		return "the kubeconfig of an env: line of a clusters file"
	}
	return "a kubeconfig of a file: source"
}

// sanitizeEnvName is a variable's name as a message may quote it: its characters if they are
// a name's, else nothing of it.
func sanitizeEnvName(name string) string {
	if variableName.MatchString(name) {
		return name
	}
	return "a variable"
}

// variableName is what a variable's name looks like.
var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
