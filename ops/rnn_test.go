package ops_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// The recurrent ops' results are checked against PyTorch by the rnn_*
// fixtures (TestPyTorchOps: nn.LSTM/GRU/RNN and their cells frozen, so
// with constant, prepacked weights, and the functional ops with the
// weights as inputs). These tests cover what fixtures cannot: steady runs
// allocate nothing, bad arguments are errors; and the benchmark.

func rnnRand(r *rand.Rand, sizes ...int) *ivalue.Tensor {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.NormFloat64() * 0.3)
	}
	return ivalue.F32Tensor(d, sizes...)
}

type rnnCall struct {
	op                   string // lstm, gru, rnn_tanh, rnn_relu
	seq, batch, in, hid  int
	layers               int
	bi, bf, packed, bias bool
	proj                 int
	constParams          bool
	train                bool
	dropout              float64
}

func (c rnnCall) gates() int {
	switch c.op {
	case "lstm":
		return 4
	case "gru":
		return 3
	}
	return 1
}

// rnnParams makes PyTorch's flat weights for c.
func rnnParams(r *rand.Rand, c rnnCall) []*ivalue.Tensor {
	dirs := 1
	if c.bi {
		dirs = 2
	}
	gh, p := c.gates()*c.hid, c.hid
	if c.proj > 0 {
		p = c.proj
	}
	var ws []*ivalue.Tensor
	for l := 0; l < c.layers; l++ {
		in := c.in
		if l > 0 {
			in = dirs * p
		}
		for d := 0; d < dirs; d++ {
			ws = append(ws, rnnRand(r, gh, in), rnnRand(r, gh, p))
			if c.bias {
				ws = append(ws, rnnRand(r, gh), rnnRand(r, gh))
			}
			if c.proj > 0 {
				ws = append(ws, rnnRand(r, p, c.hid))
			}
		}
	}
	return ws
}

func tensorList(ts []*ivalue.Tensor) ivalue.IValue {
	items := make([]ivalue.IValue, len(ts))
	for i, t := range ts {
		items[i] = iv(t)
	}
	return ivalue.NewList(items...)
}

// rnnNode builds the aten::<op> node of c with random data.
func rnnNode(t testing.TB, c rnnCall) (*ops.ProcessedNode, error) {
	r := rand.New(rand.NewPCG(1, 2))
	dirs := 1
	if c.bi {
		dirs = 2
	}
	p := c.hid
	if c.proj > 0 {
		p = c.proj
	}
	h := rnnRand(r, c.layers*dirs, c.batch, p)
	var hx ivalue.IValue = iv(h)
	hxType := graph.Tensor
	if c.op == "lstm" {
		hx = tensorList([]*ivalue.Tensor{h, rnnRand(r, c.layers*dirs, c.batch, c.hid)})
		hxType = graph.ListOf(graph.Tensor)
	}
	var lead []ivalue.IValue
	var leadT []*graph.Type
	switch {
	case c.packed:
		// lengths seq, seq-1, ... (at least 1) over the batch
		var bs []int64
		rows := 0
		for t := 0; t < c.seq; t++ {
			n := 0
			for b := 0; b < c.batch; b++ {
				if max(c.seq-b, 1) > t {
					n++
				}
			}
			bs = append(bs, int64(n))
			rows += n
		}
		lead = []ivalue.IValue{iv(rnnRand(r, rows, c.in)), iv(ivalue.I64Tensor(bs, len(bs)))}
		leadT = []*graph.Type{graph.Tensor, graph.Tensor}
	case c.bf:
		lead = []ivalue.IValue{iv(rnnRand(r, c.batch, c.seq, c.in))}
		leadT = []*graph.Type{graph.Tensor}
	default:
		lead = []ivalue.IValue{iv(rnnRand(r, c.seq, c.batch, c.in))}
		leadT = []*graph.Type{graph.Tensor}
	}
	in := append(lead, hx, tensorList(rnnParams(r, c)), ivB(c.bias), ivI(int64(c.layers)), ivF(c.dropout), ivB(c.train), ivB(c.bi))
	types := append(leadT, hxType, graph.ListOf(graph.Tensor), graph.Bool, graph.Int, graph.Float, graph.Bool, graph.Bool)
	if !c.packed {
		in = append(in, ivB(c.bf))
		types = append(types, graph.Bool)
	}
	constant := make([]bool, len(in))
	for i := range in {
		constant[i] = !holdsTensor(in[i])
	}
	constant[len(lead)+1] = c.constParams
	outs := []*graph.Type{graph.Tensor, graph.Tensor}
	if c.op == "lstm" {
		outs = append(outs, graph.Tensor)
	}
	return buildNode(t, "aten::"+c.op, in, types, outs, constant)
}

