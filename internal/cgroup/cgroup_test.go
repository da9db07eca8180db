package cgroup

import (
	"os"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mountinfo lines as Linux writes them.
const (
	v2Mount       = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	procMount     = "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	v1CPUMount    = "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime master:10 - cgroup cgroup rw,cpu,cpuacct\n"
	v1CpusetMount = "34 31 0:31 /docker/abc /sys/fs/cgroup/cpuset ro,nosuid,nodev,noexec,relatime master:12 - cgroup cgroup rw,cpuset\n"
	unifiedMount  = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  Limits
	}{
		{
			name: "v2 in a cgroup namespace: quota and effective cpuset",
			files: fstest.MapFS{
				procCgroup:                            file("0::/\n"),
				procMountinfo:                         file(procMount + v2Mount),
				"sys/fs/cgroup/cpu.max":               file("150000 100000\n"),
				"sys/fs/cgroup/cpuset.cpus.effective": file("0-3\n"),
				"sys/fs/cgroup/cpuset.cpus":           file("\n"),
				"sys/fs/cgroup/unrelated/cpu.max":     file("100000 100000\n"),
				"sys/fs/cgroup/unrelated/cpuset.cpus": file("0\n"),
			},
			want: Limits{Version: 2, Dir: "sys/fs/cgroup", Quota: 1.5, Cpuset: 4},
		},
		{
			name: "v2 max: no quota",
			files: fstest.MapFS{
				procCgroup:              file("0::/\n"),
				procMountinfo:           file(v2Mount),
				"sys/fs/cgroup/cpu.max": file("max 100000\n"),
			},
			want: Limits{Version: 2, Dir: "sys/fs/cgroup"},
		},
		{
			name: "v2 nested without a namespace: a parent's quota binds the leaf",
			files: fstest.MapFS{
				procCgroup:    file("0::/kubepods.slice/pod1/ctr\n"),
				procMountinfo: file(v2Mount),
				"sys/fs/cgroup/kubepods.slice/pod1/ctr/cpu.max": file("max 100000\n"),
				"sys/fs/cgroup/kubepods.slice/pod1/cpu.max":     file("200000 100000\n"),
				"sys/fs/cgroup/kubepods.slice/cpu.max":          file("max 100000\n"),
			},
			want: Limits{Version: 2, Dir: "sys/fs/cgroup/kubepods.slice/pod1/ctr", Quota: 2},
		},
		{
			name: "v2 nested: the leaf's quota is tighter than its parent's",
			files: fstest.MapFS{
				procCgroup:                          file("0::/pod/ctr\n"),
				procMountinfo:                       file(v2Mount),
				"sys/fs/cgroup/pod/ctr/cpu.max":     file("50000 100000\n"),
				"sys/fs/cgroup/pod/cpu.max":         file("400000 100000\n"),
				"sys/fs/cgroup/pod/ctr/cpuset.cpus": file("\n"),
				"sys/fs/cgroup/pod/cpuset.cpus":     file("2-4,7\n"),
			},
			want: Limits{Version: 2, Dir: "sys/fs/cgroup/pod/ctr", Quota: 0.5, Cpuset: 4},
		},
		{
			name: "v2 without the cpu controller enabled: no cpu.max, no limit",
			files: fstest.MapFS{
				procCgroup:                             file("0::/user.slice\n"),
				procMountinfo:                          file(v2Mount),
				"sys/fs/cgroup/user.slice/cgroup.type": file("domain\n"),
			},
			want: Limits{Version: 2, Dir: "sys/fs/cgroup/user.slice"},
		},
		{
			name: "v1 without a namespace: the mount's root is the container's cgroup",
			files: fstest.MapFS{
				procCgroup:    file("12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n1:name=systemd:/docker/abc\n"),
				procMountinfo: file(procMount + v1CPUMount + v1CpusetMount),
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  file("50000\n"),
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": file("100000\n"),
				"sys/fs/cgroup/cpuset/cpuset.effective_cpus":  file("0,2\n"),
				"sys/fs/cgroup/cpuset/cpuset.cpus":            file("0-7\n"),
			},
			want: Limits{Version: 1, Dir: "sys/fs/cgroup/cpu,cpuacct", Quota: 0.5, Cpuset: 2},
		},
		{
			name: "v1 quota -1: no quota, the cpuset still counts",
			files: fstest.MapFS{
				procCgroup: file("4:cpu,cpuacct:/\n3:cpuset:/\n"),
				procMountinfo: file("32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
					"34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"),
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  file("-1\n"),
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": file("100000\n"),
				"sys/fs/cgroup/cpuset/cpuset.cpus":            file("0-15\n"),
			},
			want: Limits{Version: 1, Dir: "sys/fs/cgroup/cpu,cpuacct", Cpuset: 16},
		},
		{
			name: "hybrid host: the v1 cpu hierarchy wins over the empty unified one",
			files: fstest.MapFS{
				procCgroup:                            file("9:name=systemd:/\n3:cpuset:/\n1:cpu:/\n0::/\n"),
				procMountinfo:                         file("32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" + unifiedMount),
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":  file("300000\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_period_us": file("100000\n"),
				"sys/fs/cgroup/unified/cpu.max":       file("100000 100000\n"),
			},
			want: Limits{Version: 1, Dir: "sys/fs/cgroup/cpu", Quota: 3},
		},
		{
			name: "an escaped space in the mount point",
			files: fstest.MapFS{
				procCgroup:                   file("0::/a\n"),
				procMountinfo:                file(`29 23 0:26 / /sys/fs/my\040cgroup rw - cgroup2 cgroup2 rw` + "\n"),
				"sys/fs/my cgroup/a/cpu.max": file("250000 100000\n"),
			},
			want: Limits{Version: 2, Dir: "sys/fs/my cgroup/a", Quota: 2.5},
		},
		{
			name: "a cgroup outside the namespace's mount: not found",
			files: fstest.MapFS{
				procCgroup:              file("0::/../../other\n"),
				procMountinfo:           file(v2Mount),
				"sys/fs/cgroup/cpu.max": file("100000 100000\n"),
			},
			want: Limits{},
		},
		{
			name: "a mount of a sibling cgroup whose name extends ours: not found",
			files: fstest.MapFS{
				procCgroup:                            file("1:cpu:/docker/abc\n"),
				procMountinfo:                         file("32 31 0:29 /docker/abcd /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":  file("100000\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_period_us": file("100000\n"),
			},
			want: Limits{},
		},
		{
			name: "no cgroup mount listed: not found",
			files: fstest.MapFS{
				procCgroup:              file("0::/\n"),
				procMountinfo:           file(procMount),
				"sys/fs/cgroup/cpu.max": file("100000 100000\n"),
			},
			want: Limits{},
		},
		{
			name:  "no /proc/self/cgroup: no cgroup, no limit",
			files: fstest.MapFS{"sys/fs/cgroup/cpu.max": file("100000 100000\n")},
			want:  Limits{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(tc.files)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadErrors(t *testing.T) {
	v2 := func(cpuMax string) fstest.MapFS {
		return fstest.MapFS{
			procCgroup:              file("0::/\n"),
			procMountinfo:           file(v2Mount),
			"sys/fs/cgroup/cpu.max": file(cpuMax),
		}
	}
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  string // the error names the file and what was expected
	}{
		{"cpu.max not numbers", v2("lots 100000\n"), "/sys/fs/cgroup/cpu.max: want a positive quota"},
		{"cpu.max zero period", v2("100000 0\n"), "/sys/fs/cgroup/cpu.max: want a positive quota"},
		{"cpu.max one field", v2("100000\n"), "/sys/fs/cgroup/cpu.max: want \"QUOTA PERIOD\""},
		{"cpu.max too long", v2(string(make([]byte, maxFileSize+1))), "/sys/fs/cgroup/cpu.max: longer than 4096 bytes"},
		{
			"v1 period missing",
			fstest.MapFS{
				procCgroup:                           file("1:cpu:/\n"),
				procMountinfo:                        file("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us": file("50000\n"),
			},
			"/sys/fs/cgroup/cpu/cpu.cfs_period_us: missing beside /sys/fs/cgroup/cpu/cpu.cfs_quota_us",
		},
		{
			"v1 quota zero",
			fstest.MapFS{
				procCgroup:                            file("1:cpu:/\n"),
				procMountinfo:                         file("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":  file("0\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_period_us": file("100000\n"),
			},
			"/sys/fs/cgroup/cpu/cpu.cfs_quota_us: want -1 or a positive quota",
		},
		{
			"cpuset range backwards",
			fstest.MapFS{
				procCgroup:                            file("0::/\n"),
				procMountinfo:                         file(v2Mount),
				"sys/fs/cgroup/cpuset.cpus.effective": file("3-1\n"),
			},
			"/sys/fs/cgroup/cpuset.cpus.effective: want a CPU list such as 0-3,8, got \"3-1\"",
		},
		{
			"/proc/self/cgroup line without a path",
			fstest.MapFS{procCgroup: file("0::/\n1:cpu\n")},
			"/proc/self/cgroup: line 2: want hierarchy:controllers:/path",
		},
		{
			"mountinfo line without its separator",
			fstest.MapFS{procCgroup: file("0::/\n"), procMountinfo: file("29 23 0:26 / /sys/fs/cgroup rw cgroup2\n")},
			"/proc/self/mountinfo: line 1: want",
		},
		{
			"mountinfo with a bad escape",
			fstest.MapFS{procCgroup: file("0::/\n"), procMountinfo: file(`29 23 0:26 / /sys/fs/x\09x rw - cgroup2 cgroup2 rw` + "\n")},
			"/proc/self/mountinfo: line 1: bad escape",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.files)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestReadTree reads a copy of a Kubernetes node's files on disk
// (testdata/kubepods-v2: a pod limited to 1.5 CPUs, pinned to 2 of them)
// through os.DirFS, as CPUs reads the real root.
func TestReadTree(t *testing.T) {
	got, err := Read(os.DirFS("testdata/kubepods-v2"))
	require.NoError(t, err)
	assert.Equal(t, Limits{
		Version: 2,
		Dir:     "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-abcd.scope",
		Quota:   1.5,
		Cpuset:  2,
	}, got)
	cpus, ok := got.CPUs(64)
	assert.Equal(t, 1.5, cpus)
	assert.True(t, ok)
}

func TestLimitsCPUs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		l       Limits
		machine int
		want    float64
		wantOK  bool
	}{
		{"no limits: the machine's", Limits{}, 8, 8, false},
		{"fractional quota", Limits{Quota: 1.5}, 8, 1.5, true},
		{"quota above the machine", Limits{Quota: 16}, 8, 8, false},
		{"quota equal to the machine", Limits{Quota: 8}, 8, 8, false},
		{"cpuset tighter than the quota", Limits{Quota: 3, Cpuset: 2}, 8, 2, true},
		{"quota tighter than the cpuset", Limits{Quota: 0.25, Cpuset: 2}, 8, 0.25, true},
		{"cpuset of the whole machine", Limits{Cpuset: 8}, 8, 8, false},
		{"affinity narrower than the cpuset", Limits{Cpuset: 8}, 2, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.l.CPUs(tc.machine)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantOK, ok)
		})
	}
}

func TestWholeCores(t *testing.T) {
	for _, tc := range []struct {
		cpus float64
		want int
	}{{0, 1}, {0.1, 1}, {0.5, 1}, {1, 1}, {1.01, 2}, {1.5, 2}, {4, 4}} {
		assert.Equal(t, tc.want, wholeCores(tc.cpus), "cpus %v", tc.cpus)
	}
}

func TestCountCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 1, true},
		{"0-3", 4, true},
		{"0-3,8,10-11", 7, true},
		{"5-5", 1, true},
		{"", 0, false},
		{"0-", 0, false},
		{"a", 0, false},
		{"-1", 0, false},
		{"3-1", 0, false},
		{"0,,1", 0, false},
	} {
		n, err := countCPUList(tc.in)
		if !tc.ok {
			assert.Error(t, err, "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, n, "%q", tc.in)
	}
}

// TestThisMachine reads this machine's real files: they must parse, and
// the result must lie within what the machine offers.
func TestThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("cgroups are Linux's")
	}
	l, err := Read(os.DirFS("/"))
	require.NoError(t, err)
	t.Logf("limits %+v", l)
	cpus, _ := CPUs()
	assert.Greater(t, cpus, 0.0)
	assert.LessOrEqual(t, cpus, float64(runtime.NumCPU()))
	assert.GreaterOrEqual(t, Cores(), 1)
	assert.LessOrEqual(t, Cores(), runtime.NumCPU())
}
