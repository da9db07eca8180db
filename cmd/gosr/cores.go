package main

import (
	"log/slog"
	"os"

	"github.com/gosr/gosr/internal/cgroup"
)

// defaultInstances is the runtimes per model when nothing says: the
// CPUs the container may use, read from its cgroup (quota and cpuset)
// and the process's affinity, rounded up. Not GOMAXPROCS: Go keeps that
// at 2 or more under a fractional limit, and an environment variable or
// GODEBUG setting can change it.
func defaultInstances(log *slog.Logger) int {
	lim, err := cgroup.Read(os.DirFS("/"))
	if err != nil {
		log.Warn("reading the cgroup's CPU limits", "err", err)
	}
	cpus, limited := cgroup.CPUs()
	log.Info("CPUs", "usable", cpus, "limited_by_cgroup", limited, "cgroup_version", lim.Version,
		"quota", lim.Quota, "cpuset", lim.Cpuset, "instances", cgroup.Cores())
	return cgroup.Cores()
}
