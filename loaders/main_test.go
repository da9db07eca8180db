package loaders_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests, or, in a child that BenchmarkPoolScaling
// started, a pool worker (poolWorkerEnv).
func TestMain(m *testing.M) {
	if spec := os.Getenv(poolWorkerEnv); spec != "" {
		if err := poolWorker(spec); err != nil {
			fmt.Fprintln(os.Stderr, "pool worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
