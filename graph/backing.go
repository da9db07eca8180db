package graph

// Backing is the owner of memory that a graph's tensor constants view
// without a copy, such as the memory-mapped archive a loader read them
// from. Whoever keeps using those constants past the loader's Close (a
// prepared module) retains the backing first, so the memory outlives the
// loader's handle instead of faulting when it goes.
type Backing interface {
	// Retain takes a reference: the memory stays valid until release is
	// called (calling it again does nothing). It fails once the memory
	// is gone, that is after the owner was closed and every reference
	// released.
	Retain() (release func(), err error)
}
