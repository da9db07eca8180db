package loaders_test

import (
	"archive/zip"
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// rezip copies a zip, letting edit change (or drop, returning nil) entries
// by their name without the archive's folder.
func rezip(t *testing.T, src []byte, edit func(rec string, data []byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		var data bytes.Buffer
		_, err = data.ReadFrom(rc)
		require.NoError(t, err)
		rc.Close()
		rec := f.Name[strings.IndexByte(f.Name, '/')+1:]
		out := edit(rec, data.Bytes())
		if out == nil {
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write(out)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func replaceIn(entry, old, new string) func(string, []byte) []byte {
	return func(rec string, data []byte) []byte {
		if rec == entry {
			return bytes.Replace(data, []byte(old), []byte(new), 1)
		}
		return data
	}
}

// TestLoadBadArchives: each corruption is an error that names the archive
// entry or line of code and what is supported; nothing panics.
func TestLoadBadArchives(t *testing.T) {
	path := ptfixture.Committed() + "/mlp.scripted.pt"
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	const linear = "code/__torch__/torch/nn/modules/linear.py"
	cases := []struct {
		name string
		data func() []byte
		want []string
	}{
		{"truncated zip", func() []byte { return good[:len(good)/2] }, []string{"bad.pt"}},
		{"not a zip", func() []byte { return []byte("this is not an archive") }, []string{"bad.pt"}},
		{"missing storage record", func() []byte {
			return rezip(t, good, func(rec string, d []byte) []byte {
				if rec == "data/0" {
					return nil
				}
				return d
			})
		}, []string{"data/0"}},
		{"short storage record", func() []byte {
			return rezip(t, good, func(rec string, d []byte) []byte {
				if rec == "data/0" {
					return d[:4]
				}
				return d
			})
		}, []string{"data/0"}},
		{"unknown global in data.pkl", func() []byte {
			return rezip(t, good, replaceIn("data.pkl", "collections\nOrderedDict", "os\nsystem"))
		}, []string{"data.pkl", "os.system", "not supported"}},
		{"missing code", func() []byte {
			return rezip(t, good, func(rec string, d []byte) []byte {
				if rec == linear {
					return nil
				}
				return d
			})
		}, []string{linear}},
		{"unknown op", func() []byte {
			return rezip(t, good, replaceIn(linear, "torch.linear(", "torch.no_such_op("))
		}, []string{linear + ":", "unknown operator aten::no_such_op"}},
		{"wrong argument types", func() []byte {
			return rezip(t, good, replaceIn(linear, "torch.linear(input, weight, bias)", "torch.linear(input, 1.5, bias)"))
		}, []string{linear + ":", "no overload of aten::linear takes (Tensor, float, Tensor)"}},
		{"unsupported statement", func() []byte {
			return rezip(t, good, replaceIn(linear, "    return torch.linear", "    del weight\n    return torch.linear"))
		}, []string{linear + ":", "statement Delete is not supported"}},
		{"syntax error", func() []byte {
			return rezip(t, good, replaceIn(linear, "torch.linear(input, weight, bias)", "torch.linear(input, weight, bias"))
		}, []string{linear + ":"}},
		{"module attribute assigned in a branch, then read", func() []byte {
			// Straight-line assignments are run-local rebindings (modattr.go);
			// one in a branch cannot be merged at compile time.
			return rezip(t, good, replaceIn(linear, "    return torch.linear(input, weight, bias)",
				"    if torch.gt(torch.numel(input), 0):\n      self.weight = weight\n    else:\n      pass\n    w2 = self.weight\n    return torch.linear(input, w2, bias)"))
		}, []string{linear + ":", "module attribute weight is read after an assignment inside a branch or loop"}},
		{"undefined name", func() []byte {
			return rezip(t, good, replaceIn(linear, "torch.linear(input, weight, bias)", "torch.linear(input, weight, bogus)"))
		}, []string{linear + ":", "name bogus is not defined"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loaders.LoadBytes("bad.pt", tc.data())
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	// A torch.save file is not a TorchScript archive.
	_, err = loaders.Load(ptfixture.Committed() + "/mlp.inputs.pt")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ReadTorchSave")
}

// TestLoadedModelBadInputs: a wrong shape or dtype at run time is an error
// naming the op and the line of serialized code it came from.
func TestLoadedModelBadInputs(t *testing.T) {
	m, err := loaders.Load(ptfixture.Committed() + "/mlp.scripted.pt")
	require.NoError(t, err)
	defer m.Close()
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	require.NoError(t, err)
	r := sm.NewRuntime()
	for name, in := range map[string]*ivalue.Tensor{
		"wrong shape": ivalue.NewTensor(ivalue.Float32, 1, 63),
		"wrong dtype": ivalue.NewTensor(ivalue.Int64, 1, 64),
	} {
		_, err := r.Run(ivalue.FromTensor(in))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "aten::linear", name)
		assert.Contains(t, err.Error(), "code/__torch__/torch/nn/modules/linear.py:", name)
	}
	// The runtime is still usable.
	_, err = r.Run(ivalue.FromTensor(ivalue.NewTensor(ivalue.Float32, 1, 64)))
	require.NoError(t, err)
}
