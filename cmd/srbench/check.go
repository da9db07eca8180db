package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/loaders/tscode"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// errGaps is check's failure when the model has gaps: they were printed.
var errGaps = errors.New("the model has ops or constructs gosr cannot run")

// checkResult is what `srbench check -json` prints.
type checkResult struct {
	Model string `json:"model"`
	// LoadError is the first construct of the model's code the loader
	// cannot compile; the ops are not checked then.
	LoadError string `json:"load_error,omitempty"`
	// Backend is the kernel backend asked about each gap ("libtorch"),
	// or why none was ("" with BackendNote).
	Backend     string              `json:"backend,omitempty"`
	BackendNote string              `json:"backend_note,omitempty"`
	Gaps        []staticruntime.Gap `json:"gaps"`
	Nodes       int                 `json:"nodes"`
	// CodeGaps, where the archive cannot be loaded, are the ops its code
	// calls that no Go kernel has (any overload), read from the code's
	// text: what else stands in the way besides LoadError.
	CodeGaps []staticruntime.Gap `json:"code_gaps,omitempty"`
}

// checkFlags are check's: the model, and how to print.
type checkFlags struct {
	modelFlags
	json bool
}

func (f *checkFlags) register(fs *flag.FlagSet) {
	f.modelFlags.register(fs)
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
}

func (f *checkFlags) validate() error { return nil }

// run lists every op of MODEL that gosr's Go kernels cannot run, each
// with its source lines, and whether the libtorch backend has it (the
// shim is opened when it can be). It fails when anything is missing.
func (f *checkFlags) run(w io.Writer) error {
	res := checkResult{Model: f.model, Gaps: []staticruntime.Gap{}}
	m, err := loadModel(f.model, f.modelFlags)
	if err != nil {
		res.LoadError = err.Error()
		if strings.HasSuffix(f.model, ".pt") {
			res.CodeGaps = codeGaps(f.model)
		}
		return printCheck(f, w, res)
	}
	g, err := m.graph()
	if err != nil {
		res.LoadError = err.Error()
		return printCheck(f, w, res)
	}
	opts := staticruntime.DefaultOptions()
	// Which ops libtorch has does not depend on its thread count.
	if b, err := openLibtorch(1); err == nil {
		opts.Backend = b
		res.Backend = b.Name()
	} else {
		res.BackendNote = "the libtorch backend is not loaded, so which gaps it would cover is unknown: " + firstLine(err.Error())
	}
	res.Gaps, err = staticruntime.Check(g, &opts)
	if err != nil {
		return err
	}
	g.Walk(func(*graph.Node) { res.Nodes++ }) // as the passes left it
	return printCheck(f, w, res)
}

func printCheck(f *checkFlags, w io.Writer, res checkResult) error {
	if f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		writeCheck(w, res)
	}
	if res.LoadError != "" || len(res.Gaps) > 0 {
		return errGaps
	}
	return nil
}

func writeCheck(w io.Writer, res checkResult) {
	if res.LoadError != "" {
		fmt.Fprintf(w, "%s: cannot be loaded: %s\n", res.Model, res.LoadError)
		fmt.Fprintln(w, "  (the loader stops at the first construct it cannot compile)")
		if len(res.CodeGaps) > 0 {
			fmt.Fprintf(w, "ops its code calls that no Go kernel has (read from the code's text, so branches the loader would remove are included):\n")
			for _, g := range res.CodeGaps {
				fmt.Fprintf(w, "  %s (%s)\n", g.Op, plural(len(g.Sources), "call"))
				for _, s := range dedupe(g.Sources) {
					fmt.Fprintf(w, "    at %s\n", s)
				}
			}
		}
		return
	}
	if len(res.Gaps) == 0 {
		fmt.Fprintf(w, "%s: gosr's Go kernels run every op (%d nodes)\n", res.Model, res.Nodes)
		return
	}
	nodes, covered := 0, 0
	for _, g := range res.Gaps {
		nodes += len(g.Sources)
		if g.Backend != "" {
			covered++
		}
	}
	fmt.Fprintf(w, "%s: %d op(s) with no Go kernel, at %d node(s):\n", res.Model, len(res.Gaps), nodes)
	for _, g := range res.Gaps {
		fmt.Fprintf(w, "  %s (%s)\n", g.Op, plural(len(g.Sources), "node"))
		fmt.Fprintf(w, "    signature: %s\n", g.Signature)
		for _, s := range dedupe(g.Sources) {
			if s == "" {
				s = "(no source position recorded)"
			}
			fmt.Fprintf(w, "    at %s\n", s)
		}
		switch {
		case g.Backend != "":
			fmt.Fprintf(w, "    %s: has it (runs there with -backend auto or -backend %s)\n", g.Backend, g.Backend)
		case res.Backend != "":
			fmt.Fprintf(w, "    %s: has no kernel for it either\n", res.Backend)
		}
	}
	if res.Backend != "" {
		fmt.Fprintf(w, "%s covers %d of the %d; with -backend auto the model runs %s.\n", res.Backend, covered, len(res.Gaps),
			map[bool]string{true: "whole", false: "only once the rest have kernels"}[covered == len(res.Gaps)])
	} else {
		fmt.Fprintf(w, "%s\n", res.BackendNote)
	}
}

// codeGaps lists the ops the archive's code calls that gosr's schema
// table knows and no Go kernel has, in order of first call.
func codeGaps(path string) []staticruntime.Gap {
	calls, err := loaders.CodeOpCalls(path)
	if err != nil {
		return nil
	}
	have := map[string]bool{}
	for _, op := range ops.Registered() {
		have[op] = true
	}
	var gaps []staticruntime.Gap
	at := map[string]int{}
	for _, c := range calls {
		if have[c.Op] || !tscode.KnownOp(c.Op) {
			continue
		}
		i, ok := at[c.Op]
		if !ok {
			i = len(gaps)
			at[c.Op] = i
			gaps = append(gaps, staticruntime.Gap{Op: c.Op, Reason: "no Go kernel for any overload"})
		}
		gaps[i].Sources = append(gaps[i].Sources, c.Source)
	}
	return gaps
}

// dedupe keeps the first of each repeated source line, with a count.
func dedupe(srcs []string) []string {
	count := map[string]int{}
	var order []string
	for _, s := range srcs {
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	for i, s := range order {
		if count[s] > 1 {
			order[i] = fmt.Sprintf("%s (%d nodes)", s, count[s])
		}
	}
	return order
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
