package main

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagDefaults are every flag's default, whichever commands take it.
var flagDefaults = map[string]string{
	"model": "mlp", "inputs": "", "expected": "",
	"backend": "go", "intra-op-threads": "1", "intra-op-calibration": "0", "disable-passes": "", "device": "cpu", "planner": "greedy", "manage-outputs": "false",
	"no-out-variant": "false", "no-optimize-memory": "false", "no-overwrites": "false", "interop": "1",
	"iters": "0", "warmup": "100", "threads": "1", "repeats": "7", "cpuprofile": "",
	"json": "false", "v": "false", "save-outputs": "", "interpreters": "1", "round": "1s", "intra-op-scaling": "",
	"python": "", "pt-timeout": "2m0s", "ort": "auto", "ort-profile": "", "per-node": "false",
}

// loadDefaults are load's defaults where its flag of the same name
// differs: its -model names a model on the server, its -json a file.
var loadDefaults = map[string]string{
	"cpuprofile": "", "model": "", "json": "", "version": "", "concurrency": "1", "protocol": "http", "binary": "false",
	"input": "", "shape": "", "zero-input": "false", "window": "2s", "stability": "0.1", "max-windows": "10", "timeout": "30s",
	"procs": "0", "floor": "false",
}

// The flags each subcommand takes, and their defaults: the shared groups
// (model, runtime, timing) appear wherever they apply and nowhere else.
func TestSubcommandFlagSets(t *testing.T) {
	model := []string{"model", "inputs", "expected"}
	rt := []string{"backend", "intra-op-threads", "intra-op-calibration", "disable-passes", "device", "planner", "manage-outputs", "no-out-variant", "no-optimize-memory", "no-overwrites", "interop"}
	timing := []string{"iters", "warmup", "threads", "repeats"}
	want := map[string][]string{
		"run":     slices.Concat(model, rt, timing, []string{"cpuprofile", "json", "v", "save-outputs", "interpreters", "round", "intra-op-scaling"}),
		"ops":     slices.Concat(model, rt, []string{"cpuprofile", "iters", "per-node", "warmup", "v"}),
		"graph":   slices.Concat(model, rt),
		"compare": slices.Concat(model, rt, timing, []string{"cpuprofile", "json", "v", "python", "pt-timeout", "ort", "ort-profile"}),
		"check":   slices.Concat(model, []string{"json"}),
		"load":    {"cpuprofile", "model", "version", "concurrency", "protocol", "binary", "input", "shape", "zero-input", "window", "stability", "max-windows", "timeout", "json", "procs", "floor"},
		"list":    nil,
	}
	require.Len(t, commands, len(want))
	for _, c := range commands {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.new().register(fs)
		var got []string
		fs.VisitAll(func(f *flag.Flag) {
			got = append(got, f.Name)
			def := flagDefaults[f.Name]
			if c.name == "load" {
				def = loadDefaults[f.Name]
			}
			assert.Equal(t, def, f.DefValue, "%s -%s: default", c.name, f.Name)
			assert.NotEmpty(t, f.Usage, "%s -%s: help text", c.name, f.Name)
		})
		w := slices.Clone(want[c.name])
		slices.Sort(w)
		assert.Equal(t, w, got, c.name) // VisitAll sorts by name
	}
}

