package libtorch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckShim(t *testing.T) {
	tests := []struct {
		name, info, lib string
		want            string // "" = ok
	}{
		{"ok debian", "gosr-torch abi=2 torch=1.13.0", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0", ""},
		{"ok unversioned", "gosr-torch abi=2 torch=2.1.0", "/opt/libtorch/lib/libtorch_cpu.so", ""},
		{"other libtorch", "gosr-torch abi=2 torch=2.1.0", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0",
			"built against libtorch 2.1.0 but runs on /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0 (libtorch 1.13)"},
		{"other abi", "gosr-torch abi=1 torch=1.13.0", "", "shim speaks C ABI 1, this gosr speaks 2"},
		{"garbled", "hello", "", "unrecognised shim build line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkShim(tc.info, tc.lib)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "make libtorch")
		})
	}
}

func TestMissingShim(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nope", ShimName)
	_, err := loadShim([]string{p})
	require.True(t, errors.Is(err, ErrNoShim))
	assert.Contains(t, err.Error(), p)
	assert.Contains(t, err.Error(), "apt-get install libtorch-dev")
	assert.Contains(t, err.Error(), "Options.Shim")
}

func TestNotAShim(t *testing.T) {
	// A real shared library without the shim's symbols.
	_, err := loadShim([]string{"/lib/x86_64-linux-gnu/libm.so.6"})
	require.True(t, errors.Is(err, ErrNoShim))
	assert.Contains(t, err.Error(), "not a gosr libtorch shim")
}

// TestShimOption: Options.Shim is the only place looked at when set, and
// once a shim is loaded another one is refused while the same one (by
// any path) is not.
func TestShimOption(t *testing.T) {
	missing := filepath.Join(t.TempDir(), ShimName)
	assert.Equal(t, []string{missing}, candidates(missing))
	assert.Greater(t, len(candidates("")), 1, "the usual places")

	l := requireLib(t)
	for _, other := range []string{missing, "/lib/x86_64-linux-gnu/libm.so.6"} {
		_, err := Open(Options{Shim: other})
		require.Error(t, err, other)
		assert.Contains(t, err.Error(), "holds one shim")
		assert.Contains(t, err.Error(), other)
		assert.Contains(t, err.Error(), l.info.Shim)
	}
	link := filepath.Join(t.TempDir(), "link.so")
	require.NoError(t, os.Symlink(l.info.Shim, link))
	b, err := Open(Options{Shim: link})
	require.NoError(t, err, "the loaded shim by another path")
	assert.Equal(t, l.info.Shim, b.Info().Shim)
}
