package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRun(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "m.zip")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	fw, err := w.Create("mod@v1/config/crd/bases/a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write([]byte("kind: CustomResourceDefinition\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(&out, archive, "mod@v1/config/crd/bases/a.yaml"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "kind: CustomResourceDefinition\n"; got != want {
		t.Errorf("run wrote %q, want %q", got, want)
	}
	if err := run(&out, archive, "mod@v1/missing.yaml"); err == nil {
		t.Error("run found a file the archive does not hold")
	}
}
