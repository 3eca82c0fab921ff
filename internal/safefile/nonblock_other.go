//go:build !unix

package safefile

// openNonBlocking is nothing where there is no such flag.
const openNonBlocking = 0
