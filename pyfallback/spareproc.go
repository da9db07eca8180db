package pyfallback

import (
	"os"
	"runtime"
)

// A goroutine inside Python is, to Go's scheduler, a goroutine in a
// system call: it keeps its P, and sysmon takes the P back once the call
// has outlasted a tick (20 us) unless some P is idle. When every P is
// inside Python (2 goroutines calling 2 interpreters with GOMAXPROCS 2),
// no P is idle, so every call of ~100 us loses its P: sysmon wakes, hands
// the P off, starts a spinning thread that finds nothing to do, and the
// call's return takes a P back the slow way. On this project's 2-core
// machine that cost 4-21% more CPU per call and 1.5 context switches per
// call, all of it stolen from the cores running Python
// (TestSpareProc). One P more than the process had keeps a P idle while
// the others run Python, so sysmon leaves them alone.
//
// So while any manager is open, GOMAXPROCS is one more than it was when
// the first opened; the last Close puts it back unless someone changed it
// meanwhile. Go code can then run on one thread more than before
// (the default fork pool, sized GOMAXPROCS, gets a worker more).

// SpareProcEnv, set to "0", leaves GOMAXPROCS alone.
const SpareProcEnv = "GOSR_PYTHON_SPARE_P"

// spareProc is the process's record of the raised GOMAXPROCS; guarded
// by procs.mu.
type spareProc struct {
	open      int // managers open
	prev, set int // GOMAXPROCS before the first opened, and as raised; set 0: not raised
}

var spare spareProc

// gomaxprocs is runtime.GOMAXPROCS; tests replace it.
var gomaxprocs = runtime.GOMAXPROCS

func (s *spareProc) opened() {
	s.open++
	if s.open == 1 && os.Getenv(SpareProcEnv) != "0" {
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
// raised, while managers are open; ok is false when it is not raised.
func SpareProc() (before, now int, ok bool) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return spare.prev, spare.set, spare.set != 0
}
