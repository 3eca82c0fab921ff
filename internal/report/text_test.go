package report

import (
	"errors"
	"testing"
)

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestTextWriteError(t *testing.T) {
	t.Parallel()
	errBroken := errors.New("broken pipe")
	err := Text(failingWriter{err: errBroken}, mixedRun())
	if !errors.Is(err, errBroken) {
		t.Errorf("Text() = %v, want an error wrapping %v", err, errBroken)
	}
}