func rnnCellNode(t testing.TB, op string, batch, in, hid int, constW bool) (*ops.ProcessedNode, error) {
	r := rand.New(rand.NewPCG(3, 4))
	g := map[string]int{"lstm": 4, "gru": 3}[op]
	if g == 0 {
		g = 1
	}
	var hx ivalue.IValue = iv(rnnRand(r, batch, hid))
	hxType := graph.Tensor
	if op == "lstm" {
		hx = tensorList([]*ivalue.Tensor{rnnRand(r, batch, hid), rnnRand(r, batch, hid)})
		hxType = graph.ListOf(graph.Tensor)
	}
	inputs := []ivalue.IValue{iv(rnnRand(r, batch, in)), hx, iv(rnnRand(r, g*hid, in)), iv(rnnRand(r, g*hid, hid)), iv(rnnRand(r, g*hid)), iv(rnnRand(r, g*hid))}
	opt := graph.OptionalOf(graph.Tensor)
	types := []*graph.Type{graph.Tensor, hxType, graph.Tensor, graph.Tensor, opt, opt}
	outs := []*graph.Type{graph.Tensor}
	if op == "lstm" {
		outs = append(outs, graph.Tensor)
	}
	return buildNode(t, "aten::"+op+"_cell", inputs, types, outs, []bool{false, false, constW, constW, constW, constW})
}

func TestRNNSteadyAllocs(t *testing.T) {
	for _, c := range []rnnCall{
		{op: "lstm", seq: 5, batch: 3, in: 7, hid: 9, layers: 2, bi: true, bf: true, bias: true, constParams: true},
		{op: "lstm", seq: 5, batch: 3, in: 7, hid: 9, layers: 3, bias: true},
		{op: "lstm", seq: 5, batch: 4, in: 7, hid: 9, layers: 2, bi: true, packed: true, bias: true, proj: 4, constParams: true},
		{op: "gru", seq: 5, batch: 3, in: 7, hid: 9, layers: 2, bi: true, bias: true, constParams: true},
		{op: "gru", seq: 5, batch: 4, in: 7, hid: 9, layers: 1, bi: true, packed: true, constParams: true},
		{op: "rnn_tanh", seq: 5, batch: 3, in: 7, hid: 9, layers: 2, bi: true, bf: true, bias: true, constParams: true},
		{op: "rnn_relu", seq: 5, batch: 1, in: 7, hid: 9, layers: 1, bias: true},
	} {
		p, err := rnnNode(t, c)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, ops.OutVariant, p.Kind)
		require.NoError(t, p.Run(), "%+v", c)
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = p.Run() }), "%+v", c)
	}
	r := rand.New(rand.NewPCG(5, 6))
	lengths := iv(ivalue.I64Tensor([]int64{5, 3, 3, 1}, 4))
	pack, err := buildNode(t, "aten::_pack_padded_sequence", []ivalue.IValue{iv(rnnRand(r, 4, 6, 3)), lengths, ivB(true)},
		[]*graph.Type{graph.Tensor, graph.Tensor, graph.Bool}, []*graph.Type{graph.Tensor, graph.Tensor}, nil)
	require.NoError(t, err)
	pad, err := buildNode(t, "aten::_pad_packed_sequence", []ivalue.IValue{iv(rnnRand(r, 12, 3)), iv(ivalue.I64Tensor([]int64{4, 3, 3, 1, 1}, 5)), ivB(false), ivF(-1), ivI(7)},
		[]*graph.Type{graph.Tensor, graph.Tensor, graph.Bool, graph.Float, graph.Int}, []*graph.Type{graph.Tensor, graph.Tensor}, nil)
	require.NoError(t, err)
	for _, p := range []*ops.ProcessedNode{pack, pad} {
		require.NoError(t, p.Run())
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = p.Run() }), p.Node.Kind)
	}
	for _, op := range []string{"lstm", "gru", "rnn_tanh", "rnn_relu"} {
		for _, constW := range []bool{true, false} {
			p, err := rnnCellNode(t, op, 3, 7, 9, constW)
			require.NoError(t, err, op)
			require.NoError(t, p.Run(), op)
			assert.Zero(t, testing.AllocsPerRun(10, func() { _ = p.Run() }), "%s const %v", op, constW)
		}
	}
}

