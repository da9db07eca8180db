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
	// Long and deep code (internal/hostile generates the bigger ones):
	// flat chains parse, nesting beyond the limit is an error.
	for _, s := range []string{
		"y = " + strings.TrimSuffix(strings.Repeat("x + ", 20_000), " + ") + "\n",
		"y = x" + strings.Repeat(".relu()", 20_000) + "\n",
		"y = x" + strings.Repeat("[0]", 20_000) + "\n",
		"y = " + strings.TrimSuffix(strings.Repeat("b and ", 20_000), " and ") + "\n",
		"y = " + strings.TrimSuffix(strings.Repeat("a < ", 20_000), " < ") + "\n",
		"y = " + strings.Repeat("f(", 600) + "x" + strings.Repeat(")", 600) + "\n",
		"y = " + strings.Repeat("- ", 2000) + "x\n",
		"y = " + strings.Repeat("(", 600) + "x" + strings.Repeat(")", 600) + "\n",
		"y = " + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "\n",
		"if a:\n  pass\n" + strings.Repeat("elif a:\n  pass\n", 2000),
		nestedIfs(600),
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

// nestedIfs is n if statements nested in one another.
func nestedIfs(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", i) + "if a:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "pass\n")
	return b.String()
}
