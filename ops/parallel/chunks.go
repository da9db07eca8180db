package parallel

import "sync/atomic"

// [Chunk affinity]
//
// A split op's chunks used to go to whichever goroutine asked first,
// so from one op to the next a core computed a different part of the
// output than it had produced of the input. On a VM whose two vCPUs sat
// far apart (a round trip of a cache line between them 490 ns, against
// 130 ns at other times on the same VM, measured by srbench run
// -intra-op-scaling), every line a core read that the other had
// written cost about what memory does: a chain of four pointwise
// convolutions at 56x56, split by positions, ran 1.85-1.99 ms split
// that way and 1.44-1.47 ms with each goroutine taking its own
// contiguous share first, so that consecutive ops split alike keep
// their data on the core that made it. Chunks deals that way: part i
// takes the chunks of segment i in order, then what is left of the
// others' (a helper that comes late has its share taken by the ones
// that came).

// MaxParts bounds the parts a Chunks deals to; a larger team's parts
// beyond it take chunks from the others' segments.
const MaxParts = 64

// Chunks deals the chunks [0, count) of an op to the parts of a team
// (see [Chunk affinity]). The zero value deals nothing; Reset prepares
// a run. Take may be called from the parts' goroutines at once.
type Chunks struct {
	segs  [MaxParts]segment
	parts int
}

// segment is part i's share: chunks [next, end) left. Each on a cache
// line of its own, so parts taking from their own do not share one.
type segment struct {
	next atomic.Int64
	end  int64
	_    [48]byte
}

// Reset deals count chunks to parts contiguous segments, as even as
// whole chunks allow (parts is capped at count and MaxParts).
func (c *Chunks) Reset(count, parts int) {
	parts = max(1, min(parts, MaxParts, count))
	c.parts = parts
	for i := range parts {
		s := &c.segs[i]
		s.next.Store(int64(i * count / parts))
		s.end = int64((i + 1) * count / parts)
	}
}

// Take returns the next chunk for part i: from its own segment while
// any is left there, then from the following segments' in turn; ok is
// false once every chunk has been taken.
func (c *Chunks) Take(i int) (ch int, ok bool) {
	p := c.parts
	for k := range p {
		s := &c.segs[(i+k)%p]
		if s.next.Load() >= s.end {
			continue
		}
		if n := s.next.Add(1) - 1; n < s.end {
			return int(n), true
		}
	}
	return 0, false
}
