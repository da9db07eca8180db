package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gosr/gosr/builtin"
)

// listFlags are list's: none.
type listFlags struct{}

func (*listFlags) register(*flag.FlagSet) {}

func (*listFlags) validate() error { return nil }

// run prints the built-in models' names, one a line.
func (*listFlags) run(w io.Writer) error {
	_, err := fmt.Fprintln(w, strings.Join(builtin.Names(), "\n"))
	return err
}
