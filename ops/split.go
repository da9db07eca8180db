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

// splitter is a reusable parallel.Task over [0, n).
type splitter struct {
	next    atomic.Int64
	n, unit int
	chunks  int
	body    func(lo, hi int)
}

// RunPart implements parallel.Task.
func (s *splitter) RunPart(_, _ int) {
	for {
		ch := int(s.next.Add(1) - 1)
		if ch >= s.chunks {
			return
		}
		if lo, hi := parallel.Range(ch, s.chunks, s.n, s.unit); lo < hi {
			s.body(lo, hi)
		}
	}
}

// run calls body over [0, n) in chunks of whole units: across sc's team
// when it has helpers and work (the op's total, in the units
// splitMinWork counts) is worth it, else once on the caller. body must
// write disjoint memory for disjoint ranges.
func (s *splitter) run(sc *gemm.Scratch, n, unit, work int, body func(lo, hi int)) {
	team := sc.Team()
	parts := min(team.Size(), work/splitMinWork, (n+unit-1)/unit)
	if parts < 2 {
		body(0, n)
		return
	}
	s.n, s.unit, s.body = n, unit, body
	// Up to two chunks a goroutine: one that comes late takes less.
	s.chunks = min(2*parts, (n+unit-1)/unit)
	s.next.Store(0)
	sc.NoteOpSplit()
	team.Run(s, parts)
	s.body = nil
}
