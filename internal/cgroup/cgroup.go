// Package cgroup reads how many CPUs the container this process runs in
// may use: the CPU quota (cgroup v2's cpu.max, v1's cpu.cfs_quota_us over
// cpu.cfs_period_us) and the cpuset, bounded by the CPUs the machine and
// the affinity mask offer. A server sizes its runtime pools from it, so
// that a pod limited to 2 CPUs on a 64-core node runs 2 instances, not 64.
//
// Go's runtime already derives GOMAXPROCS's default from the quota, but
// it never goes below 2, reads only the leaf cgroup, and is overridden
// by the GOMAXPROCS variable; the server wants the container's own
// figure, to log and to size pools with.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Limits is what the cgroup files say about the CPUs this process may use.
type Limits struct {
	// Version is the cgroup version the CPU controller was found in: 1 or
	// 2; 0 when the process is in no cgroup (or /proc is not mounted).
	Version int
	// Dir is the cgroup directory of the CPU controller, as a path in the
	// file system read (for logs); empty when none was found.
	Dir string
	// Quota is the CPU quota in CPUs (quota over period, 1.5 for
	// "150000 100000"): the tightest of the cgroup and its ancestors up to
	// the mount point; 0 when none is set ("max", -1).
	Quota float64
	// Cpuset is the number of CPUs in the cgroup's (effective) cpuset; 0
	// when no cpuset was found.
	Cpuset int
}

// CPUs bounds machine (the CPUs the machine and the affinity mask offer)
// by the limits. ok reports whether the cgroup limits the process to
// fewer CPUs than machine.
func (l Limits) CPUs(machine int) (cpus float64, ok bool) {
	cpus = float64(machine)
	if l.Quota > 0 && l.Quota < cpus {
		cpus = l.Quota
	}
	if l.Cpuset > 0 && float64(l.Cpuset) < cpus {
		cpus = float64(l.Cpuset)
	}
	return cpus, cpus < float64(machine)
}

// CPUs is the number of CPUs the container may use: the least of the
// cgroup's CPU quota, its cpuset's size, runtime.NumCPU and the current
// affinity mask. ok reports whether the cgroup lowers it below what the
// machine offers. Unreadable or malformed cgroup files count as no
// limit; Read returns the error for a caller that wants to log it.
func CPUs() (float64, bool) {
	l, err := Read(os.DirFS("/"))
	if err != nil {
		return float64(machineCPUs()), false
	}
	return l.CPUs(machineCPUs())
}

// Cores is CPUs rounded up to a whole number, at least 1: the number of
// runtimes a pool should hold by default.
func Cores() int {
	cpus, _ := CPUs()
	return wholeCores(cpus)
}

func wholeCores(cpus float64) int {
	return max(1, int(math.Ceil(cpus)))
}

// machineCPUs is the least of runtime.NumCPU (fixed at start-up) and the
// affinity mask now.
func machineCPUs() int {
	n := runtime.NumCPU()
	if a := affinityCPUs(); a > 0 && a < n {
		n = a
	}
	return n
}

// Read reads the limits of the calling process from fsys, a file system
// laid out like Linux's root (os.DirFS("/") for the real one): it finds
// the process's cgroups in proc/self/cgroup, their directories through
// proc/self/mountinfo, and reads the quota and cpuset files there. A
// missing proc/self/cgroup or limit file means no limit; a malformed
// one is an error naming the file.
func Read(fsys fs.FS) (Limits, error) {
	var l Limits
	groups, err := readProcCgroup(fsys)
	if err != nil || groups == nil {
		return l, err
	}
	mounts, err := readMountinfo(fsys)
	if err != nil {
		return l, err
	}

	if dir, mnt, v, ok := locate(groups, mounts, "cpu"); ok {
		l.Version, l.Dir = v, dir
		if l.Quota, err = readQuota(fsys, dir, mnt, v); err != nil {
			return l, err
		}
	}
	if dir, mnt, _, ok := locate(groups, mounts, "cpuset"); ok {
		if l.Cpuset, err = readCpuset(fsys, dir, mnt); err != nil {
			return l, err
		}
	}
	return l, nil
}

const (
	procCgroup    = "proc/self/cgroup"
	procMountinfo = "proc/self/mountinfo"
)

