package pyfallback

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrivateLibrary: every interpreter but the process's first runs a
// private copy of libpython, mapped from a file already removed.
func TestPrivateLibrary(t *testing.T) {
	m := manager(t)
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	copies := map[string]bool{}
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) >= 7 && f[1] == "r-xp" && strings.Contains(f[5], "/gosr-libpython") && f[6] == "(deleted)" {
			copies[f[5]] = true
		}
	}
	private := 0
	for _, in := range m.Interpreters() {
		assert.Equal(t, in.ID > 0, in.PrivateLibrary, "interpreter %d", in.ID)
		if in.PrivateLibrary {
			private++
		}
	}
	assert.GreaterOrEqual(t, len(copies), private, "an executable mapping of a removed copy per private interpreter")
	assert.Positive(t, private, "the test manager's second interpreter has its own copy")
}

// freshLeft is how many interpreters the process can still start.
func freshLeft() int {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return MaxInterpreters() - len(procs.all)
}

// idleOf is how many idle interpreters were started as kind.
func idleOf(kind libKind) int {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	n := 0
	for _, in := range procs.free {
		if in.kind == kind {
			n++
		}
	}
	return n
}

// TestSharedLibraryFallback: where no private copy can be written, the
// interpreter loads the shared file and still works.
func TestSharedLibraryFallback(t *testing.T) {
	manager(t)
	path, err := FindLibPython()
	require.NoError(t, err)
	if idleOf(libKind{path: path}) > 0 || freshLeft() == 0 {
		t.Skip("no fresh interpreter left to start in this process")
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	m, err := NewManager(Options{})
	require.NoError(t, err)
	defer m.Close()
	info := m.Interpreters()[0]
	assert.False(t, info.PrivateLibrary, "no copy could be written")
	s, err := m.Acquire(context.Background())
	require.NoError(t, err)
	defer s.Release()
	v, err := s.Eval(context.Background(), "6 * 7")
	require.NoError(t, err)
	assert.Equal(t, int64(42), v.Int())
}

// TestSharedLibraryOption: Options.SharedLibrary starts interpreters on
// the system's file, not a copy; once idle, such an interpreter is not
// lent to a manager that asks for private copies (nor the other way).
func TestSharedLibraryOption(t *testing.T) {
	manager(t)
	path, err := FindLibPython()
	require.NoError(t, err)
	sharedKind, privateKind := libKind{path: path, shared: true}, libKind{path: path}
	need := 0
	if idleOf(sharedKind) == 0 {
		need++
	}
	if idleOf(privateKind) == 0 {
		need++
	}
	if freshLeft() < need {
		t.Skip("not enough interpreters left in this process")
	}
	shared, err := NewManager(Options{SharedLibrary: true})
	require.NoError(t, err)
	in := shared.Interpreters()[0]
	require.Positive(t, in.ID, "not the process's first (which loads the file whatever the options)")
	assert.False(t, in.PrivateLibrary, "started on the system's file")
	require.NoError(t, shared.Close())

	private, err := NewManager(Options{})
	require.NoError(t, err)
	defer private.Close()
	got := private.Interpreters()[0]
	assert.NotEqual(t, in.ID, got.ID, "an interpreter started on the shared file is not lent as a private one")

	again, err := NewManager(Options{SharedLibrary: true})
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, in.ID, again.Interpreters()[0].ID, "the idle shared-file interpreter is lent again")
}
