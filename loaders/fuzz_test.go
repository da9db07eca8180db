package loaders_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosr/gosr/internal/hostile/gen"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/loaders"
)

// FuzzLoadBytes feeds whole archives to LoadBytes and ParseTorchSave with
// the default Options: nothing may panic (or crash the process, which
// fails the fuzzer too), and a bad archive is an error that names it.
// Seeds: small real archives (TorchScript, frozen and not, and torch.save
// files), the hostile archives of internal/hostile at sizes a fuzzer can
// mutate quickly, and a few corruptions of a real one.
func FuzzLoadBytes(f *testing.F) {
	var real [][]byte
	for _, pattern := range []string{
		filepath.Join("testdata", "pickle", "*.pt"),
		filepath.Join("testdata", "torchsave", "*.pt"),
		filepath.Join(ptfixture.Committed(), "control_flow.scripted*.pt"),
		filepath.Join(ptfixture.Committed(), "mlp.traced_frozen.pt"),
	} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				real = append(real, b)
				f.Add(b)
			}
		}
	}
	f.Add(gen.ScriptArchive())
	for _, use := range gen.DeepTupleUses {
		f.Add(gen.DeepTupleArchive(20_000, use, true))
	}
	f.Add(gen.MemoStackArchive(50_000))
	f.Add(gen.CodeBombArchive(2 << 20))
	f.Add(gen.TorchZip(
		gen.ZipEntry{Name: "data.pkl", Data: gen.StoragePickle(64, 0, []int64{1 << 32, 1 << 32, 64}, []int64{0, 0, 1})},
		gen.ZipEntry{Name: "data/0", Data: make([]byte, 256)},
		gen.ZipEntry{Name: "code/__torch__.py", Data: []byte("class M(Module):\n")},
	))
	f.Add(gen.TorchZip(gen.ZipEntry{Name: "data.pkl", Data: gen.SharedTuplePickle(40)}))
	for _, b := range real[:min(len(real), 2)] {
		f.Add(b[:len(b)/2]) // truncated: no central directory
		flip := append([]byte(nil), b...)
		for i := 64; i < len(flip); i += 97 {
			flip[i] ^= 0x5a
		}
		f.Add(flip)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.pt"
		check := func(what string, err error) {
			if err == nil {
				return
			}
			msg := err.Error()
			if !strings.Contains(msg, name) {
				t.Errorf("%s: the error does not name the archive: %s", what, msg)
			}
			if strings.Contains(msg, "internal error") {
				t.Errorf("%s: a recovered panic: %s", what, msg)
			}
		}
		m, err := loaders.LoadBytes(name, data)
		check("LoadBytes", err)
		if err == nil {
			if m.Graph == nil {
				t.Fatal("LoadBytes: no error and no graph")
			}
			if err := m.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
		_, err = loaders.ParseTorchSave(name, data)
		check("ParseTorchSave", err)
	})
}
