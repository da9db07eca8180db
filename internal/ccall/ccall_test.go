package ccall

import (
	"math"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
)

func sym(t testing.TB, lib, name string) uintptr {
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Skipf("%s: %v", lib, err)
	}
	p, err := purego.Dlsym(h, name)
	require.NoError(t, err)
	return p
}

// TestCallMatchesSyscallN calls libc and libm through a Frame and
// through purego.SyscallN: register arguments, stack arguments (past the
// sixth), a double, and no allocation.
func TestCallMatchesSyscallN(t *testing.T) {
	labs := sym(t, "libc.so.6", "labs")
	snprintf := sym(t, "libc.so.6", "snprintf")
	lround := sym(t, "libm.so.6", "lround")
	s := new(Frame)

	for _, x := range []int64{0, 1, -41, -1 << 40} {
		want, _, _ := purego.SyscallN(labs, uintptr(x))
		require.Equal(t, uintptr(max(x, -x)), want)
		require.Equal(t, want, s.Call(labs, uintptr(x)))
		require.Equal(t, want, s.Call1(labs, uintptr(x)))
	}

	// Eleven arguments: five of them on the C stack.
	format := []byte("%ld %ld %ld %ld %ld %ld %ld %ld\x00")
	buf := make([]byte, 64)
	args := []uintptr{uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&format[0]))}
	for i := range 8 {
		args = append(args, uintptr(i*11))
	}
	n := s.Call(snprintf, args...)
	require.Equal(t, "0 11 22 33 44 55 66 77", string(buf[:n]))
	clear(buf)
	n2, _, _ := purego.SyscallN(snprintf, args...)
	require.Equal(t, n, n2)
	require.Equal(t, "0 11 22 33 44 55 66 77", string(buf[:n]))

	// A lone double goes in xmm0.
	for _, x := range []float64{2.5, -7.4, 1e6} {
		require.Equal(t, uintptr(int64(math.Round(x))), s.Call(lround, uintptr(math.Float64bits(x))))
	}

	// Fewer arguments after more: the stale ones are cleared.
	require.Equal(t, uintptr(5), s.Call(labs, uintptr(5)))

	require.Zero(t, testing.AllocsPerRun(100, func() { s.Call(labs, 3) }))
	require.Zero(t, testing.AllocsPerRun(100, func() { s.Call(snprintf, args...) }))
	require.Zero(t, testing.AllocsPerRun(100, func() { s.Call1(labs, 3) }))
}

// BenchmarkCall compares a Frame call with purego.SyscallN.
func BenchmarkCall(b *testing.B) {
	labs := sym(b, "libc.so.6", "labs")
	b.Run("Frame", func(b *testing.B) {
		s := new(Frame)
		for b.Loop() {
			s.Call(labs, 3)
		}
	})
	b.Run("Call1", func(b *testing.B) {
		s := new(Frame)
		for b.Loop() {
			s.Call1(labs, 3)
		}
	})
	b.Run("SyscallN", func(b *testing.B) {
		for b.Loop() {
			purego.SyscallN(labs, 3)
		}
	})
}
