package ptfixture

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// generateTimeout bounds one run of the script for the large models
// (about 10 s on the 2-core development machine).
const generateTimeout = 10 * time.Minute

// A generator is a script that writes a directory of archives and its
// manifest.json, cached by the hash of the files it is made from.
type generator struct {
	name    string   // for messages and the cache directory's prefix
	script  string   // relative to the repository
	args    []string // after OUTDIR
	files   []string // hashed, in order, as the script hashes them
	timeout time.Duration
	modules []string // the Python modules it needs
}

var (
	large = generator{name: "pt", script: "scripts/make_pt_testdata.py", args: []string{"--large-only"},
		files: generatorFiles, timeout: generateTimeout, modules: []string{"torch", "torchvision"}}
	// The compatibility suite: about 7 minutes on the 2-core development
	// machine.
	zoo = generator{name: "zoo", script: "scripts/make_zoo.py", files: zooGeneratorFiles,
		timeout: 40 * time.Minute, modules: []string{"torch", "torchvision"}}
)

// zooGeneratorFiles are what scripts/make_zoo.py hashes, in its order.
var zooGeneratorFiles = []string{"scripts/make_zoo.py", "scripts/make_pt_testdata.py", "scripts/zoo_models.py"}

// The environment variables the fixture caches read: test configuration,
// so read here rather than passed in (docs/environment.md).
const (
	// CacheEnv is the root of the caches of fixtures made by PyTorch.
	CacheEnv = "GOSR_PT_CACHE"
	// PythonEnv is the Python (with torch) that makes them.
	PythonEnv = "GOSR_PYTHON"
)

// CacheRoot is the directory the generated fixtures are cached under,
// each generator in a directory NAME-<hash of its scripts> of its own:
// $GOSR_PT_CACHE if set, else <user cache dir>/gosr.
func CacheRoot() string {
	if dir := os.Getenv(CacheEnv); dir != "" {
		return dir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = filepath.Join(os.TempDir(), "gosr-cache")
	}
	return filepath.Join(base, "gosr")
}

// LargeDir returns a directory holding the --large archives (resnet18,
// mobilenet_v2) and their manifest, CacheRoot()/pt-<hash of the
// generator>. It runs
// scripts/make_pt_testdata.py --large-only there when the manifest is
// missing or from another version of the scripts (the hash covers
// make_pt_testdata.py and pt_models.py, so any change to either, such as
// the pt_managed_bytes figures, makes a new directory and remakes the
// fixtures there); test binaries running in
// parallel wait on a lock file instead of generating twice. It skips t
// when no Python with torch and torchvision is found, or with -short.
func LargeDir(t testing.TB) string {
	t.Helper()
	return large.dir(t)
}

// ZooDir returns the directory of the compatibility suite
// (scripts/make_zoo.py: torchvision's and torch.nn's models, four
// variants each), made as LargeDir's are, in CacheRoot()/zoo-<hash of
// the generator>. Its manifest's cases carry
// TolScale and Family.
func ZooDir(t testing.TB) string {
	t.Helper()
	return zoo.dir(t)
}

func (gen generator) dir(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("ptfixture: the %s TorchScript fixtures are not made with -short", gen.name)
	}
	want, err := hashFiles(gen.files)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(CacheRoot(), gen.name+"-"+want[:16])
	if fresh(dir, want) {
		return dir
	}
	py, err := FindPython(gen.modules...)
	if err != nil {
		t.Skipf("ptfixture: cannot make the %s TorchScript fixtures: %v", gen.name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("ptfixture: cache for %s fixtures: %v", gen.name, err)
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		t.Fatalf("ptfixture: %v", err)
	}
	defer unlock()
	if fresh(dir, want) { // made by another test binary while we waited
		return dir
	}
	// The script writes manifest.json last (atomically), so an interrupted
	// run leaves no manifest and is redone next time.
	ctx, cancel := context.WithTimeout(context.Background(), gen.timeout)
	defer cancel()
	script := filepath.Join(repoRoot(), gen.script)
	cmd := exec.CommandContext(ctx, py, append([]string{script, dir}, gen.args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Logf("ptfixture: making the %s TorchScript fixtures in %s", gen.name, dir)
	if err := cmd.Run(); err != nil {
		t.Fatalf("ptfixture: %s %s %s %v: %v\n%s", py, script, dir, gen.args, err, out.String())
	}
	if !fresh(dir, want) {
		t.Fatalf("ptfixture: %s wrote no manifest for this generator in %s\n%s", script, dir, out.String())
	}
	return dir
}

// fresh reports whether dir has a manifest from the generator with hash want.
func fresh(dir, want string) bool {
	got, err := ManifestGenerator(dir)
	return err == nil && got == want
}

// FindPython returns the first interpreter that imports all of modules:
// $GOSR_PYTHON, then /usr/bin/python3 (Debian's python3-torch), then
// python3 on PATH.
func FindPython(modules ...string) (string, error) {
	var cands []string
	if p := os.Getenv(PythonEnv); p != "" {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	src := "import sys"
	for _, m := range modules {
		src += "; import " + m
	}
	var tried []string
	for _, p := range cands {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := exec.CommandContext(ctx, p, "-c", src).Run()
		cancel()
		if err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("no Python that imports %v (tried %v; set GOSR_PYTHON, or apt-get install python3-torch python3-torchvision)", modules, tried)
}
