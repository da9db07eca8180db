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
		if os.Getenv(SharedLibEnv) == "" {
			assert.Equal(t, in.ID > 0, in.PrivateLibrary, "interpreter %d", in.ID)
		}
		if in.PrivateLibrary {
			private++
		}
	}
	assert.GreaterOrEqual(t, len(copies), private, "an executable mapping of a removed copy per private interpreter")
	if os.Getenv(SharedLibEnv) == "" {
		assert.Positive(t, private, "the test manager's second interpreter has its own copy")
	}
}

// TestSharedLibraryFallback: where no private copy can be written, the
// interpreter loads the shared file and still works.
func TestSharedLibraryFallback(t *testing.T) {
	manager(t)
	procs.mu.Lock()
	fresh := len(procs.free) == 0 && len(procs.all) < MaxInterpreters()
	procs.mu.Unlock()
	if !fresh {
		t.Skip("no fresh interpreter left to start in this process")
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	m, err := NewManager(1)
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
