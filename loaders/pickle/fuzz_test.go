package pickle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUnpickle checks that no input makes the unpickler panic (the
// recover in Unpickle reports one as an "internal error") or run away.
// The seed corpus in testdata/fuzz/FuzzUnpickle holds pickles of every
// protocol and real PyTorch data.pkl files; the Python fixtures are added.
func FuzzUnpickle(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pkl"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	allowAll := func(m, n string) (any, error) {
		if g, err := BuiltinGlobal(m, n); err == nil {
			return g, nil
		}
		return pointClass{}, nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Unpickle(data, &Options{
			Name:           "fuzz",
			Global:         allowAll,
			PersistentLoad: func(pid any) (any, error) { return pid, nil },
			Buffers:        [][]byte{[]byte("b")},
		})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
	})
}
