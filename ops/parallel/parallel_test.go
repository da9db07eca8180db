package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// chunked shares chunks out through a counter, as kernels do, and
// records which goroutines took part and which chunks each did.
type chunked struct {
	chunks int
	next   atomic.Int64
	done   [64]atomic.Int32 // per chunk: times done
	ran    [8]atomic.Int32  // per goroutine: parts run
	n      [8]atomic.Int32  // per goroutine: the n it was given
	// wait makes part 0 wait (up to a second) for this many parts to
	// start, so that tests see every helper join; panics names a part
	// that panics (-1: none).
	wait   int
	panics int
	joined atomic.Int32
}

func (c *chunked) RunPart(i, n int) {
	c.ran[i].Add(1)
	c.n[i].Store(int32(n))
	c.joined.Add(1)
	if i == 0 {
		for deadline := time.Now().Add(time.Second); int(c.joined.Load()) < c.wait && time.Now().Before(deadline); {
			runtime.Gosched()
		}
	}
	if i == c.panics {
		panic("part failed")
	}
	for {
		k := int(c.next.Add(1) - 1)
		if k >= c.chunks {
			return
		}
		c.done[k].Add(1)
	}
}

// withProcs raises GOMAXPROCS to n for the test (teams are capped at it).
func withProcs(t *testing.T, n int) {
	saved := runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(saved) })
}

// Every chunk is done once whoever joins; part 0 always runs, each part
// at most once, with the n Run was given; helpers past n never run.
func TestTeamRunDoesAllWork(t *testing.T) {
	defer goleak.VerifyNone(t)
	withProcs(t, 4)
	team := New(4)
	defer team.Close()
	require.Equal(t, 4, team.Size())
	for round := range 50 {
		for _, parts := range []int{1, 2, 4, 3} {
			c := &chunked{chunks: 64, panics: -1}
			if round == 0 {
				c.wait = parts // all join: checked below
			}
			team.Run(c, parts)
			for k := range c.chunks {
				require.EqualValues(t, 1, c.done[k].Load(), "parts %d: chunk %d", parts, k)
			}
			require.EqualValues(t, 1, c.ran[0].Load(), "part 0 runs on the caller")
			for i := range c.ran {
				ran := c.ran[i].Load()
				require.LessOrEqual(t, ran, int32(1), "part %d ran twice", i)
				if i >= parts {
					require.Zero(t, ran, "parts %d: helper %d joined", parts, i)
				} else if ran == 1 {
					require.EqualValues(t, parts, c.n[i].Load())
				}
				if round == 0 && i < parts {
					require.EqualValues(t, 1, ran, "parts %d: helper %d did not join although part 0 waited", parts, i)
				}
			}
		}
	}
	assert.Panics(t, func() { team.Run(&chunked{panics: -1}, 5) }, "more parts than goroutines")
}

// slowHelper's part 1 outlasts part 0 by d: Run must return only after
// it, whether the caller catches the helper's end while it watches
// (d under spinFor) or after it has blocked (d well past it).
type slowHelper struct {
	d       time.Duration
	started chan struct{}
	ended   atomic.Bool
}

func (s *slowHelper) RunPart(i, _ int) {
	if i == 0 {
		<-s.started // part 1 has joined
		return
	}
	close(s.started)
	time.Sleep(s.d)
	s.ended.Store(true)
}

func TestTeamRunWaitsForSlowHelper(t *testing.T) {
	defer goleak.VerifyNone(t)
	withProcs(t, 2)
	team := New(2)
	defer team.Close()
	for _, d := range []time.Duration{0, 10 * time.Microsecond, spinFor / 2, 3 * spinFor, 20 * time.Millisecond} {
		for range 20 {
			s := &slowHelper{d: d, started: make(chan struct{})}
			team.Run(s, 2)
			require.True(t, s.ended.Load(), "Run returned before the helper's part of %v ended", d)
		}
	}
	// The done channel is left empty: the next run does not return early.
	s := &slowHelper{d: 5 * time.Millisecond, started: make(chan struct{})}
	team.Run(s, 2)
	require.True(t, s.ended.Load())
	require.Zero(t, len(team.done))
}

// A team of one starts nothing and runs the single part on the caller.
func TestTeamOfOne(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, n := range []int{-1, 0, 1} {
		team := New(n)
		assert.Nil(t, team)
		assert.Equal(t, 1, team.Size())
		c := &chunked{chunks: 3, panics: -1}
		team.Run(c, 1)
		assert.EqualValues(t, 1, c.ran[0].Load())
		assert.EqualValues(t, 1, c.done[2].Load())
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
		c := &chunked{chunks: 8, wait: 3, panics: p}
		assert.PanicsWithValue(t, "part failed", func() { team.Run(c, 3) }, "part %d panics", p)
		assert.EqualValues(t, 1, c.ran[2].Load(), "part 2 ran")
	}
	c := &chunked{chunks: 8, wait: 3, panics: -1}
	team.Run(c, 3)
	assert.EqualValues(t, 1, c.done[7].Load())
}

// Close stops the helpers (goleak finds none left); a closed team runs
// as a team of one.
func TestTeamCloseStopsHelpers(t *testing.T) {
	defer goleak.VerifyNone(t)
	withProcs(t, 3)
	team := New(3)
	team.Run(&chunked{chunks: 4, wait: 3, panics: -1}, 3)
	team.Close()
	team.Close()
	assert.Equal(t, 1, team.Size())
	c := &chunked{chunks: 4, panics: -1}
	team.Run(c, 1)
	assert.EqualValues(t, 1, c.done[3].Load())
}

// A steady Run allocates nothing.
func TestTeamRunAllocs(t *testing.T) {
	withProcs(t, 2)
	team := New(2)
	defer team.Close()
	c := &chunked{panics: -1}
	assert.Zero(t, testing.AllocsPerRun(100, func() { team.Run(c, 2) }))
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

// BenchmarkTeamRun is the cost of one split op that does no work.
func BenchmarkTeamRun(b *testing.B) {
	team := New(2)
	defer team.Close()
	c := &chunked{panics: -1}
	for range b.N {
		team.Run(c, team.Size())
	}
}
