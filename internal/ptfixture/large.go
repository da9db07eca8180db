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

// LargeDir returns a directory holding the --large archives (resnet18,
// mobilenet_v2) and their manifest: $GOSR_PT_CACHE if set, else
// <user cache dir>/gosr/pt-<hash of the generator>. It runs
// scripts/make_pt_testdata.py --large-only there when the manifest is
// missing or from another version of the scripts (the hash covers
// make_pt_testdata.py and pt_models.py, so any change to either, such as
// the pt_managed_bytes figures, makes a new directory and remakes the
// fixtures there); test binaries running in
// parallel wait on a lock file instead of generating twice. It skips t
// when no Python with torch and torchvision is found, or with -short.
func LargeDir(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("ptfixture: large TorchScript fixtures are not made with -short")
	}
	want, err := GeneratorSHA256()
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("GOSR_PT_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = filepath.Join(os.TempDir(), "gosr-cache")
		}
		dir = filepath.Join(base, "gosr", "pt-"+want[:16])
	}
	if fresh(dir, want) {
		return dir
	}
	py, err := FindPython("torch", "torchvision")
	if err != nil {
		t.Skipf("ptfixture: cannot make the large TorchScript fixtures: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("ptfixture: cache for large fixtures: %v", err)
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
	ctx, cancel := context.WithTimeout(context.Background(), generateTimeout)
	defer cancel()
	script := filepath.Join(repoRoot(), "scripts", "make_pt_testdata.py")
	cmd := exec.CommandContext(ctx, py, script, dir, "--large-only")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Logf("ptfixture: making the large TorchScript fixtures in %s", dir)
	if err := cmd.Run(); err != nil {
		t.Fatalf("ptfixture: %s %s %s --large-only: %v\n%s", py, script, dir, err, out.String())
	}
	if !fresh(dir, want) {
		t.Fatalf("ptfixture: %s --large-only wrote no manifest for this generator in %s\n%s", script, dir, out.String())
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
	if p := os.Getenv("GOSR_PYTHON"); p != "" {
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
