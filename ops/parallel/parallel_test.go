package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// record notes which goroutine ran each part and how many parts it was
// told there were.
type record struct {
	ran   [8]atomic.Int32
	n     [8]atomic.Int32
	panic int // a part that panics, or -1
}

func (r *record) RunPart(i, n int) {
	r.ran[i].Add(1)
	r.n[i].Store(int32(n))
	if i == r.panic {
		panic("part failed")
	}
}

// withProcs raises GOMAXPROCS to n for the test (teams are capped at it).
func withProcs(t *testing.T, n int) {
	saved := runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(saved) })
}

func TestTeamRunsEachPartOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	withProcs(t, 4)
	team := New(4)
	defer team.Close()
	require.Equal(t, 4, team.Size())
	for _, parts := range []int{1, 2, 4, 3} {
		r := &record{panic: -1}
		team.Run(r, parts)
		for i := range r.ran {
			want := int32(0)
			if i < parts {
				want = 1
			}
			assert.Equal(t, want, r.ran[i].Load(), "parts %d: part %d", parts, i)
			if i < parts {
				assert.EqualValues(t, parts, r.n[i].Load(), "parts %d: part %d's n", parts, i)
			}
		}
	}
	assert.Panics(t, func() { team.Run(&record{panic: -1}, 5) }, "more parts than goroutines")
}

// A team of one starts nothing and runs the single part on the caller.
func TestTeamOfOne(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, n := range []int{-1, 0, 1} {
		team := New(n)
		assert.Nil(t, team)
		assert.Equal(t, 1, team.Size())
		r := &record{panic: -1}
		team.Run(r, 1)
		assert.EqualValues(t, 1, r.ran[0].Load())
		team.Close()
	}
}

func TestTeamCappedAtGOMAXPROCS(t *testing.T) {
	defer goleak.VerifyNone(t)
	saved := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(saved)
	team := New(8)
	defer team.Close()
	assert.Equal(t, 2, team.Size())
}

// A panic in any part reaches Run's caller once every part has ended,
// and the team stays usable.
func TestTeamPanicReachesCaller(t *testing.T) {
	defer goleak.VerifyNone(t)
	withProcs(t, 3)
	team := New(3)
	defer team.Close()
	for _, p := range []int{0, 2} {
		r := &record{panic: p}
		assert.PanicsWithValue(t, "part failed", func() { team.Run(r, 3) }, "part %d panics", p)
		for i := range 3 {
			assert.EqualValues(t, 1, r.ran[i].Load(), "part %d ran", i)
		}
	}
	r := &record{panic: -1}
	team.Run(r, 3)
	assert.EqualValues(t, 1, r.ran[2].Load())
}

// Close stops the helpers (goleak finds none left); a closed team runs
// as a team of one.
func TestTeamCloseStopsHelpers(t *testing.T) {
	defer goleak.VerifyNone(t)
	withProcs(t, 3)
	team := New(3)
	team.Close()
	team.Close()
	assert.Equal(t, 1, team.Size())
	r := &record{panic: -1}
	team.Run(r, 1)
	assert.EqualValues(t, 1, r.ran[0].Load())
}

// A steady Run allocates nothing.
func TestTeamRunAllocs(t *testing.T) {
	withProcs(t, 2)
	team := New(2)
	defer team.Close()
	r := &record{panic: -1}
	assert.Zero(t, testing.AllocsPerRun(100, func() { team.Run(r, 2) }))
}

func TestRange(t *testing.T) {
	for _, tc := range []struct {
		n, total, unit int
		want           [][2]int
	}{
		{2, 100, 16, [][2]int{{0, 48}, {48, 100}}},
		{3, 7, 1, [][2]int{{0, 2}, {2, 4}, {4, 7}}},
		{4, 2, 1, [][2]int{{0, 0}, {0, 1}, {1, 1}, {1, 2}}},
		{2, 6, 6, [][2]int{{0, 0}, {0, 6}}},
	} {
		for i, w := range tc.want {
			lo, hi := Range(i, tc.n, tc.total, tc.unit)
			assert.Equal(t, w, [2]int{lo, hi}, "Range(%d, %d, %d, %d)", i, tc.n, tc.total, tc.unit)
		}
	}
}
