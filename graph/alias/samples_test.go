package alias

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
)

func sample(t *testing.T, name string) (*graph.Graph, map[string]*graph.Value) {
	src, err := os.ReadFile("../testdata/" + name + ".ir")
	require.NoError(t, err)
	g, err := graph.Parse(string(src), &graph.ParseOptions{AllowUnboundTensors: true})
	require.NoError(t, err)
	vs := map[string]*graph.Value{}
	for _, v := range g.Inputs() {
		vs[v.DebugName()] = v
	}
	g.Walk(func(n *graph.Node) {
		for _, sb := range n.Blocks {
			for _, v := range sb.Inputs() {
				vs[v.DebugName()] = v
			}
		}
		for _, v := range n.Outputs {
			vs[v.DebugName()] = v
		}
	})
	return g, vs
}

// Checks on graphs PyTorch printed (graph/testdata, see
// scripts/make_ir_samples.py).
func TestSamples(t *testing.T) {
	tests := []struct {
		sample                          string
		mayAlias                        []pair
		input, output, writers, escapes map[string]bool
	}{
		{
			sample: "containers_frozen",
			// %22 = mul in a loop, stored into the returned dict %out.1;
			// %a.1, %b.1 unpack chunk(%x.1); %31 = add(%a.1, %b.1).
			mayAlias: []pair{{"a.1", "x.1", true}, {"31", "a.1", false}, {"opt.7", "opt.1", true}, {"22", "31", false}},
			input:    map[string]bool{"a.1": true, "22": false, "31": false, "opt.7": true},
			// %x.1 may be the same tensor as the input %opt.1, which is returned.
			output:  map[string]bool{"22": true, "31": true, "out.1": true, "x.1": true},
			writers: map[string]bool{"out.1": true, "22": false, "31": false},
			escapes: map[string]bool{"22": true, "31": true, "x.1": true},
		},
		{
			sample: "control_frozen",
			// %22 = mul in the loop body, appended to %13; %33 = cat(%13).
			mayAlias: []pair{{"22", "y", false}, {"33", "22", false}, {"y", "y.1", true}, {"y", "y.3", true}},
			output:   map[string]bool{"33": true, "22": false},
			writers:  map[string]bool{"13": true, "22": false, "y": false},
			escapes:  map[string]bool{"22": true, "33": false},
			input:    map[string]bool{"y": false, "22": false},
		},
		{
			sample:   "attn_frozen",
			mayAlias: []pair{{"17", "k.3", true}, {"s", "s.1", true}, {"s", "s.5", true}, {"ret.1", "s", false}},
			input:    map[string]bool{"mask.7": true, "17": false, "ret.1": false},
			output:   map[string]bool{"69": true, "27": false, "17": false},
			writers:  map[string]bool{"x.1": false, "s": false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			g, vs := sample(t, tt.sample)
			d := Analyze(g)
			get := func(name string) *graph.Value {
				v, ok := vs[name]
				require.True(t, ok, "no value %%%s", name)
				return v
			}
			for _, p := range tt.mayAlias {
				assert.Equal(t, p.want, d.MayAlias(get(p.a), get(p.b)), "MayAlias(%s, %s)", p.a, p.b)
			}
			for name, want := range tt.input {
				assert.Equal(t, want, d.MayAliasGraphInput(get(name)), "MayAliasGraphInput(%s)", name)
			}
			for name, want := range tt.output {
				assert.Equal(t, want, d.MayAliasGraphOutput(get(name)), "MayAliasGraphOutput(%s)", name)
			}
			for name, want := range tt.writers {
				assert.Equal(t, want, d.HasWriters(get(name)), "HasWriters(%s)", name)
			}
			for name, want := range tt.escapes {
				assert.Equal(t, want, d.EscapesToContainer(get(name)), "EscapesToContainer(%s)", name)
			}
		})
	}
}
