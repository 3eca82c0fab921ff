package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine describes where the bench ran.
type machine struct {
	CPUs       int
	CPUModel   string
	MemTotal   uint64 // bytes
	GoVersion  string
	Kernel     string
	Date       time.Time
	LoadStart  string
	LoadEnd    string
	MemAvailAt uint64 // bytes available when the bench started
}

func describeMachine(now time.Time) machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Date: now.UTC(), LoadStart: loadAverage()}
	m.MemTotal = meminfo("MemTotal")
	m.MemAvailAt = meminfo("MemAvailable")
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// loadAverage is the 1, 5 and 15 minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// meminfo returns a /proc/meminfo field in bytes, zero when unknown.
func meminfo(field string) uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		kb, _ := strconv.ParseUint(f[0], 10, 64)
		return kb << 10
	}
	return 0
}

// processRSS sums the resident memory of every process whose command line contains marker,
// such as a kwok cluster's folder, in bytes.
func processRSS(marker string) uint64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total uint64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					kb, _ := strconv.ParseUint(f[0], 10, 64)
					total += kb << 10
				}
			}
		}
	}
	return total
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
