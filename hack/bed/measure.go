package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// measure starts N clusters with Flux, reports how long that took and the memory the bed's
// processes use (the sum of their resident sets, sampled for a few seconds; the peak is kept).
func measure(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bed measure", flag.ContinueOnError)
	n := fs.Int("clusters", 5, "how many clusters")
	flux := fs.Bool("flux", true, "start the Flux controllers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	start := time.Now()
	bed, err := testbed.Start(ctx, testbed.Options{Clusters: *n, Flux: *flux, Prefix: "measure", Log: logf})
	if err != nil {
		return err
	}
	defer bed.Close()
	took := time.Since(start)
	var peak int64
	var procs int
	for range 10 {
		rss, count := bedRSS(bed.Workdir())
		if rss > peak {
			peak, procs = rss, count
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Printf("clusters=%d flux=%v start=%s processes=%d peak_rss=%.0fMiB per_cluster=%.0fMiB\n",
		*n, *flux, took.Round(10*time.Millisecond), procs, float64(peak)/(1<<20), float64(peak)/(1<<20)/float64(*n))
	return nil
}

// bedRSS sums VmRSS over the processes that belong to the bed: their command line or
// environment names its work folder.
func bedRSS(workdir string) (bytesTotal int64, processes int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if !bytes.Contains(cmdline, []byte(workdir)) && !bytes.Contains(environ, []byte(workdir)) {
			continue
		}
		status, _ := os.ReadFile(filepath.Join(dir, "status"))
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				bytesTotal += kb << 10
				processes++
			}
		}
	}
	return bytesTotal, processes
}
