package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/serve/configpb"
)

// Model states, as the repository extension's index reports them.
const (
	StateReady       = "READY"
	StateUnavailable = "UNAVAILABLE"
	StateLoading     = "LOADING"
	StateUnloading   = "UNLOADING"
)

// repository holds the models of a model repository directory laid out
// as Triton's: DIR/<model>/config.pbtxt (optional) and
// DIR/<model>/<version>/model.pt.
//
// A model's versions are published together as one versionSet through
// an atomic pointer: a request takes the set it finds, and a reload
// builds a whole new set before it swaps it in, so no request ever sees
// a half-loaded model, and a failed load leaves the old set serving.
// See [Reload without failed requests] in doc.go.
type repository struct {
	dir  string
	opts loadOptions
	log  *slog.Logger
	m    *metrics

	drain time.Duration // how long a retired version waits for its requests

	mu      sync.Mutex // guards entries; held only briefly
	entries map[string]*modelEntry
}

// modelEntry is one model name: its published versions and its state.
type modelEntry struct {
	name    string
	current atomic.Pointer[versionSet]
	loadMu  sync.Mutex // one load or unload of the model at a time

	stateMu sync.Mutex
	state   string
	reason  string
}

type versionSet struct {
	versions []*modelVersion // ascending version
}

func (e *modelEntry) setState(state, reason string) {
	e.stateMu.Lock()
	e.state, e.reason = state, reason
	e.stateMu.Unlock()
}

func (e *modelEntry) getState() (string, string) {
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	return e.state, e.reason
}

func newRepository(dir string, o loadOptions, log *slog.Logger, m *metrics, drain time.Duration) *repository {
	return &repository{dir: dir, opts: o, log: log, m: m, drain: drain, entries: map[string]*modelEntry{}}
}

func (r *repository) entry(name string, create bool) *modelEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[name]
	if e == nil && create {
		e = &modelEntry{name: name, state: StateUnavailable}
		r.entries[name] = e
	}
	return e
}

// names lists the model directories of the repository.
func (r *repository) names() ([]string, error) {
	des, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("model repository: %w", err)
	}
	var out []string
	for _, d := range des {
		if d.IsDir() && d.Name()[0] != '.' {
			out = append(out, d.Name())
		}
	}
	return out, nil
}

// validName refuses model names that would leave the repository.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name || name[0] == '.' {
		return errorf(CodeInvalidArgument, "%q is not a model name", name)
	}
	return nil
}

// load (re)loads model name from the repository and publishes it.
func (r *repository) load(ctx context.Context, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	dir := filepath.Join(r.dir, name)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return errorf(CodeNotFound, "model %q is not in the repository %s", name, r.dir)
	}
	e := r.entry(name, true)
	e.loadMu.Lock()
	defer e.loadMu.Unlock()
	old := e.current.Load()
	if old == nil {
		e.setState(StateLoading, "")
	}
	start := time.Now()
	set, err := r.loadSet(ctx, name, dir)
	if err != nil {
		if old == nil {
			e.setState(StateUnavailable, err.Error())
		} else {
			e.setState(StateReady, "the last load failed, the previous versions serve: "+err.Error())
		}
		r.log.Error("model load failed", "model", name, "err", err)
		return err
	}
	e.current.Store(set)
	e.setState(StateReady, "")
	// Warm-up leaves each runtime's first-run tensors behind (the
	// second run moved to the planned slab): give them back now rather
	// than at the collector's pace, so that resident memory says what
	// the model costs.
	debug.FreeOSMemory()
	vs := make([]int64, len(set.versions))
	for i, v := range set.versions {
		vs[i] = v.version
	}
	r.log.Info("model ready", "model", name, "versions", vs, "instances", set.versions[0].instances,
		"max_batch_size", set.versions[0].maxBatch, "dynamic_batching", set.versions[0].batch != nil, "took", time.Since(start))
	if old != nil {
		go r.retire(old)
	}
	return nil
}

// retire frees the versions of a set that is no longer published, once
// the requests that hold them are done.
func (r *repository) retire(set *versionSet) {
	ctx, cancel := context.WithTimeout(context.Background(), r.drain)
	defer cancel()
	for _, v := range set.versions {
		if err := v.retire(ctx); err != nil {
			r.log.Warn("retired model version still busy", "model", v.name, "version", v.version, "err", err)
		}
		v.metrics.drop()
	}
}

// loadSet loads the versions of the model in dir that its version
// policy selects (by default the newest).
func (r *repository) loadSet(ctx context.Context, name, dir string) (*versionSet, error) {
	cfg := &configpb.ModelConfig{}
	cfgPath := filepath.Join(dir, "config.pbtxt")
	if _, err := os.Stat(cfgPath); err == nil {
		c, warnings, err := LoadConfig(cfgPath)
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "model %q: %w", name, err)
		}
		for _, w := range warnings {
			r.log.Warn("config.pbtxt", "model", name, "warning", w)
		}
		cfg = c
	}
	if cfg.Name != "" && cfg.Name != name {
		return nil, errorf(CodeInvalidArgument, "model %q: config.pbtxt names it %q", name, cfg.Name)
	}
	versions, err := selectVersions(dir, cfg.GetVersionPolicy())
	if err != nil {
		return nil, errorf(CodeNotFound, "model %q: %w", name, err)
	}
	set := &versionSet{}
	for _, ver := range versions {
		v, err := loadVersion(ctx, name, ver, filepath.Join(dir, strconv.FormatInt(ver, 10)), cfg, r.opts)
		if err != nil {
			for _, l := range set.versions {
				l.free()
			}
			return nil, err
		}
		v.metrics = r.m.forModel(name, v.versionString())
		r.m.instances.WithLabelValues(name, v.versionString()).Set(float64(v.instances))
		r.m.batchObs.WithLabelValues(name, v.versionString()).Set(float64(v.maxBatch))
		r.m.managedBytes.WithLabelValues(name, v.versionString()).Set(float64(v.managedBytes()))
		set.versions = append(set.versions, v)
	}
	return set, nil
}

