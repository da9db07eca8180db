package libtorch

import (
	"errors"
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
	assert.Contains(t, err.Error(), "GOSR_LIBTORCH_SHIM")
}

func TestNotAShim(t *testing.T) {
	// A real shared library without the shim's symbols.
	_, err := loadShim([]string{"/lib/x86_64-linux-gnu/libm.so.6"})
	require.True(t, errors.Is(err, ErrNoShim))
	assert.Contains(t, err.Error(), "not a gosr libtorch shim")
}
