package cli

import (
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/kubeconfig"
)

// TestNotFoundGrace: the not-found-grace input and the --not-found-grace flag reach the
// verification request; unset, both are the default.
func TestNotFoundGrace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string   // the action's input
		flags []string // the CLI's
		want  time.Duration
	}{
		{name: "default", want: 2 * time.Minute},
		{name: "set", input: "45s", flags: []string{"--not-found-grace", "45s"}, want: 45 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			action, err := actionSettings(githubactions.New(githubactions.WithGetenv(func(k string) string {
				if k == "INPUT_NOT-FOUND-GRACE" {
					return tt.input
				}
				return ""
			})))
			if err != nil {
				t.Fatal(err)
			}
			var o cliOptions
			if err := newFlagSet("verify", &o).Parse(tt.flags); err != nil {
				t.Fatal(err)
			}
			f := newFakeEnv(t, map[string]string{})
			for mode, s := range map[string]settings{"action": action.settings, "cli": o.settings} {
				s.resources = []string{"ks/app"}
				s.clusters = kubeconfig.Input{Kubeconfig: tokenKubeconfig}
				req, _, err := s.request(f.env(), inputNames{})
				if err != nil {
					t.Fatalf("%s: request: %v", mode, err)
				}
				if req.NotFoundGrace != tt.want {
					t.Errorf("%s: request NotFoundGrace = %s, want %s", mode, req.NotFoundGrace, tt.want)
				}
			}
		})
	}
}
