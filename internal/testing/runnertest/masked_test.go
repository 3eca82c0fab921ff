package runnertest

import (
	"encoding/base64"
	"maps"
	"testing"
)

func TestMasked(t *testing.T) {
	t.Parallel()
	key := "-----BEGIN KEY-----\nabcd\n" // 25 bytes: padded base64 ends in "=="
	std, url := base64.StdEncoding.EncodeToString([]byte(key)), base64.URLEncoding.EncodeToString([]byte(key))
	raw := base64.RawStdEncoding.EncodeToString([]byte(key))
	tests := []struct {
		name   string
		masks  []string
		secret string
		want   bool
	}{
		{name: "registered as it is", masks: []string{"tok-en"}, secret: "tok-en", want: true},
		{name: "not registered", masks: []string{"other"}, secret: "tok-en"},
		{name: "padded base64, its unpadded text registered", masks: []string{raw}, secret: std, want: true},
		{name: "padded base64url, its unpadded text registered", masks: []string{base64.RawURLEncoding.EncodeToString([]byte(key))}, secret: url, want: true},
		{name: "padded base64, nothing registered", masks: []string{"x"}, secret: std},
		{name: "not base64, ending in '='", masks: []string{"pass*word"}, secret: "pass*word=", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			masks := map[string]bool{}
			for _, m := range tt.masks {
				masks[m] = true
			}
			if got := Masked(masks, tt.secret); got != tt.want {
				t.Errorf("Masked(%v, %q) = %t, want %t", tt.masks, tt.secret, got, tt.want)
			}
		})
	}
}

// TestMasksAndHidden: the masks a log registers are read as the runner reads them, and an
// output holding one, as it is or encoded, is one the runner would drop.
func TestMasksAndHidden(t *testing.T) {
	t.Parallel()
	log := "::add-mask::tok-en-1234\n  ::add-mask::line%0Abreak%25\n::add-mask::   \nplain ::add-mask::not-a-command\n::warning::x\n"
	masks := Masks(log)
	if want := map[string]bool{"tok-en-1234": true, "line\nbreak%": true}; !maps.Equal(masks, want) {
		t.Fatalf("Masks() = %v, want %v", masks, want)
	}
	masks["a/b c"] = true
	tests := []struct {
		text, want string
	}{
		{`["platform-prod-us-east-1"]`, ""},
		{`{"message":"token tok-en-1234 refused"}`, "tok-en-1234"},
		{`{"message":"line\nbreak%"}`, "line\nbreak%"},
		{"https://x/a%2Fb%20c", "a/b c"},
		{"echoed " + base64.StdEncoding.EncodeToString([]byte("tok-en-1234")), "tok-en-1234"},
	}
	for _, tt := range tests {
		if got := Hidden(masks, tt.text); got != tt.want {
			t.Errorf("Hidden(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