// cgroupLine is one line of /proc/self/cgroup: "hierarchy:controllers:path".
type cgroupLine struct {
	hierarchy   string
	controllers []string
	path        string
}

// readProcCgroup returns nil, nil when the file does not exist (not
// Linux, or /proc not mounted).
func readProcCgroup(fsys fs.FS) ([]cgroupLine, error) {
	var out []cgroupLine
	err := eachLine(fsys, procCgroup, func(n int, line string) error {
		h, rest, ok1 := strings.Cut(line, ":")
		ctl, p, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(p, "/") {
			return fmt.Errorf("line %d: want hierarchy:controllers:/path, got %q", n, line)
		}
		var ctls []string
		if ctl != "" {
			ctls = strings.Split(ctl, ",")
		}
		out = append(out, cgroupLine{h, ctls, p})
		return nil
	})
	return out, ignoreMissing(err)
}

// mount is the part of a /proc/self/mountinfo line that locates a cgroup
// hierarchy: which part of the hierarchy (root) is mounted where (point).
type mount struct {
	root, point, fstype string
	superOpts           []string
}

func readMountinfo(fsys fs.FS) ([]mount, error) {
	var out []mount
	err := eachLine(fsys, procMountinfo, func(n int, line string) error {
		// "36 35 98:0 /root /point opts [optional...] - fstype source superopts"
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 3 {
			return fmt.Errorf("line %d: want \"id parent dev root point opts ... - type source superopts\", got %q", n, line)
		}
		root, err1 := unescape(f[3])
		point, err2 := unescape(f[4])
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if cgroupFS(g[0]) {
			out = append(out, mount{root, point, g[0], strings.Split(g[2], ",")})
		}
		return nil
	})
	return out, ignoreMissing(err)
}

func cgroupFS(t string) bool { return t == "cgroup" || t == "cgroup2" }

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+4 > len(s) {
			return "", fmt.Errorf("a cut-off escape in %q", s)
		}
		c, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape %q in %q", s[i:i+4], s)
		}
		b.WriteByte(byte(c))
		i += 3
	}
	return b.String(), nil
}

// locate finds the directory (in fsys's terms) of the cgroup holding
// controller ctl, the mount point above it (where a walk up stops), and
// the cgroup version. A v1 hierarchy naming the controller wins over the
// unified (v2) one, as in Go's runtime: on hybrid hosts the v1
// hierarchy holds the controller and the unified one is empty.
func locate(groups []cgroupLine, mounts []mount, ctl string) (dir, mnt string, version int, ok bool) {
	var g cgroupLine
	for _, l := range groups {
		if slices.Contains(l.controllers, ctl) {
			g, version = l, 1
			break
		}
		if l.hierarchy == "0" && len(l.controllers) == 0 && version == 0 {
			g, version = l, 2
		}
	}
	for _, m := range mounts {
		if version == 1 && (m.fstype != "cgroup" || !slices.Contains(m.superOpts, ctl)) ||
			version == 2 && m.fstype != "cgroup2" || version == 0 {
			continue
		}
		if rel, ok := under(g.path, m.root); ok {
			return fsPath(path.Join(m.point, rel)), fsPath(m.point), version, true
		}
	}
	return "", "", 0, false
}

// under is p relative to root when p lies at or below root. A cgroup
// namespace can show paths outside the mounted root ("/../.."), which
// lie in no mount this process sees.
func under(p, root string) (string, bool) {
	if p == "/.." || strings.HasPrefix(p, "/../") {
		return "", false
	}
	p, root = path.Clean(p), path.Clean(root)
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	if strings.HasPrefix(p, root+"/") {
		return p[len(root):], true
	}
	return "", false
}

// fsPath turns an absolute path into an fs.FS one.
func fsPath(p string) string {
	p = strings.TrimPrefix(path.Clean(p), "/")
	if p == "" {
		return "."
	}
	return p
}

// ancestors is dir and each directory above it up to mnt, leaf first.
func ancestors(dir, mnt string) []string {
	out := []string{dir}
	for dir != mnt && dir != "." {
		dir = path.Dir(dir)
		out = append(out, dir)
	}
	return out
}

