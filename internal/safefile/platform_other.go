//go:build !unix

package safefile

import "os"

// openNonBlocking is nothing where there is no such flag.
const openNonBlocking = 0

// hardLinked is false where links are not counted.
func hardLinked(os.FileInfo) bool { return false }

// keepOwner does nothing where files have no owner to keep.
func keepOwner(*os.File, os.FileInfo) {}
