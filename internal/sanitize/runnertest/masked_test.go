package runnertest

import (
	"encoding/base64"
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