// readQuota is the tightest quota in CPUs of dir and its ancestors up to
// mnt (a parent's limit binds its children), 0 when none is set.
func readQuota(fsys fs.FS, dir, mnt string, version int) (float64, error) {
	var quota float64
	for _, d := range ancestors(dir, mnt) {
		q, err := readQuotaAt(fsys, d, version)
		if err != nil {
			return 0, err
		}
		if q > 0 && (quota == 0 || q < quota) {
			quota = q
		}
	}
	return quota, nil
}

func readQuotaAt(fsys fs.FS, dir string, version int) (float64, error) {
	if version == 2 {
		name := path.Join(dir, "cpu.max")
		s, err := readSmall(fsys, name)
		if err != nil {
			return 0, ignoreMissing(err)
		}
		f := strings.Fields(s)
		if len(f) != 2 {
			return 0, fmt.Errorf("/%s: want \"QUOTA PERIOD\" or \"max PERIOD\", got %q", name, s)
		}
		if f[0] == "max" {
			return 0, nil
		}
		q, err1 := strconv.ParseInt(f[0], 10, 64)
		p, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
			return 0, fmt.Errorf("/%s: want a positive quota and period in microseconds, got %q", name, s)
		}
		return float64(q) / float64(p), nil
	}
	qName, pName := path.Join(dir, "cpu.cfs_quota_us"), path.Join(dir, "cpu.cfs_period_us")
	qs, err := readSmall(fsys, qName)
	if err != nil {
		return 0, ignoreMissing(err)
	}
	q, err := strconv.ParseInt(qs, 10, 64)
	if err != nil || q == 0 || q < -1 {
		return 0, fmt.Errorf("/%s: want -1 or a positive quota in microseconds, got %q", qName, qs)
	}
	if q == -1 {
		return 0, nil
	}
	ps, err := readSmall(fsys, pName)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("/%s: missing beside /%s", pName, qName)
		}
		return 0, err
	}
	p, err := strconv.ParseInt(ps, 10, 64)
	if err != nil || p <= 0 {
		return 0, fmt.Errorf("/%s: want a positive period in microseconds, got %q", pName, ps)
	}
	return float64(q) / float64(p), nil
}

// cpusetFiles are tried in order in each directory: the effective set
// (v2's name, then v1's) already reflects the ancestors; cpuset.cpus is
// what was asked for, and empty in v2 when the cgroup inherits its
// parent's.
var cpusetFiles = []string{"cpuset.cpus.effective", "cpuset.effective_cpus", "cpuset.cpus"}

// readCpuset is the size of the first non-empty cpuset found walking up
// from dir to mnt, 0 when none is.
func readCpuset(fsys fs.FS, dir, mnt string) (int, error) {
	for _, d := range ancestors(dir, mnt) {
		for _, f := range cpusetFiles {
			name := path.Join(d, f)
			s, err := readSmall(fsys, name)
			if errors.Is(err, fs.ErrNotExist) || err == nil && s == "" {
				continue
			}
			if err != nil {
				return 0, err
			}
			n, err := countCPUList(s)
			if err != nil {
				return 0, fmt.Errorf("/%s: %w", name, err)
			}
			return n, nil
		}
	}
	return 0, nil
}

// countCPUList counts the CPUs in a list such as "0-3,8,10-11".
func countCPUList(s string) (int, error) {
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return 0, fmt.Errorf("want a CPU list such as 0-3,8, got %q", s)
		}
		n += b - a + 1
	}
	return n, nil
}

// maxFileSize bounds what readSmall reads: the files it reads hold a line.
const maxFileSize = 4096

// readSmall reads a one-line file, trimmed of surrounding space. A
// missing file's error satisfies errors.Is(err, fs.ErrNotExist).
func readSmall(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return "", fmt.Errorf("/%s: %w", name, err)
	}
	if len(b) > maxFileSize {
		return "", fmt.Errorf("/%s: longer than %d bytes", name, maxFileSize)
	}
	return strings.TrimSpace(string(b)), nil
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// eachLine calls fn on each non-empty line of name, numbered from 1; its
// errors are wrapped with the file's name.
func eachLine(fsys fs.FS, name string, fn func(n int, line string) error) error {
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := fn(n, line); err != nil {
			return fmt.Errorf("/%s: %w", name, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("/%s: %w", name, err)
	}
	return nil
}
