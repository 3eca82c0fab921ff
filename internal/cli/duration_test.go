package cli

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "600", want: 10 * time.Minute},
		{in: "600s", want: 10 * time.Minute},
		{in: "10m", want: 10 * time.Minute},
		{in: "1h30m", want: 90 * time.Minute},
		{in: " 90 ", want: 90 * time.Second},
		{in: "0", want: 0},
		{in: "86400", want: 24 * time.Hour},
		{in: "86401", wantErr: "86401 seconds is out of range: give a duration up to 24h, e.g. 600, 90s or 10m"},
		{in: "-5", wantErr: "-5 seconds is out of range"},
		{in: "18446744074", wantErr: "18446744074 seconds is out of range"},
		{in: "9999999999h", wantErr: `"9999999999h" is out of range: give a duration up to 24h`},
		{in: "ten minutes", wantErr: `"ten minutes" is not a duration: give seconds or a duration with its unit, e.g. 600, 90s, 10m or 1h30m`},
		{in: "1.5", wantErr: `"1.5" is not a duration`},
		{in: "10 m", wantErr: `"10 m" is not a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := parseDuration(tt.in)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Errorf("parseDuration(%q) = %v, %v, want the error %q", tt.in, got, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("parseDuration(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestDurationSyntaxEverywhere: every duration input of the action and every duration flag of
// the CLI (which the GitLab component and the Tekton Task hand their timeout to) take the
// same forms: a bare number of seconds, or a duration with its unit.
func TestDurationSyntaxEverywhere(t *testing.T) {
	t.Parallel()
	settingOf := map[string]func(settings) time.Duration{
		"timeout":             func(s settings) time.Duration { return s.timeout },
		"unschedulable-grace": func(s settings) time.Duration { return s.unschedulableGrace },
		"retry-grace":         func(s settings) time.Duration { return s.retryGrace },
		"never-ready-grace":   func(s settings) time.Duration { return s.neverReadyGrace },
	}
	for name, setting := range settingOf {
		for _, form := range []string{"600", "600s", "10m", "0h10m0s"} {
			t.Run(name+"="+form, func(t *testing.T) {
				t.Parallel()
				action, err := actionSettings(githubactions.New(githubactions.WithGetenv(func(k string) string {
					if k == "INPUT_"+strings.ToUpper(name) {
						return form
					}
					return ""
				})))
				if err != nil {
					t.Fatalf("input %s: %s: %v", name, form, err)
				}
				var o cliOptions
				fs := newFlagSet("verify", &o)
				fs.SetOutput(io.Discard)
				if err := fs.Parse([]string{"--" + name, form}); err != nil {
					t.Fatalf("--%s %s: %v", name, form, err)
				}
				got := map[string]time.Duration{"input": setting(action.settings), "flag": setting(o.settings)}
				want := map[string]time.Duration{"input": 10 * time.Minute, "flag": 10 * time.Minute}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %s (-want +got):\n%s", name, form, diff)
				}
			})
		}
	}
}

// TestDurationFlagErrors: a duration flag's bad value is refused naming the flag, the value and
// the forms it takes.
func TestDurationFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "ten"}, `invalid argument "ten" for "--timeout" flag: "ten" is not a duration: give seconds or a duration with its unit, e.g. 600, 90s, 10m or 1h30m`},
		{[]string{"--timeout", "90000"}, `invalid argument "90000" for "--timeout" flag: 90000 seconds is out of range: give a duration up to 24h`},
		{[]string{"--retry-grace", "2 minutes"}, `invalid argument "2 minutes" for "--retry-grace" flag: "2 minutes" is not a duration`},
		{[]string{"--unschedulable-grace", "9999999999h"}, `invalid argument "9999999999h" for "--unschedulable-grace" flag: "9999999999h" is out of range`},
		{[]string{"--unschedulable-grace", "0"}, `invalid argument "0" for "--unschedulable-grace" flag: "0" is out of range: give a duration from 1s to 24h`},
		{[]string{"--never-ready-grace", "0"}, `invalid argument "0" for "--never-ready-grace" flag: "0" is out of range: give a duration from 1s to 24h`},
		{[]string{"--never-ready-grace", "soon"}, `invalid argument "soon" for "--never-ready-grace" flag: "soon" is not a duration`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var o cliOptions
			fs := newFlagSet("verify", &o)
			fs.SetOutput(io.Discard)
			err := fs.Parse(tt.args)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want the error %q", tt.args, err, tt.want)
			}
		})
	}
}
