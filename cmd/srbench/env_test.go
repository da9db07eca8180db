package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/pyfallback"
)

// TestPyfallbackOptionsFromEnv: each GOSR_ variable srbench reads lands
// in its pyfallback option; unset ones give srbench's defaults (the spare
// P on), and a value that is not a boolean is an error naming the
// variable.
func TestPyfallbackOptionsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    pyfallback.Options
		wantErr string
	}{
		{"defaults", nil, pyfallback.Options{Interpreters: 2, SpareProc: true}, ""},
		{"libpython", map[string]string{envLibPython: "/opt/lib/libpython3.11.so"}, pyfallback.Options{Interpreters: 2, LibPython: "/opt/lib/libpython3.11.so", SpareProc: true}, ""},
		{"shared library", map[string]string{envPythonSharedLib: "1"}, pyfallback.Options{Interpreters: 2, SharedLibrary: true, SpareProc: true}, ""},
		{"handoff", map[string]string{envPythonHandoff: "true"}, pyfallback.Options{Interpreters: 2, Handoff: true, SpareProc: true}, ""},
		{"no spare P", map[string]string{envPythonSpareP: "0"}, pyfallback.Options{Interpreters: 2}, ""},
		{"handoff off", map[string]string{envPythonHandoff: "0"}, pyfallback.Options{Interpreters: 2, SpareProc: true}, ""},
		{"not a boolean", map[string]string{envPythonHandoff: "yes please"}, pyfallback.Options{}, `GOSR_PYTHON_HANDOFF="yes please": want 1 or 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{envLibPython, envPythonSharedLib, envPythonHandoff, envPythonSpareP} {
				t.Setenv(k, tc.env[k])
			}
			got, err := pyfallbackOptions(2)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLibtorchOptionsFromEnv(t *testing.T) {
	t.Setenv(envLibtorchShim, "")
	assert.Equal(t, "", libtorchOptions(3).Shim)
	assert.Equal(t, 3, libtorchOptions(3).Threads)
	t.Setenv(envLibtorchShim, "/opt/gosr/libgosrtorch.so")
	assert.Equal(t, "/opt/gosr/libgosrtorch.so", libtorchOptions(1).Shim)
}
