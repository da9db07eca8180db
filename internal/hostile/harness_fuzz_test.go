package hostile

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeFuzzListsEveryFuzzer: make fuzz (and so CI) runs every fuzzer in
// the repository, and each it lists exists.
func TestMakeFuzzListsEveryFuzzer(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^FUZZERS := \\\n((?:\t.*\n)+)`).FindSubmatch(mk)
	require.NotNil(t, m, "no FUZZERS list in the Makefile")
	var listed []string
	for _, line := range strings.Split(string(m[1]), "\n") {
		if f := strings.TrimSpace(strings.TrimSuffix(line, "\\")); f != "" {
			listed = append(listed, f)
		}
	}
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	var found []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, f := range decl.FindAllSubmatch(src, -1) {
			found = append(found, "./"+filepath.ToSlash(rel)+":"+string(f[1]))
		}
		return nil
	}))
	slices.Sort(listed)
	slices.Sort(found)
	assert.Equal(t, found, listed, "the Makefile's FUZZERS and the repository's fuzzers")
}
