package pyfallback

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExitSkipsDestructors: libc's exit() (what the race detector's
// os.Exit ends in) leaves with its status and runs none of the
// destructors of the libraries loaded into the interpreters. It runs
// itself in a child process that imports torch (or, without it, numpy)
// in two interpreters and calls exit(7).
func TestExitSkipsDestructors(t *testing.T) {
	if os.Getenv("GOSR_EXIT_CHILD") != "" {
		exitChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitSkipsDestructors$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOSR_EXIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "the child ends by exit(7): %v\n%s", err, out)
	assert.Equal(t, 7, ee.ExitCode(), "the child's output:\n%s", out)
	assert.Contains(t, string(out), "child: exiting")
	assert.NotContains(t, string(out), "Assertion")
}

func exitChild(t *testing.T) {
	m, err := NewManager(Options{Interpreters: 2})
	if errors.Is(err, ErrNoLibPython) {
		os.Exit(7) // nothing loaded: nothing to check
	}
	require.NoError(t, err)
	ctx := context.Background()
	importHeavy(t, m)
	// Calls from several goroutines, so that the copies run on several
	// threads, as the package's tests leave them.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				s, err := m.AcquireHint(ctx, g%m.Len())
				if err == nil {
					_, err = s.Eval(ctx, "__import__('hashlib').sha256(b'gosr').hexdigest()")
					s.Release()
				}
				if err != nil {
					panic(err)
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, loadLibc())
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	exit, err := purego.Dlsym(h, "exit")
	require.NoError(t, err)
	os.Stderr.WriteString("child: exiting\n")
	purego.SyscallN(exit, 7)
	t.Fatal("exit returned")
}

// importHeavy imports torch in every interpreter of m, or numpy where the
// system Python has no torch: the libraries they load (libGLdispatch,
// OpenMP, OpenBLAS) bring thread keys and destructors of their own. An
// import that fails is only logged: what it loaded before failing is
// what matters.
func importHeavy(t *testing.T, m *Manager) {
	mod := "numpy"
	if exec.Command("/usr/bin/python3", "-c", "import torch").Run() == nil {
		mod = "torch"
	}
	ctx := context.Background()
	for i := range m.Len() {
		s, err := m.AcquireHint(ctx, i)
		require.NoError(t, err)
		err = s.Exec(ctx, "import "+mod)
		s.Release()
		if err != nil {
			t.Logf("interpreter %d: import %s: %v", i, mod, err)
		}
	}
}
