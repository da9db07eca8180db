// Package ptfixture finds the TorchScript archives PyTorch wrote for gosr's
// loader tests and benchmarks (scripts/make_pt_testdata.py): the small ones
// committed under testdata/pt, and the large torchvision ones (resnet18,
// mobilenet_v2), which are generated into a cache on first use.
//
// Each directory holds manifest.json; a Case is one archive
// (NAME.<variant>.pt) with the inputs (NAME.inputs.pt, torch.save of a
// tuple) and the eager model's output (NAME.expected.pt, a tensor or a
// tuple/list of them) it must reproduce within RTol/ATol. Models with a
// batch dimension also have NAME.shapes.pt (Case.Shapes): the same model's
// inputs and outputs at several batch sizes, for dynamic-shape runs. Each
// case records what PyTorch's own Static Runtime made of it
// (Case.PTManagedBytes, Case.PTManagedTensors) and the peak of
// intermediate memory it really used (Case.PTPeakBytes).
package ptfixture

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
)

// Variants are the ways an archive was made, in manifest order.
var Variants = []string{"scripted", "traced", "scripted_frozen", "traced_frozen"}

// Case is one archive and what running it must give.
type Case struct {
	Model    string // e.g. "mlp"
	Variant  string // one of Variants
	Path     string // the archive, absolute
	Inputs   string // torch.save of the tuple of positional inputs, absolute
	Expected string // torch.save of the eager output, absolute
	RTol     float64
	ATol     float64
	Large    bool     // made only with --large (never committed)
	Ops      []string // node kinds of forward's graph with calls inlined, sorted
	Note     string   // e.g. that tracing specialised control flow; may be empty

	// PTManagedBytes and PTManagedTensors are what PyTorch's Static Runtime
	// (default StaticModuleOptions) reported for this archive frozen, run
	// once on Inputs: "Total memory managed: N bytes" and "Total number of
	// managed tensors: N" from StaticModule.benchmark. Its figure covers the
	// top-level block only (not prim::If/prim::Loop bodies, nor forked
	// calls). Both are 0 when it could not run the archive (Note says why).
	PTManagedBytes   int64
	PTManagedTensors int
	// PTUnmanagedPeakBytes is the peak of the memory one steady-state run
	// of that Static Runtime held beyond its plan's slab, less the outputs
	// it returned: what ops without an out variant in 1.13 (convolutions,
	// max_pool2d, embedding, ...) allocate afresh on each run, their
	// scratch included, and the plans of prim::If/prim::Loop bodies and of
	// forked calls. PTPeakBytes = PTManagedBytes + PTUnmanagedPeakBytes,
	// the intermediate memory PyTorch's Static Runtime really uses: the
	// figure to compare with a gosr plan that covers every intermediate.
	// Both are from torch.profiler's allocation events; 0 with
	// PTManagedBytes.
	PTUnmanagedPeakBytes int64
	PTPeakBytes          int64

	// TolScale, where set (the compatibility suite), replaces RTol and
	// ATol: each output tensor must match its expected one within
	// TolScale times the expected tensor's largest magnitude.
	TolScale float64
	// Family is the compatibility suite's grouping: classification,
	// segmentation, video, rnn, transformer, layers.
	Family string

	// Shapes is NAME.shapes.pt, absolute: torch.save of a list of
	// (inputs, expected) tuples, one per ShapeBatches entry, inputs
	// structured as Inputs' tuple and expected as Expected's value. Empty
	// when the model has none or this variant does not reproduce it (a
	// trace specialised to the example's sizes; Note says why).
	Shapes string
	// ShapeBatches are the batch sizes of Shapes' pairs, in order: up,
	// down, a new largest, that again, and down (e.g. 1 4 2 8 3 8 1).
	ShapeBatches []int
}

// Name is "model.variant", for subtest names.
func (c Case) Name() string { return c.Model + "." + c.Variant }

// manifestFile is the JSON the script writes.
type manifestFile struct {
	TorchVersion    string `json:"torch_version"`
	GeneratorSHA256 string `json:"generator_sha256"`
	Cases           []struct {
		Model    string   `json:"model"`
		Variant  string   `json:"variant"`
		Path     string   `json:"path"`
		Inputs   string   `json:"inputs"`
		Expected string   `json:"expected"`
		RTol     *float64 `json:"rtol"`
		ATol     *float64 `json:"atol"`
		Large    bool     `json:"large"`
		Ops      []string `json:"ops"`
		Note     string   `json:"note"`

		PTManagedBytes       int64  `json:"pt_managed_bytes"`
		PTManagedTensors     int    `json:"pt_managed_tensors"`
		PTUnmanagedPeakBytes int64  `json:"pt_unmanaged_peak_bytes"`
		PTPeakBytes          int64  `json:"pt_peak_bytes"`
		Shapes               string `json:"shapes"`
		ShapeBatches         []int  `json:"shape_batches"`

		TolScale float64 `json:"tol_scale"`
		Family   string  `json:"family"`
	} `json:"cases"`
	// Skipped lists the variants the compatibility suite's generator
	// could not make (PyTorch itself failed), with why.
	Skipped []Skipped `json:"skipped"`
}

// repoRoot is the checkout this source file is in.
func repoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Committed returns the absolute path of testdata/pt, the small archives
// kept in the repository.
func Committed() (dir string) {
	d, err := filepath.Abs(filepath.Join(repoRoot(), "testdata", "pt"))
	if err != nil {
		return filepath.Join(repoRoot(), "testdata", "pt")
	}
	return d
}

