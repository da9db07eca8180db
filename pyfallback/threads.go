package pyfallback

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Every interpreter is a libpython copy in its own dlmopen namespace,
// with a libc of its own, and any copy may run on any thread. What the
// copies share on a thread is its descriptor, made by the base libc. In
// it glibc keeps the values of pthread keys (pthread_setspecific):
// keys 0-31 inline, the others in blocks of 32 that the first libc to
// set a key of the block allocates. Every libc numbers its keys from 0,
// so two copies on one thread would read each other's values (Python's
// thread state, OpenSSL's error stack: a crash in ERR_set_mark was
// seen). So the keys are split:
//
//   - The base libc keeps blocks 0 and 1 (keys 0-63) for the process,
//     and holds every key of blocks 2-31 itself, so that a library that
//     creates a key through it later gets one of blocks 0-1 (this
//     happens inside copies too: libGLdispatch, loaded with torch,
//     looks pthread_key_create up with dlsym(RTLD_DEFAULT) and gets the
//     base libc's).
//   - Each copy gets blocks of its own, by interpreter id: at start-up
//     it creates every key its libc has (1024) and deletes those of its
//     blocks, so that its libraries' keys fall there, and a copy that
//     runs out gets EAGAIN from pthread_key_create rather than another's
//     key.
//   - The first key of each block 2-31 belongs to the base libc, with no
//     destructor (an anchor), and no copy has it. Before a copy first
//     runs on a thread the base libc sets every anchor there, so that it
//     allocates the blocks itself: when a Go thread ends, the base libc
//     frees the blocks, and would otherwise free memory of a copy's
//     malloc into its own.

const (
	keysMax  = 1024 // PTHREAD_KEYS_MAX
	keyBlock = 32   // PTHREAD_KEY_2NDLEVEL_SIZE
)

// keyRange is the keys of interpreter id's copy, [lo, hi), anchors
// excepted: blocks 2-31 are shared out among the most interpreters the
// process can hold (7 blocks each for 4, 1 for 16), fixed when the
// first interpreter starts.
func keyRange(id int) (lo, hi int) {
	n := anchors.blocks
	lo = (2 + id*n) * keyBlock
	return lo, lo + n*keyBlock
}

// anchors are the base libc's keys at the first slot of blocks 2-31.
var anchors struct {
	once        sync.Once
	err         error
	get, set    uintptr // the base libc's pthread_getspecific and _setspecific
	create, del uintptr // and _key_create, _key_delete
	keys        []uint32
	blocks      int // key blocks per copy
}

func makeAnchors() error {
	anchors.once.Do(func() {
		anchors.blocks = (keysMax/keyBlock - 2) / max(MaxInterpreters(), 1)
		h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			anchors.err = err
			return
		}
		for _, s := range []struct {
			p    *uintptr
			name string
		}{{&anchors.get, "pthread_getspecific"}, {&anchors.set, "pthread_setspecific"},
			{&anchors.create, "pthread_key_create"}, {&anchors.del, "pthread_key_delete"}} {
			if *s.p, err = purego.Dlsym(h, s.name); err != nil {
				anchors.err = err
				return
			}
		}
		// The base libc ends up holding every key of blocks 2-31 (the
		// anchors, and the copies' keys so that no library of the base
		// namespace is given one of theirs) and none of the free keys of
		// blocks 0-1, which stay the process's. libGLdispatch, loaded
		// with torch in a copy, finds pthread_key_create with
		// dlsym(RTLD_DEFAULT) and gets the base libc's: were the anchors
		// free it would be given one, whose value prepareThread sets to
		// 1, and its destructor would be called with 1 when the thread
		// ends.
		base := func(k int) bool { return k < 2*keyBlock }
		keys, err := fillKeys(anchors.create, base, func(k int) bool { return !base(k) })
		if err != nil {
			anchors.err = err
			return
		}
		for _, k := range keys {
			call(anchors.del, uintptr(k))
		}
		for b := 2; b < keysMax/keyBlock; b++ {
			anchors.keys = append(anchors.keys, uint32(b*keyBlock))
		}
	})
	if anchors.err != nil {
		return fmt.Errorf("pyfallback: setting up the base libc's pthread keys: %w", anchors.err)
	}
	return nil
}

// fillKeys creates keys with create (a libc's pthread_key_create) until
// the libc has none left, and returns the new ones for which free says
// true, for the caller to delete. A key need says must be gosr's that
// was taken before (by another library of that libc) is an error.
func fillKeys(create uintptr, free, need func(k int) bool) ([]uint32, error) {
	k := new(uint32) // C writes it; call moves it to the heap
	made := make([]bool, keysMax)
	var out []uint32
	for range keysMax {
		if call(create, uintptr(unsafe.Pointer(k)), 0) != 0 {
			break
		}
		if int(*k) >= keysMax {
			return nil, fmt.Errorf("pthread_key_create gave key %d", *k)
		}
		made[*k] = true
		if free(int(*k)) {
			out = append(out, *k)
		}
	}
	for i := range keysMax {
		if !made[i] && need(i) {
			return nil, fmt.Errorf("pthread key %d was taken before gosr could reserve it", i)
		}
	}
	return out, nil
}

// partitionKeys leaves interpreter in's copy (dlopen handle h, its
// libraries loaded, none of their code run yet) only the keys of its
// own blocks.
func (in *interp) partitionKeys(h uintptr) error {
	if err := makeAnchors(); err != nil {
		return err
	}
	create, del := dlsym(h, "pthread_key_create"), dlsym(h, "pthread_key_delete")
	if create == 0 || del == 0 {
		return fmt.Errorf("the copy's libc has no pthread_key_create")
	}
	lo, hi := keyRange(in.id)
	if hi > keysMax {
		return fmt.Errorf("no pthread keys left for interpreter %d", in.id)
	}
	own := func(k int) bool { return k >= lo && k < hi && k%keyBlock != 0 }
	keys, err := fillKeys(create, own, own)
	if err != nil {
		return fmt.Errorf("interpreter %d's libc: %w", in.id, err)
	}
	for _, k := range keys {
		call(del, uintptr(k))
	}
	return nil
}

// prepareThread makes the base libc allocate the key blocks of the
// calling thread (locked to it) before a copy first sets a key there.
func prepareThread() {
	if call(anchors.get, uintptr(anchors.keys[0])) != 0 {
		return
	}
	for _, k := range anchors.keys {
		call(anchors.set, uintptr(k), 1)
	}
}
