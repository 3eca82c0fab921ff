// Command rusage runs a program and prints "rusage <wall ns> <peak RSS bytes> <exit code>
// <user CPU ns> <system CPU ns>" on stdout, the program's stdout discarded and its stderr passed through. The bench measures
// app-status through it because Linux gives a spawned child the peak RSS of the process that
// spawned it (exec records the spawner's high-water mark in the child's rusage): spawned from
// the bench itself, whose informers hold hundreds of MiB, every child would seem that large.
// This program stays a few MiB.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rusage PROGRAM [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	// SIGTERM and SIGINT go to the program, as a runner's go to a step, and this waits for it
	// to end: its rusage then says how it took being stopped.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "rusage: %v\n", err)
		os.Exit(1)
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "rusage: %v\n", err)
		os.Exit(1)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // KiB on Linux
	}
	fmt.Printf("rusage %d %d %d %d %d\n", wall, rss, cmd.ProcessState.ExitCode(),
		cmd.ProcessState.UserTime().Nanoseconds(), cmd.ProcessState.SystemTime().Nanoseconds())
}
