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

// Managers with Options.SpareProc share one raise, undone by the last
// Close unless the program changed GOMAXPROCS meanwhile.
func TestSpareProcCounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   func(s *spareProc, f *fakeProcs)
		procs   int // GOMAXPROCS after the steps
		raised  bool
		setsMax int
	}{
		{"none open", func(s *spareProc, f *fakeProcs) {}, 2, false, 0},
		{"one manager open", func(s *spareProc, f *fakeProcs) { s.opened() }, 3, true, 1},
		{"two open, one closed", func(s *spareProc, f *fakeProcs) { s.opened(); s.opened(); s.closed() }, 3, true, 1},
		{"all closed", func(s *spareProc, f *fakeProcs) { s.opened(); s.opened(); s.closed(); s.closed() }, 2, false, 2},
		{"reopened", func(s *spareProc, f *fakeProcs) { s.opened(); s.closed(); s.opened() }, 3, true, 3},
		{"changed by the user meanwhile", func(s *spareProc, f *fakeProcs) { s.opened(); f.gomaxprocs(8); s.closed() }, 8, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
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

// TestSpareProcOption: a manager leaves GOMAXPROCS alone unless opened
// with Options.SpareProc; with it, GOMAXPROCS is one more while it is
// open and as before once it is closed.
func TestSpareProcOption(t *testing.T) {
	procs0 := runtime.GOMAXPROCS(0)
	manager(t) // the package's test manager, without the option
	_, _, ok := SpareProc()
	require.False(t, ok, "raised by a manager that did not ask")
	require.Equal(t, procs0, runtime.GOMAXPROCS(0))

	m, err := NewManager(Options{SpareProc: true})
	require.NoError(t, err)
	before, now, ok := SpareProc()
	assert.True(t, ok)
	assert.Equal(t, procs0, before)
	assert.Equal(t, procs0+1, now)
	assert.Equal(t, now, runtime.GOMAXPROCS(0))
	require.NoError(t, m.Close())
	_, _, ok = SpareProc()
	assert.False(t, ok)
	assert.Equal(t, procs0, runtime.GOMAXPROCS(0), "put back by the Close")
}
