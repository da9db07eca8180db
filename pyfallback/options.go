package pyfallback

// Options configure a Manager. The zero value is one interpreter on the
// system's libpython (FindLibPython), every interpreter after the
// process's first on a private copy of it, calls run on the caller's
// thread, and GOMAXPROCS left as the program set it.
type Options struct {
	// Interpreters is how many private interpreters the manager holds; 0
	// means 1. A process holds at most MaxInterpreters, all managers
	// together.
	Interpreters int
	// LibPython is the path of the libpython shared library to load; ""
	// searches the usual places (FindLibPython).
	LibPython string
	// SharedLibrary makes every interpreter load the LibPython file itself
	// rather than a private copy of it (see openLibrary): about 2 MiB less
	// resident memory and 5 ms less start-up per interpreter, but
	// interpreters then execute the same code pages, which slowed two
	// cores down on the machines measured.
	SharedLibrary bool
	// Handoff runs every call on its interpreter's own thread, the caller
	// waiting, instead of on the caller's thread (see doHere): two thread
	// wake-ups more per call. For comparison, and as a way out should
	// running a copy on the caller's thread ever fail.
	Handoff bool
	// SpareProc raises GOMAXPROCS by one while the manager is open, so
	// that goroutines inside Python keep their Ps (see spareproc.go).
	// Managers that ask share one raise.
	SpareProc bool
}

// libKind is how an interpreter was started: an idle interpreter is lent
// only to a manager whose options would have started it the same way.
type libKind struct {
	path   string
	shared bool // Options.SharedLibrary
}