func TestRNNBadArguments(t *testing.T) {
	ok := rnnCall{op: "lstm", seq: 4, batch: 3, in: 5, hid: 6, layers: 2, bias: true, constParams: true}
	// Each case breaks one input of a good call.
	for _, c := range []struct {
		name  string
		input int
		value ivalue.IValue
		msg   string
	}{
		{"params count", 2, tensorList(rnnParams(rand.New(rand.NewPCG(1, 1)), rnnCall{op: "lstm", in: 5, hid: 6, layers: 1, bias: true})), "incorrect number of RNN parameters"},
		{"input rank", 0, iv(ivalue.NewTensor(ivalue.Float32, 4, 5)), "3 dims"},
		{"input size", 0, iv(ivalue.NewTensor(ivalue.Float32, 4, 3, 6)), "w_ih"},
		{"input dtype", 0, iv(ivalue.NewTensor(ivalue.Float64, 4, 3, 5)), "float32"},
		{"empty sequence", 0, iv(ivalue.NewTensor(ivalue.Float32, 0, 3, 5)), "at least one step"},
		{"hx batch", 1, tensorList([]*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 2, 4, 6), ivalue.NewTensor(ivalue.Float32, 2, 4, 6)}), "hidden size"},
		{"hx count", 1, tensorList([]*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 2, 3, 6)}), "two hidden states"},
		{"training dropout", 6, ivB(true), "dropout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			call := ok
			if c.name == "training dropout" {
				call.dropout = 0.5
			}
			p, err := rnnNode(t, call)
			require.NoError(t, err)
			p.Values[p.In[c.input]] = c.value
			err = p.Run()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	t.Run("packed batch sizes", func(t *testing.T) {
		p, err := rnnNode(t, rnnCall{op: "gru", seq: 3, batch: 3, in: 5, hid: 6, layers: 1, packed: true, bias: true})
		require.NoError(t, err)
		for _, bs := range [][]int64{{1, 2, 3}, {3, 0, 3}, {3, 2, 2}} {
			p.Values[p.In[1]] = iv(ivalue.I64Tensor(bs, 3))
			assert.Error(t, p.Run(), "batch_sizes %v", bs)
		}
	})
	t.Run("pack lengths", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, c := range []struct {
			lengths []int64
			msg     string
		}{
			{[]int64{3, 4, 1}, "decreasing order"},
			{[]int64{3, 2, 0}, "greater than 0"},
			{[]int64{6, 2, 1}, "exceeds the sequence length"},
			{[]int64{3, 2}, "batch_size"},
		} {
			p, err := buildNode(t, "aten::_pack_padded_sequence", []ivalue.IValue{iv(rnnRand(r, 5, 3, 2)), iv(ivalue.I64Tensor(c.lengths, len(c.lengths))), ivB(false)},
				[]*graph.Type{graph.Tensor, graph.Tensor, graph.Bool}, []*graph.Type{graph.Tensor, graph.Tensor}, nil)
			require.NoError(t, err)
			assert.ErrorContains(t, p.Run(), c.msg, "lengths %v", c.lengths)
		}
	})
	t.Run("pad total_length", func(t *testing.T) {
		p, err := buildNode(t, "aten::_pad_packed_sequence", []ivalue.IValue{iv(ivalue.NewTensor(ivalue.Float32, 4, 2)), iv(ivalue.I64Tensor([]int64{2, 1, 1}, 3)), ivB(false), ivF(0), ivI(2)},
			[]*graph.Type{graph.Tensor, graph.Tensor, graph.Bool, graph.Float, graph.Int}, []*graph.Type{graph.Tensor, graph.Tensor}, nil)
		require.NoError(t, err)
		assert.ErrorContains(t, p.Run(), "total_length")
	})
	t.Run("cell input rank", func(t *testing.T) {
		p, err := rnnCellNode(t, "gru", 3, 5, 6, true)
		require.NoError(t, err)
		p.Values[p.In[0]] = iv(ivalue.NewTensor(ivalue.Float32, 5))
		assert.ErrorContains(t, p.Run(), "2-d input")
	})
}

// BenchmarkLSTM2LayerBi: nn.LSTM(64, 128, num_layers=2,
// bidirectional=True) over seq 32, batch 8, frozen (constant weights).
func BenchmarkLSTM2LayerBi(b *testing.B) {
	p, err := rnnNode(b, rnnCall{op: "lstm", seq: 32, batch: 8, in: 64, hid: 128, layers: 2, bi: true, bias: true, constParams: true})
	require.NoError(b, err)
	require.NoError(b, p.Run())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = p.Run()
	}
}
