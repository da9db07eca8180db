package pyfallback

import "runtime"

// A goroutine inside Python is, to Go's scheduler, a goroutine in a
// system call: it keeps its P, and sysmon takes the P back once the call
// has outlasted a tick (20 us) unless some P is idle. When every P is
// inside Python (2 goroutines calling 2 interpreters with GOMAXPROCS 2),
// no P is idle, so every call of ~100 us loses its P: sysmon wakes, hands
// the P off, starts a spinning thread that finds nothing to do, and the
// call's return takes a P back the slow way. On this project's 2-core
// machine that cost 4-21% more CPU per call and 1.5 context switches per
// call, all of it stolen from the cores running Python
// (BenchmarkSpareProc). One P more than the process had keeps a P idle while
// the others run Python, so sysmon leaves them alone.
//
// So a manager opened with Options.SpareProc makes GOMAXPROCS one more
// than it was when the first such manager opened, while any such manager
// is open; the last one's Close puts it back unless someone changed it
// meanwhile. It is not the default: GOMAXPROCS is the program's to set,
// and Go code can then run on one thread more than the program asked for
// (the default fork pool, sized GOMAXPROCS, gets a worker more).

// spareProc is the process's record of the raised GOMAXPROCS; guarded
// by procs.mu.
type spareProc struct {
	open      int // managers open with Options.SpareProc
	prev, set int // GOMAXPROCS before the first opened, and as raised; set 0: not raised
}

var spare spareProc

// gomaxprocs is runtime.GOMAXPROCS; tests replace it.
var gomaxprocs = runtime.GOMAXPROCS

func (s *spareProc) opened() {
	s.open++
	if s.open == 1 {
		s.prev = gomaxprocs(0)
		s.set = s.prev + 1
		gomaxprocs(s.set)
	}
}

func (s *spareProc) closed() {
	s.open--
	if s.open == 0 && s.set != 0 {
		if gomaxprocs(0) == s.set {
			gomaxprocs(s.prev)
		}
		s.set = 0
	}
}

// SpareProc reports GOMAXPROCS as it was before gosr raised it and as
// raised, while managers with Options.SpareProc are open; ok is false
// when it is not raised.
func SpareProc() (before, now int, ok bool) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return spare.prev, spare.set, spare.set != 0
}