// selectVersions lists the numeric version directories of dir that the
// policy selects, ascending.
func selectVersions(dir string, p *configpb.ModelVersionPolicy) ([]int64, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var all []int64
	for _, d := range des {
		if !d.IsDir() {
			continue
		}
		if v, err := strconv.ParseInt(d.Name(), 10, 64); err == nil && v >= 0 {
			all = append(all, v)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no version directory (%s/<number>/model.pt)", dir)
	}
	slices.Sort(all)
	switch {
	case p.GetAll() != nil:
		return all, nil
	case p.GetSpecific() != nil:
		var out []int64
		for _, v := range p.GetSpecific().GetVersions() {
			if !slices.Contains(all, v) {
				return nil, fmt.Errorf("version_policy names version %d; %s has %v", v, dir, all)
			}
			out = append(out, v)
		}
		slices.Sort(out)
		return out, nil
	}
	n := 1
	if p.GetLatest() != nil && p.GetLatest().GetNumVersions() > 0 {
		n = int(p.GetLatest().GetNumVersions())
	}
	return all[max(0, len(all)-n):], nil
}

// unload takes model name out of service; its requests finish first.
func (r *repository) unload(name string) error {
	if err := validName(name); err != nil {
		return err
	}
	e := r.entry(name, false)
	if e == nil || e.current.Load() == nil {
		return errorf(CodeNotFound, "model %q is not loaded", name)
	}
	e.loadMu.Lock()
	defer e.loadMu.Unlock()
	old := e.current.Swap(nil)
	if old == nil {
		return errorf(CodeNotFound, "model %q is not loaded", name)
	}
	e.setState(StateUnloading, "")
	r.retire(old)
	e.setState(StateUnavailable, "unloaded")
	r.log.Info("model unloaded", "model", name)
	return nil
}

// get returns the version of model name (the newest for ""), acquired:
// the caller releases it.
func (r *repository) get(name, version string) (*modelVersion, error) {
	e := r.entry(name, false)
	for range 100 {
		if e == nil {
			return nil, errorf(CodeNotFound, "model %q is not in the repository", name)
		}
		set := e.current.Load()
		if set == nil {
			state, reason := e.getState()
			if reason != "" {
				reason = ": " + reason
			}
			return nil, errorf(CodeUnavailable, "model %q is not ready (%s%s)", name, state, reason)
		}
		v := set.versions[len(set.versions)-1]
		if version != "" {
			n, err := strconv.ParseInt(version, 10, 64)
			if err != nil {
				return nil, errorf(CodeInvalidArgument, "model %q: version %q is not a number", name, version)
			}
			v = nil
			for _, c := range set.versions {
				if c.version == n {
					v = c
				}
			}
			if v == nil {
				return nil, errorf(CodeNotFound, "model %q has no version %s loaded", name, version)
			}
		}
		if v.acquire() {
			return v, nil
		}
		// Retired between the load and the acquire: a newer set is
		// published already.
	}
	return nil, errorf(CodeUnavailable, "model %q is being reloaded; retry", name)
}

// versions lists the loaded versions of model name.
func (r *repository) versions(name string) []string {
	e := r.entry(name, false)
	if e == nil {
		return nil
	}
	set := e.current.Load()
	if set == nil {
		return nil
	}
	out := make([]string, len(set.versions))
	for i, v := range set.versions {
		out[i] = v.versionString()
	}
	return out
}

// IndexEntry is one model of the repository index.
type IndexEntry struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
}

// index lists every model of the repository directory and every model
// loaded, with its state.
func (r *repository) index(readyOnly bool) ([]IndexEntry, error) {
	names, err := r.names()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	for n := range r.entries {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	r.mu.Unlock()
	sort.Strings(names)
	var out []IndexEntry
	for _, n := range names {
		e := r.entry(n, false)
		if e == nil {
			if !readyOnly {
				out = append(out, IndexEntry{Name: n, State: StateUnavailable})
			}
			continue
		}
		state, reason := e.getState()
		if set := e.current.Load(); set != nil {
			for _, v := range set.versions {
				out = append(out, IndexEntry{Name: n, Version: v.versionString(), State: StateReady, Reason: reason})
			}
			continue
		}
		if !readyOnly {
			out = append(out, IndexEntry{Name: n, State: state, Reason: reason})
		}
	}
	return out, nil
}

// loadAll loads every model of the repository; the errors of those that
// fail are joined (the others serve).
func (r *repository) loadAll(ctx context.Context) error {
	names, err := r.names()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if err := r.load(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ready reports whether every model that was asked for is ready.
func (r *repository) ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.current.Load() == nil {
			if s, _ := e.getState(); s == StateLoading {
				return false
			}
		}
	}
	return true
}

// close retires every model, waiting for their requests.
func (r *repository) close() {
	r.mu.Lock()
	entries := make([]*modelEntry, 0, len(r.entries))
	for _, e := range r.entries {
		entries = append(entries, e)
	}
	r.mu.Unlock()
	for _, e := range entries {
		e.loadMu.Lock()
		if old := e.current.Swap(nil); old != nil {
			r.retire(old)
		}
		e.setState(StateUnavailable, "server stopped")
		e.loadMu.Unlock()
	}
}
