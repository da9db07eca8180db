package pickle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosr/gosr/internal/hostile/gen"
)

// FuzzUnpickle checks that no input makes the unpickler panic (the
// recover in Unpickle reports one as an "internal error") or run away,
// and that every value it returns can be described for an error. The
// seed corpus in testdata/fuzz/FuzzUnpickle holds pickles of every
// protocol and real PyTorch data.pkl files; the Python fixtures are
// added, and hostile ones: deep (a tuple nested in every place a loader
// reads one), long (memo, stack and list fillers, a huge int) and shared
// (a tuple DAG exponential as a tree).
func FuzzUnpickle(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pkl"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, use := range gen.DeepTupleUses {
		f.Add(gen.DeepTuplePickle(100_000, use))
	}
	f.Add(gen.MemoStackPickle(100_000))
	f.Add(gen.AppendPickle(100_000))
	f.Add(gen.SharedTuplePickle(64))
	f.Add(gen.StoragePickle(64, 0, []int64{1 << 32, 1 << 32, 64}, []int64{0, 0, 1}))
	f.Add(append(append([]byte{opPROTO, 2, opLONG4, 0, 0, 1, 0}, make([]byte, 1<<16)...), opSTOP))
	allowAll := func(m, n string) (any, error) {
		if g, err := BuiltinGlobal(m, n); err == nil {
			return g, nil
		}
		return pointClass{}, nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Unpickle(data, &Options{
			Name:           "fuzz",
			Global:         allowAll,
			PersistentLoad: func(pid any) (any, error) { return pid, nil },
			Buffers:        [][]byte{[]byte("b")},
		})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
		if d := Describe(v); len(d) > 256 {
			t.Fatalf("Describe gave %d bytes", len(d))
		}
	})
}
