package kubeconfig

import (
	"fmt"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

//nolint:gosec // G101: advice on what credential to give, not a credential
const maskAdvice = "give the user a credential of its own that is nothing else, such as a ServiceAccount token (kubectl create token ...)"

// recordContext records the secrets of the user and the cluster a context in use names, and of
// no other: a kubeconfig's other users are never sent anywhere by this run, and their values,
// masked, could only blank words from the job's log and outputs. A credential the user or
// cluster holds for sure that cannot be masked safely (Secrets.unmaskable: too short, or a
// word the run prints) makes the context unusable: the message says why without quoting it,
// and it is neither recorded nor sent. A value only taken for a credential by its name or
// shape (an exec plugin's argument, an auth provider's setting) that cannot be masked is no
// credential: it is not recorded.
func (l *loader) recordContext(d *doc, kctx *clientcmdapi.Context) string {
	var sure []fieldSecret
	var guessed []string
	if u := d.cfg.AuthInfos[kctx.AuthInfo]; u != nil {
		sure, guessed = userSecrets(u, d.public)
		for _, f := range sure {
			if why := l.secrets.unmaskable(f.value); why != "" {
				return fmt.Sprintf("the kubeconfig's user %q has a %s that cannot be masked safely: %s; %s", kctx.AuthInfo, f.field, why, maskAdvice)
			}
		}
	}
	if c := d.cfg.Clusters[kctx.Cluster]; c != nil {
		for _, f := range clusterSecrets(c) {
			if why := l.secrets.unmaskable(f.value); why != "" {
				return fmt.Sprintf("the kubeconfig's cluster %q has a %s that cannot be masked safely: %s; remove the credential from the URL, and %s", kctx.Cluster, f.field, why, maskAdvice)
			}
			sure = append(sure, f)
		}
	}
	for _, f := range sure {
		l.secrets.recordSure(f)
	}
	for _, v := range guessed {
		if l.secrets.unmaskable(v) == "" {
			l.secrets.add(v)
		}
	}
	return ""
}

// runWords are the words the run prints that a kubeconfig's names add: its contexts' names and
// the clusters they name when no list names them (contextClusterName).
func runWords(cfg *clientcmdapi.Config) []string {
	var words []string
	for n := range cfg.Contexts {
		words = append(words, n, contextClusterName(n))
	}
	return words
}
