package pyfallback

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeProcs stands in for runtime.GOMAXPROCS.
type fakeProcs struct{ n, sets int }

func (f *fakeProcs) gomaxprocs(n int) int {
	old := f.n
	if n > 0 {
		f.n = n
		f.sets++
	}
	return old
}

func TestSpareProcCounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     string
		steps   func(s *spareProc, f *fakeProcs)
		procs   int // GOMAXPROCS after the steps
		raised  bool
		setsMax int
	}{
		{"one manager open", "", func(s *spareProc, f *fakeProcs) { s.opened() }, 3, true, 1},
		{"two open, one closed", "", func(s *spareProc, f *fakeProcs) { s.opened(); s.opened(); s.closed() }, 3, true, 1},
		{"all closed", "", func(s *spareProc, f *fakeProcs) { s.opened(); s.opened(); s.closed(); s.closed() }, 2, false, 2},
		{"reopened", "", func(s *spareProc, f *fakeProcs) { s.opened(); s.closed(); s.opened() }, 3, true, 3},
		{"changed by the user meanwhile", "", func(s *spareProc, f *fakeProcs) { s.opened(); f.gomaxprocs(8); s.closed() }, 8, false, 2},
		{"opted out", "0", func(s *spareProc, f *fakeProcs) { s.opened(); s.opened(); s.closed() }, 2, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(SpareProcEnv, tc.env)
			f := &fakeProcs{n: 2}
			old := gomaxprocs
			gomaxprocs = f.gomaxprocs
			defer func() { gomaxprocs = old }()
			var s spareProc
			tc.steps(&s, f)
			assert.Equal(t, tc.procs, f.n)
			assert.Equal(t, tc.raised, s.set != 0)
			assert.LessOrEqual(t, f.sets, tc.setsMax)
		})
	}
}

// TestSpareProcWhileOpen: with a manager open, GOMAXPROCS is one more
// than before the first manager opened.
func TestSpareProcWhileOpen(t *testing.T) {
	manager(t)
	before, now, ok := SpareProc()
	require.True(t, ok, "a manager is open and %s is not set", SpareProcEnv)
	assert.Equal(t, before+1, now)
	assert.Equal(t, now, runtime.GOMAXPROCS(0))
}