// Manifest reads dir/manifest.json. Paths in the returned cases are
// absolute; every file it names must exist.
func Manifest(dir string) ([]Case, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "manifest.json")
	if len(m.Cases) == 0 {
		return nil, fmt.Errorf("%s: no cases (run `make testdata`)", path)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	known := map[string]bool{}
	for _, v := range Variants {
		known[v] = true
	}
	seen := map[string]bool{}
	out := make([]Case, 0, len(m.Cases))
	for i, e := range m.Cases {
		where := fmt.Sprintf("%s: case %d (%s.%s)", path, i, e.Model, e.Variant)
		if e.Model == "" || e.Path == "" || e.Inputs == "" || e.Expected == "" {
			return nil, fmt.Errorf("%s: model, path, inputs and expected must all be set", where)
		}
		if !known[e.Variant] {
			return nil, fmt.Errorf("%s: variant %q is not one of %v", where, e.Variant, Variants)
		}
		if seen[e.Model+"."+e.Variant] {
			return nil, fmt.Errorf("%s: listed twice", where)
		}
		seen[e.Model+"."+e.Variant] = true
		if e.RTol == nil || e.ATol == nil || *e.RTol < 0 || *e.ATol < 0 || e.TolScale < 0 || *e.RTol+*e.ATol+e.TolScale == 0 {
			return nil, fmt.Errorf("%s: rtol and atol (or tol_scale) must be set, not negative, not all 0", where)
		}
		if e.PTManagedBytes < 0 || e.PTManagedTensors < 0 {
			return nil, fmt.Errorf("%s: pt_managed_bytes %d and pt_managed_tensors %d must not be negative",
				where, e.PTManagedBytes, e.PTManagedTensors)
		}
		if e.PTUnmanagedPeakBytes < 0 || e.PTPeakBytes != e.PTManagedBytes+e.PTUnmanagedPeakBytes {
			return nil, fmt.Errorf("%s: pt_peak_bytes %d must be pt_managed_bytes %d + pt_unmanaged_peak_bytes %d (not negative)",
				where, e.PTPeakBytes, e.PTManagedBytes, e.PTUnmanagedPeakBytes)
		}
		if (e.Shapes == "") != (len(e.ShapeBatches) == 0) {
			return nil, fmt.Errorf("%s: shapes %q and shape_batches %v go together", where, e.Shapes, e.ShapeBatches)
		}
		c := Case{Model: e.Model, Variant: e.Variant, RTol: *e.RTol, ATol: *e.ATol, Large: e.Large,
			Ops: e.Ops, Note: e.Note, PTManagedBytes: e.PTManagedBytes, PTManagedTensors: e.PTManagedTensors,
			PTUnmanagedPeakBytes: e.PTUnmanagedPeakBytes, PTPeakBytes: e.PTPeakBytes, ShapeBatches: e.ShapeBatches,
			TolScale: e.TolScale, Family: e.Family}
		for _, f := range []struct {
			name string
			rel  string
			dst  *string
		}{{"path", e.Path, &c.Path}, {"inputs", e.Inputs, &c.Inputs}, {"expected", e.Expected, &c.Expected},
			{"shapes", e.Shapes, &c.Shapes}} {
			if f.name == "shapes" && f.rel == "" {
				continue // optional
			}
			if filepath.IsAbs(f.rel) || !filepath.IsLocal(f.rel) {
				return nil, fmt.Errorf("%s: %s %q must be a file name inside the manifest's directory", where, f.name, f.rel)
			}
			*f.dst = filepath.Join(abs, f.rel)
			if _, err := os.Stat(*f.dst); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", where, f.name, err)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Skipped is a variant a generator could not make.
type Skipped struct {
	Model   string `json:"model"`
	Variant string `json:"variant"` // "*" for the whole model
	Why     string `json:"why"`
}

// ManifestSkipped returns the variants dir's generator left out, and why.
func ManifestSkipped(dir string) ([]Skipped, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	return m.Skipped, nil
}

func readManifest(dir string) (*manifestFile, error) {
	path := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing (run `make testdata`, or scripts/make_pt_testdata.py %s)", path, dir)
		}
		return nil, err
	}
	var m manifestFile
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not the manifest JSON make_pt_testdata.py writes: %w", path, err)
	}
	return &m, nil
}

// GeneratorSHA256 is what the manifest's generator_sha256 is when the
// fixtures were made by the scripts now in the checkout.
func GeneratorSHA256() (string, error) { return hashFiles(generatorFiles) }

// ZooGeneratorSHA256 is GeneratorSHA256 for scripts/make_zoo.py.
func ZooGeneratorSHA256() (string, error) { return hashFiles(zooGeneratorFiles) }

// hashFiles is the sha256 of the repository's files, in order.
func hashFiles(files []string) (string, error) {
	h := sha256.New()
	for _, p := range files {
		b, err := os.ReadFile(filepath.Join(repoRoot(), p))
		if err != nil {
			return "", fmt.Errorf("ptfixture: generator: %w", err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ManifestGenerator returns the generator_sha256 recorded in dir's manifest.
func ManifestGenerator(dir string) (string, error) {
	m, err := readManifest(dir)
	if err != nil {
		return "", err
	}
	return m.GeneratorSHA256, nil
}

// Models returns the distinct model names of cases, sorted.
func Models(cases []Case) []string {
	set := map[string]bool{}
	for _, c := range cases {
		set[c.Model] = true
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// generatorFiles are hashed, in this order, as the script hashes them.
var generatorFiles = []string{"scripts/make_pt_testdata.py", "scripts/pt_models.py"}
