package loaders_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// zooDir is the compatibility suite made by scripts/make_zoo.py
// ($GOSR_ZOO, default /tmp/zoo); tests on it skip where it is absent.
func zooDir(t *testing.T) string {
	dir := os.Getenv("GOSR_ZOO")
	if dir == "" {
		dir = "/tmp/zoo"
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Skipf("no model zoo at %s (make it with scripts/make_zoo.py)", dir)
	}
	return dir
}

// TestZooLanguage loads scripted archives whose code uses NamedTuples
// (googlenet, inception_v3), Dict module attributes and dict() (the
// segmentation models' IntermediateLayerGetter) and the attention modules'
// fast-path checks (str.find, is_autocast_enabled, unchecked_cast of None
// on paths never taken), and runs those whose kernels all exist against
// PyTorch's outputs.
func TestZooLanguage(t *testing.T) {
	dir := zooDir(t)
	for _, c := range []struct {
		archive string
		run     bool
	}{
		{"googlenet.scripted", true},
		{"googlenet.scripted_frozen", true},
		{"inception_v3.scripted", !testing.Short()},
		{"inception_v3.scripted_frozen", false},
		{"fcn_resnet50.scripted", false},
		{"deeplabv3_mobilenet_v3_large.scripted", false},
		{"lraspp_mobilenet_v3_large.scripted", false},
		{"lraspp_mobilenet_v3_large.scripted_frozen", false},
		{"vit_b_16.scripted", false},
		{"mha_self_fast.scripted", false},
		{"transformer_encoder_fast.scripted", false},
		{"embeddings.traced", true},
		{"mobilenet_v3_small.scripted", true},
	} {
		t.Run(c.archive, func(t *testing.T) {
			path := filepath.Join(dir, c.archive+".pt")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s not in the zoo", c.archive)
			}
			m, err := loaders.Load(path)
			require.NoError(t, err)
			defer m.Close()
			require.NoError(t, m.Graph.Verify())
			if !c.run {
				return
			}
			base := filepath.Join(dir, c.archive[:strings.IndexByte(c.archive, '.')])
			in, err := loaders.ReadTorchSave(base + ".inputs.pt")
			require.NoError(t, err)
			exp := base + ".expected.pt"
			if _, err := os.Stat(filepath.Join(dir, c.archive+".expected.pt")); err == nil {
				exp = filepath.Join(dir, c.archive+".expected.pt") // the variant's own structure
			}
			want, err := loaders.ReadTorchSave(exp)
			require.NoError(t, err)
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			out, err := sm.NewRuntime().Run(in.List().Items...)
			require.NoError(t, err)
			got, w := fixture.Flatten(out), fixture.Flatten([]ivalue.IValue{want})
			require.Equal(t, len(w), len(got), "outputs")
			for i := range got {
				g, e := got[i].Float64s(), w[i].Float64s()
				require.Equal(t, len(e), len(g), "output %d", i)
				mx := 1e-30
				for _, v := range e {
					mx = math.Max(mx, math.Abs(v))
				}
				for j := range g {
					assert.LessOrEqual(t, math.Abs(g[j]-e[j])/mx, 1e-4, "output %d [%d]: %v, want %v", i, j, g[j], e[j])
				}
			}
		})
	}
}