// Each subcommand parses its own flags (MODEL before or after them) and
// rejects the others' with a usage error naming the command.
func TestSubcommandParse(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		err  string // "" parses
	}{
		// The commands README.md, docs/ and the Makefile quote.
		{"run", []string{"-model", "mlp"}, ""},
		{"run", []string{"testdata/pt/mlp.scripted.pt"}, ""},
		{"run", []string{"MODEL.pt", "-inputs", "IN.pt", "-expected", "OUT.pt", "-threads", "4", "-json"}, ""},
		{"run", []string{"MODEL.pt", "-interop", "2"}, ""},
		{"run", []string{"model.pt", "-backend", "auto"}, ""},
		{"run", []string{"-model", "testdata/pyfallback/tokenizer.pt", "-threads", "2", "-interpreters", "1,2", "-repeats", "11", "-round", "1s"}, ""},
		{"compare", []string{"MODEL.pt", "-inputs", "IN.pt"}, ""},
		{"compare", []string{"testdata/pt", "-interop", "2", "-pt-timeout", "5m"}, ""},
		{"compare", []string{"-model", "all"}, ""},
		{"compare", []string{"-model", "mlp", "-backend", "libtorch"}, ""},
		{"compare", []string{"/tmp/zoo-times", "-json", "-warmup", "10", "-repeats", "5"}, ""},
		{"graph", []string{"MODEL.pt"}, ""},
		{"check", []string{"MODEL.pt"}, ""},
		{"check", []string{"MODEL.pt", "-json", "-inputs", "IN.pt"}, ""},
		{"ops", []string{"mlp", "-iters", "10", "-warmup", "1", "-backend", "auto", "-v"}, ""},
		{"ops", []string{"mlp", "-iters", "10", "-per-node"}, ""},
		{"list", nil, ""},
		{"load", []string{"127.0.0.1:8000", "-model", "mlp", "-concurrency", "1,2,4,8", "-protocol", "grpc"}, ""},
		{"load", []string{"http://localhost:8000", "-model", "resnet18", "-binary", "-shape", "INPUT__0:1,3,224,224", "-json", "out.json"}, ""},
		// Flags of other commands, or none's.
		{"run", []string{"mlp", "-python", "/usr/bin/python3"}, "flag provided but not defined: -python"},
		{"ops", []string{"mlp", "-threads", "2"}, "flag provided but not defined: -threads"},
		{"graph", []string{"mlp", "-iters", "5"}, "flag provided but not defined: -iters"},
		{"compare", []string{"mlp", "-interpreters", "2"}, "flag provided but not defined: -interpreters"},
		{"check", []string{"mlp", "-backend", "libtorch"}, "flag provided but not defined: -backend"},
		{"list", []string{"-json"}, "flag provided but not defined: -json"},
		{"list", []string{"mlp"}, `list takes no arguments, got "mlp"`},
		{"run", []string{"mlp", "-bogus"}, "flag provided but not defined: -bogus"},
		// Values each command checks before loading anything.
		{"ops", []string{"-backend", "all"}, "-backend all: only compare runs every backend"},
		{"graph", []string{"-planner", "first-fit"}, `-planner: memplan: unknown planner "first-fit"`},
		{"run", []string{"-round", "-1s"}, "-round -1s: want a positive duration"},
		{"run", []string{"resnet50.pt", "-intra-op-scaling", "1,2", "-repeats", "9"}, ""},
		{"run", []string{"mlp", "-intra-op-scaling", "2"}, "-intra-op-scaling 2: want at least two counts"},
		{"run", []string{"mlp", "-intra-op-scaling", "1,0"}, "-intra-op-scaling 1,0: want counts of at least 1"},
		{"run", []string{"mlp", "-intra-op-scaling", "1,2", "-threads", "2"}, "-intra-op-scaling times one runtime per count"},
		{"load", []string{"-model", "mlp"}, "load needs the server's URL"},
		{"load", []string{"localhost:8000"}, "load needs -model"},
		{"load", []string{"localhost:8000", "-model", "m", "-concurrency", "1,0"}, "-concurrency 1,0: want counts of at least 1"},
		{"load", []string{"localhost:8000", "-model", "m", "-protocol", "udp"}, `-protocol "udp": want http or grpc`},
		{"load", []string{"localhost:8000", "-model", "m", "-protocol", "grpc", "-binary"}, "-binary is HTTP's binary tensor extension"},
		{"load", []string{"http://localhost:8000", "-model", "m", "-protocol", "grpc"}, "want host:port (or grpc://host:port) for -protocol grpc"},
		{"load", []string{"ftp://localhost:8000", "-model", "m"}, "want host:port or http://host:port"},
		{"load", []string{"localhost:8000", "-model", "m", "-shape", "x"}, "want NAME:D0,D1,..."},
		{"load", []string{"localhost:8000", "-model", "m", "-shape", "x:1,-1"}, `x: dimension "-1" is not a size`},
		{"load", []string{"localhost:8000", "-model", "m", "-shape", "x:1", "-shape", "x:2"}, "x given twice"},
		{"load", []string{"localhost:8000", "-model", "m", "-input", "in.json", "-shape", "x:1"}, "-input FILE gives the inputs and their shapes"},
		{"load", []string{"localhost:8000", "-model", "m", "-stability", "1.5"}, "-stability 1.5: want a fraction between 0 and 1"},
		{"load", []string{"localhost:8000", "-model", "m", "-max-windows", "2"}, "-max-windows 2: want at least 3"},
		{"load", []string{"localhost:8000", "-model", "m", "-window", "0s"}, "-window 0s: want a positive duration"},
	} {
		name := tc.cmd + " " + strings.Join(tc.args, " ")
		var errOut strings.Builder
		err := parse(tc.cmd, newCommand(tc.cmd), tc.args, &errOut)
		if tc.err == "" {
			require.NoError(t, err, name)
			assert.Empty(t, errOut.String(), name)
			continue
		}
		require.ErrorContains(t, err, tc.err, name)
		if strings.Contains(tc.err, "not defined") || strings.Contains(tc.err, "takes no arguments") {
			assert.Contains(t, errOut.String(), "usage: srbench "+tc.cmd+" ", "%s: usage names the command", name)
		}
	}

	// MODEL given after the flags, or between them, lands in -model.
	var f compareFlags
	require.NoError(t, parse("compare", &f, []string{"-json", "dir", "-repeats", "2"}, nil))
	assert.Equal(t, "dir", f.model)
	assert.True(t, f.json)
	assert.Equal(t, 2, f.repeats)
	assert.Equal(t, 100, f.warmup, "the default")

	// -h prints the command's flags and is no error to main.
	var help strings.Builder
	err := parse("graph", newCommand("graph"), []string{"-h"}, &help)
	require.True(t, errors.Is(err, flag.ErrHelp), "%v", err)
	assert.Contains(t, help.String(), "usage: srbench graph MODEL")
	assert.Contains(t, help.String(), "-planner")
	assert.NotContains(t, help.String(), "-iters")

	assert.Nil(t, newCommand("bench"))
}

// main exits 2 with the usage for an unknown command or flag, and runs
// a subcommand with its flags.
func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stderr, stdout string
	}{
		{[]string{"bench"}, 2, "usage: srbench run|ops|graph|compare|check|load|list MODEL [flags]", ""},
		{[]string{"graph", "mlp", "-iters", "5"}, 2, "srbench: flag provided but not defined: -iters", ""},
		{[]string{"graph", "mlp", "-h"}, 0, "usage: srbench graph ", ""},
		{[]string{"list"}, 0, "", "mlp\n"},
		{[]string{"graph", "mlp"}, 0, "", "# backend go\n"},
	} {
		name := strings.Join(tc.args, " ")
		stdout, stderr, code := srbench(t, nil, tc.args...)
		assert.Equal(t, tc.code, code, "%s: exit status; stderr %s", name, stderr)
		assert.Contains(t, stderr, tc.stderr, name)
		assert.Contains(t, stdout, tc.stdout, name)
	}
}
