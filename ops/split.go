package ops

import (
	"sync/atomic"

	"github.com/gosr/gosr/ops/gemm"
	"github.com/gosr/gosr/ops/parallel"
)

// Intra-op splits of the kernels besides the matrix products (which
// ops/gemm splits itself): large elementwise ops and per-plane ops share
// a flat range out across the runtime's team (Scratch.Team, set by
// staticruntime.Options.IntraOpThreads) in chunks taken from a counter,
// as gemm's jobs do. A kernel keeps its splitter and its body func in its
// node state, made once, so a split run allocates nothing.

// splitMinWork is the least work (elements, or element-operations for a
// pooling) worth a goroutine: below it, waking a helper costs more than
// its share saves.
const splitMinWork = 1 << 15

// chunks deals [0, n) out in chunks of whole units taken from a
// counter, up to two a goroutine (one that comes late takes less): the
// shared part of splitter and of the channel-blocked convolutions'
// dwcRun.
type chunks struct {
	next    atomic.Int64
	n, unit int
	count   int
}

// splitParts is how many goroutines of sc's team an op over [0, n) in
// units, of work in the units splitMinWork counts, is worth.
func splitParts(sc *gemm.Scratch, n, unit, work int) int {
	return min(sc.Team().Size(), work/splitMinWork, (n+unit-1)/unit)
}

// reset prepares the chunks of [0, n) for parts goroutines.
func (c *chunks) reset(n, unit, parts int) {
	c.n, c.unit = n, unit
	c.count = min(2*parts, (n+unit-1)/unit)
	c.next.Store(0)
}

// take returns the next chunk, or ok false when none is left.
func (c *chunks) take() (lo, hi int, ok bool) {
	for {
		ch := int(c.next.Add(1) - 1)
		if ch >= c.count {
			return 0, 0, false
		}
		if lo, hi := parallel.Range(ch, c.count, c.n, c.unit); lo < hi {
			return lo, hi, true
		}
	}
}

// splitter is a reusable parallel.Task over [0, n).
type splitter struct {
	chunks
	body func(lo, hi int)
}

// RunPart implements parallel.Task.
func (s *splitter) RunPart(_, _ int) {
	for lo, hi, ok := s.take(); ok; lo, hi, ok = s.take() {
		s.body(lo, hi)
	}
}

// run calls body over [0, n) in chunks of whole units: across sc's team
// when it has helpers and work (the op's total, in the units
// splitMinWork counts) is worth it, else once on the caller. body must
// write disjoint memory for disjoint ranges.
func (s *splitter) run(sc *gemm.Scratch, n, unit, work int, body func(lo, hi int)) {
	parts := splitParts(sc, n, unit, work)
	if parts < 2 {
		body(0, n)
		return
	}
	s.body = body
	s.reset(n, unit, parts)
	sc.NoteOpSplit()
	sc.Team().Run(s, parts)
	s.body = nil
}
