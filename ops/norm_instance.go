package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
)

// aten::instance_norm, float32, with norm.go's helpers. ATen computes it
// as batch_norm over the input viewed as [1, N*C, ...] with the
// parameters repeated N times:
//
//   - use_input_stats: each (n, c) plane is normalised by its own mean
//     and biased variance (InstanceNorm in eval without
//     track_running_stats, or in training);
//   - otherwise running_mean and running_var (one per channel) are used,
//     as InstanceNorm with track_running_stats=True does in eval.
//
// use_input_stats with running stats makes ATen update the running
// buffers in place (training); that is refused, as for batch_norm.

const instanceNormSchema = "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor"

func init() {
	RegisterOut("aten::instance_norm", func(n *graph.Node) Kernel {
		if n.Matches(instanceNormSchema) {
			return instanceNormKernel
		}
		return nil
	})
	regOverwrite(instanceNormSchema, OverwriteRule{Input: 0, Safe: normSafe})
}

var instanceNormNames = newNormNames("instance_norm")

func instanceNormKernel(p *ProcessedNode) error {
	nc, err := readNormCall(p, instanceNormNames)
	if err != nil {
		return err
	}
	w, b, mean, vr, useInput, eps := nc.w, nc.b, nc.mean, nc.vr, nc.flag, nc.eps
	if !useInput && (!mean.ok || !vr.ok) {
		return Errorf("Expected running_mean and running_var to be defined when use_input_stats is false")
	}
	if useInput && (mean.ok || vr.ok) {
		return Errorf("instance_norm: use_input_stats=True with running stats (which it updates in place, as in training) is not supported")
	}
	xs, o, nb, c, inner := nc.xs, nc.o, nc.n, nc.c, nc.inner
	for n := 0; n < nb; n++ {
		for ch := 0; ch < c; ch++ {
			base := (n*c + ch) * inner
			var m, v float64
			if useInput {
				m, v = normMoments(xs, 1, base, 0, inner)
			} else {
				m, v = float64(mean.at(ch, 0)), float64(vr.at(ch, 1))
			}
			sc := float64(w.at(ch, 1)) / math.Sqrt(v+eps)
			scale := float32(sc)
			shift := float32(float64(b.at(ch, 0)) - m*sc)
			src, dst := xs[base:base+inner], o[base:base+inner]
			for i, v := range src {
				dst[i] = v*scale + shift
			}
		}
	}
	return nil
}
