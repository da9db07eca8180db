// Command gosr serves PyTorch models over the Open Inference Protocol
// (KServe v2: REST and gRPC) with Prometheus metrics.
//
//	gosr serve -model-repository DIR [flags]
//	gosr serve -config gosr.json
//
// The repository is laid out as Triton's: DIR/<model>/<version>/model.pt
// and an optional DIR/<model>/config.pbtxt. See docs/serving.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/staticruntime"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintf(os.Stderr, "usage: gosr serve -model-repository DIR [flags]  (gosr serve -h for the flags)\n")
		os.Exit(2)
	}
	if err := serveMain(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "gosr:", err)
		os.Exit(1)
	}
}

// fileConfig is the config file (-config): the flags' names as JSON
// keys. Flags given on the command line win over the file.
type fileConfig map[string]any

// serveFlags are gosr serve's settings, as flags.
type serveFlags struct {
	configFile, repo, host, control, logFormat, logLevel string
	httpPort, grpcPort, metricsPort                      int
	instances, maxQueue, python, threads                 int
	maxBody                                              int64
	readTO, writeTO, idleTO, drain                       time.Duration
}

func newServeFlags() (*flag.FlagSet, *serveFlags) {
	fs := flag.NewFlagSet("gosr serve", flag.ContinueOnError)
	d := serve.DefaultOptions()
	f := &serveFlags{}
	fs.StringVar(&f.configFile, "config", "", "a JSON file of flag values (keys are the flag names); flags on the command line win")
	fs.StringVar(&f.repo, "model-repository", "", "the model repository (Triton's layout: DIR/<model>/<version>/model.pt, DIR/<model>/config.pbtxt)")
	fs.StringVar(&f.host, "host", "", "the address to listen on (all by default)")
	fs.IntVar(&f.httpPort, "http-port", 8080, "the REST port (-1: off)")
	fs.IntVar(&f.grpcPort, "grpc-port", 8081, "the gRPC port (-1: off)")
	fs.IntVar(&f.metricsPort, "metrics-port", 8002, "the Prometheus /metrics port (-1: off)")
	fs.IntVar(&f.instances, "instances", 0, "runtimes per model without an instance_group count (0: the CPUs the container may use)")
	fs.IntVar(&f.maxQueue, "max-queue-size", d.MaxQueueSize, "requests a model may have queued or running before it answers 503 / UNAVAILABLE")
	fs.Int64Var(&f.maxBody, "max-request-bytes", d.MaxRequestBytes, "the largest request body or gRPC message")
	fs.DurationVar(&f.readTO, "read-timeout", d.ReadTimeout, "HTTP: the time to read a whole request")
	fs.DurationVar(&f.writeTO, "write-timeout", d.WriteTimeout, "HTTP: the time to write a response")
	fs.DurationVar(&f.idleTO, "idle-timeout", d.IdleTimeout, "HTTP: how long an idle keep-alive connection stays")
	fs.DurationVar(&f.drain, "drain-timeout", d.DrainTimeout, "on SIGTERM, how long requests in flight may take to finish")
	fs.StringVar(&f.control, "model-control-mode", d.ModelControl, "explicit: load and unload requests are taken; none: refused")
	fs.IntVar(&f.python, "python-interpreters", d.PythonInterpreters, "private Python interpreters for torch.package models (started on first use; 0: off)")
	fs.IntVar(&f.threads, "interop-threads", 0, "per model: forks run at most this many at a time (0: the runtime's default)")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	return fs, f
}

// parseServeFlags parses args and then the config file they name.
func parseServeFlags(args []string) (*serveFlags, error) {
	fs, f := newServeFlags()
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (flags only)", fs.Args())
	}
	if f.configFile != "" {
		if err := applyConfigFile(fs, f.configFile); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func serveMain(args []string) error {
	f, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, hopts)
	if f.logFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, hopts)
	} else if f.logFormat != "text" {
		return fmt.Errorf("-log-format %q: text or json", f.logFormat)
	}
	log := slog.New(h)
	if f.repo == "" {
		return errors.New("-model-repository is required")
	}
	addr := func(port int) string {
		if port < 0 {
			return ""
		}
		return f.host + ":" + strconv.Itoa(port)
	}
	ro := staticruntime.DefaultOptions()
	if f.threads > 0 {
		ro.InterOpThreads = f.threads
	}
	opts := serve.Options{
		ModelRepository: f.repo, HTTPAddr: addr(f.httpPort), GRPCAddr: addr(f.grpcPort), MetricsAddr: addr(f.metricsPort),
		Instances: f.instances, MaxQueueSize: f.maxQueue, MaxRequestBytes: f.maxBody,
		ReadTimeout: f.readTO, WriteTimeout: f.writeTO, IdleTimeout: f.idleTO, DrainTimeout: f.drain,
		ModelControl: f.control, PythonInterpreters: f.python, Runtime: &ro, Logger: log,
	}
	if opts.Instances == 0 {
		opts.Instances = defaultInstances(log)
	}
	log.Info("starting", "version", serve.Version, "repository", f.repo, "instances", opts.Instances)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := serve.New(ctx, opts)
	if s == nil {
		return err
	}
	if err != nil {
		// Models that loaded serve; the index tells which did not.
		log.Error("some models did not load", "err", err)
	}
	if err := s.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-s.Serving():
		if err != nil {
			log.Error("listener failed", "err", err)
		}
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), f.drain)
	defer cancel()
	return s.Shutdown(sctx)
}

// applyConfigFile sets the flags the command line did not set from a
// JSON object of flag values.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg fileConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for k, v := range cfg {
		f := fs.Lookup(k)
		if f == nil || k == "config" {
			return fmt.Errorf("%s: %q is not a flag of gosr serve", path, k)
		}
		if set[k] {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			s = strconv.FormatBool(x)
		default:
			return fmt.Errorf("%s: %q: a string, number or boolean", path, k)
		}
		if err := f.Value.Set(s); err != nil {
			return fmt.Errorf("%s: %q: %w", path, k, err)
		}
	}
	return nil
}
