package pyfallback

import (
	"os"
	"sync"
	"syscall"
)

// Every interpreter is a libpython copy in its own dlmopen namespace,
// with a libc of its own. The copies share each OS thread's descriptor,
// and every libc numbers its pthread keys from 0, so two copies run on
// one thread read each other's thread-specific values (Python's thread
// state, OpenSSL's error stack: a crash in ERR_set_mark was seen). A
// thread therefore runs one copy only: the first interpreter that runs
// on it claims it for good, and calls of other interpreters made there
// are handed to their own interpreter's thread.

// threadOwners maps an OS thread id to the interpreter that claimed it.
type threadOwners struct {
	mu sync.RWMutex
	by map[int]int
}

var threads = threadOwners{by: map[int]int{}}

// claim reports whether thread tid runs interpreter id's copy, claiming
// it when no interpreter has. A thread id the kernel reuses keeps its
// owner: a new thread there owns no state of that copy yet, and the copy
// sets it up on first use (doHere), so that is safe.
func (t *threadOwners) claim(tid, id int) bool {
	t.mu.RLock()
	owner, ok := t.by[tid]
	t.mu.RUnlock()
	if ok {
		return owner == id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if owner, ok := t.by[tid]; ok {
		return owner == id
	}
	t.by[tid] = id
	return true
}

// HandoffEnv, set to any value, makes every call run on its
// interpreter's own thread (the caller waits), as gosr did before calls
// ran on the caller's thread; for comparison and as a way out.
const HandoffEnv = "GOSR_PYTHON_HANDOFF"

var callerThreads = os.Getenv(HandoffEnv) == ""

// owner is the interpreter that claimed thread tid, if any.
func (t *threadOwners) owner(tid int) (int, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	id, ok := t.by[tid]
	return id, ok
}

// threadOwner is the index in m of the interpreter that claimed the
// calling thread, or -1 (unclaimed, or another manager's).
func (m *Manager) threadOwner() int {
	id, ok := threads.owner(syscall.Gettid())
	if !ok {
		return -1
	}
	for k, in := range m.interps {
		if in.id == id {
			return k
		}
	}
	return -1
}
