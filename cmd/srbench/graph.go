package main

import (
	"flag"
	"fmt"
	"io"
)

// graphFlags are graph's: the model and the options that shape its
// prepared graph.
type graphFlags struct {
	modelFlags
	runtimeFlags
}

func (f *graphFlags) register(fs *flag.FlagSet) {
	f.modelFlags.register(fs)
	f.runtimeFlags.register(fs)
}

func (f *graphFlags) validate() error { return f.runtimeFlags.validate("graph") }

// run prints the graph gosr runs, after its passes, and each node's kind.
func (f *graphFlags) run(w io.Writer) error {
	_, sm, err := loadPrepared(f.modelFlags, f.runtimeFlags)
	if err != nil {
		return err
	}
	fmt.Fprint(w, sm.Graph().String())
	fmt.Fprintf(w, "# backend %s\n", f.backendLabel())
	for _, n := range sm.Nodes() {
		fmt.Fprintf(w, "# %-12s %s\n", n.Kind, n.Node)
	}
	return nil
}
