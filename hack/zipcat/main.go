// Command zipcat writes one file of a zip archive to stdout, so hack/build-bins.sh reads a
// module's zip without depending on an unzip tool the machine may lack.
//
// Usage: go -C hack run ./zipcat ARCHIVE NAME
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: zipcat ARCHIVE NAME")
		os.Exit(2)
	}
	if err := run(os.Stdout, os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "zipcat: %v\n", err)
		os.Exit(1)
	}
}

func run(out io.Writer, archive, name string) error {
	r, err := zip.OpenReader(archive)
	if err != nil {
		return fmt.Errorf("open %s: %w", archive, err)
	}
	defer r.Close()
	f, err := r.Open(name)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", name, archive, err)
	}
	defer f.Close()
	if _, err := io.Copy(out, f); err != nil {
		return fmt.Errorf("read %s in %s: %w", name, archive, err)
	}
	return nil
}
