package ops_test

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// kernelBackend is one implementation the op suite runs against, as
// gonum's blas/testblas runs one suite on every BLAS.
type kernelBackend struct {
	name string
	opts func(t *testing.T) *staticruntime.Options
}

// backends lists go, and libtorch and auto where the shim loads. With
// GOSR_REQUIRE_LIBTORCH=1 (CI) a missing shim fails instead of skipping.
func backends() []kernelBackend {
	withBackend := func(mode ops.BackendMode) func(t *testing.T) *staticruntime.Options {
		return func(t *testing.T) *staticruntime.Options {
			b := openLibtorch(t)
			o := staticruntime.DefaultOptions()
			o.Backend, o.BackendMode = b, mode
			return &o
		}
	}
	return []kernelBackend{
		{"go", func(*testing.T) *staticruntime.Options { return nil }},
		{"libtorch", withBackend(ops.BackendOnly)},
		{"auto", withBackend(ops.BackendAuto)},
	}
}

var (
	ltOnce    sync.Once
	ltBackend *libtorch.Backend
	ltErr     error
)

func openLibtorch(t *testing.T) *libtorch.Backend {
	t.Helper()
	ltOnce.Do(func() { ltBackend, ltErr = libtorch.Open(libtorch.Options{Threads: 1}) })
	b, err := ltBackend, ltErr
	if errors.Is(err, libtorch.ErrNoShim) && os.Getenv("GOSR_REQUIRE_LIBTORCH") == "" {
		t.Skipf("libtorch backend: %v", err)
	}
	require.NoError(t, err)
	return b
}
