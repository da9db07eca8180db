package libtorch

import (
	"errors"
	"os"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ccall"
)

// requireLib loads the shim or skips (fails with GOSR_REQUIRE_LIBTORCH=1,
// as in CI).
func requireLib(t testing.TB) *lib {
	t.Helper()
	l, err := load("")
	if errors.Is(err, ErrNoShim) && os.Getenv("GOSR_REQUIRE_LIBTORCH") == "" {
		t.Skipf("libtorch backend: %v", err)
	}
	require.NoError(t, err)
	return l
}

// TestFastCall checks the ccall argument block against purego's own
// SyscallN, and that it allocates nothing.
func TestFastCall(t *testing.T) {
	l := requireLib(t)
	var s ccall.Frame
	for _, x := range []uintptr{0, 1, 41, 1 << 40} {
		want, _, _ := purego.SyscallN(l.echo, x)
		require.Equal(t, 2*x+1, want)
		require.Equal(t, want, s.Call1(l.echo, x))
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { s.Call1(l.echo, 3) }))
}

// BenchmarkCall is the bare cost of crossing into the shim and back.
func BenchmarkCall(b *testing.B) {
	l := requireLib(b)
	var s ccall.Frame
	for b.Loop() {
		s.Call1(l.echo, 3)
	}
}
