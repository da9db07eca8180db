package graph

import (
	"testing"
)

// FuzzParse: Parse never panics; a graph it accepts verifies without
// panicking and prints to text that parses back to the same text.
func FuzzParse(f *testing.F) {
	for _, text := range samples(f) {
		f.Add(text)
	}
	f.Add("graph():\n  return ()\n")
	f.Fuzz(func(t *testing.T, src string) {
		opts := &ParseOptions{AllowUnboundTensors: true}
		g, err := Parse(src, opts)
		if err != nil {
			return
		}
		_ = g.Verify()
		_ = TensorConstantNodes(g)
		printed := g.String()
		g2, err := Parse(printed, opts)
		if err != nil {
			t.Fatalf("printed graph does not parse: %v\n%s", err, printed)
		}
		if again := g2.String(); again != printed {
			t.Fatalf("print is not stable:\n%s\n---\n%s", printed, again)
		}
	})
}
