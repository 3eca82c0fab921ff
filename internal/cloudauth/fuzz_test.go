package cloudauth_test

import (
	"errors"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
)

// FuzzRecognise: whatever arguments a kubeconfig gives a known plugin, recognising it and
// checking the environment never panics and always says what is wrong, and a message never
// quotes an argument's value: arguments may hold secrets (--client-secret's value, a token).
// The seeds mark such values with "s3cr3t", wherever the fuzzer moves them.
//
//	go test -run '^$' -fuzz '^FuzzRecognise$' -fuzztime 60s ./internal/cloudauth/
func FuzzRecognise(f *testing.F) {
	optionName := regexp.MustCompile(`^--?[a-z][a-z0-9_-]{0,40}$`)
	f.Add("aws", "--region\x00eu-west-1\x00eks\x00get-token\x00--cluster-name\x00prod\x00--output\x00json")
	f.Add("aws", "eks\x00get-token\x00--cluster-name\x00prod\x00s3cr3t-positional-value")
	f.Add("aws", "eks\x00get-token\x00--cluster-name\x00prod\x00--role-arn=s3cr3t-role\x00--endpoint-url\x00s3cr3t-url")
	f.Add("aws-iam-authenticator", "token\x00-i\x00prod\x00-r")
	f.Add("kubelogin", "get-token\x00--login\x00spn\x00--server-id\x00x\x00--client-secret\x00s3cr3t-client-value\x00--legacy=maybe")
	f.Add("gke-gcloud-auth-plugin", "--use_application_default_credentials=s3cr3t")
	f.Add("kubelogin", "get-token\x00--login\x00s3cr3t-mode\x00--environment\x00s3cr3t-cloud\x00--server-id\x00x")
	f.Fuzz(func(t *testing.T, command, joined string) {
		args := strings.Split(joined, "\x00")
		p := cloudauth.Recognise(&clientcmdapi.ExecConfig{Command: command, Args: args})
		if p == nil {
			return
		}
		_, err := p.NewSource(cloudauth.Options{
			Getenv:   func(string) string { return "" },
			ReadFile: func(string) ([]byte, error) { return nil, fs.ErrNotExist },
		})
		var e *cloudauth.Error
		if err == nil || !errors.As(err, &e) {
			t.Fatalf("NewSource() error = %v, want an *Error (the environment is empty)", err)
		}
		// Values marked as secrets (the seeds place them where secrets go) never appear.
		for _, a := range args {
			if name, _, _ := strings.Cut(a, "="); optionName.MatchString(name) && !strings.Contains(a, "=") {
				continue // an option's name may be quoted
			}
			if strings.Contains(a, "s3cr3t") && strings.Contains(e.Message, strings.TrimLeft(a, "-")) {
				t.Errorf("the message quotes the argument %q: %s", a, e.Message)
			}
		}
	})
}
