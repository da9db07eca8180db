package serve

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gosr/gosr/serve/configpb"
)

// The platforms a config.pbtxt may name for a gosr model: Triton's two
// names for TorchScript, and gosr's own for torch.package archives.
var platforms = map[string]bool{"": true, "pytorch_libtorch": true, "pytorch_torchscript": true, "pytorch": true, "gosr": true, "torch_package": true}

// LoadConfig reads a model's config.pbtxt (protobuf text format, Triton's
// ModelConfig). Fields that gosr does not read (optimization, sequence
// batching, ...) are skipped; warnings name them, so that a Triton
// repository loads with a log line instead of an error.
func LoadConfig(path string) (cfg *configpb.ModelConfig, warnings []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseConfig(path, b)
}

// ParseConfig is LoadConfig of text read from name.
func ParseConfig(name string, text []byte) (*configpb.ModelConfig, []string, error) {
	cfg := &configpb.ModelConfig{}
	var warnings []string
	if err := prototext.Unmarshal(text, cfg); err != nil {
		// Parse again skipping unknown fields: if that succeeds, the
		// first error named a field gosr does not read.
		cfg = &configpb.ModelConfig{}
		if err2 := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, cfg); err2 != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err2)
		}
		warnings = append(warnings, fmt.Sprintf("%s: skipping what gosr does not read (%v)", name, err))
	}
	if err := checkConfig(cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, warnings, nil
}

func checkConfig(c *configpb.ModelConfig) error {
	var errs []error
	if !platforms[c.Platform] {
		errs = append(errs, fmt.Errorf("platform %q: gosr serves pytorch_libtorch (TorchScript) and torch_package models", c.Platform))
	}
	if c.Backend != "" && c.Backend != "pytorch" && c.Backend != "gosr" {
		errs = append(errs, fmt.Errorf("backend %q: gosr serves pytorch models", c.Backend))
	}
	if c.MaxBatchSize < 0 {
		errs = append(errs, fmt.Errorf("max_batch_size %d is negative", c.MaxBatchSize))
	}
	// Inputs and outputs share one namespace: a name is declared once.
	seen := map[string]bool{}
	tensor := func(what string, i int, name string, dt configpb.DataType, dims []int64) {
		if name == "" {
			errs = append(errs, fmt.Errorf("%s %d has no name", what, i))
		}
		if seen[name] {
			errs = append(errs, fmt.Errorf("%s %q is declared twice", what, name))
		}
		seen[name] = true
		if _, err := dtypeOfConfig(dt); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", what, name, err))
		}
		errs = append(errs, checkDims(what, name, dims))
	}
	for i, in := range c.Input {
		tensor("input", i, in.Name, in.DataType, in.Dims)
	}
	for i, out := range c.Output {
		tensor("output", i, out.Name, out.DataType, out.Dims)
	}
	for _, g := range c.InstanceGroup {
		if g.Count < 0 {
			errs = append(errs, fmt.Errorf("instance_group count %d is negative", g.Count))
		}
		if g.Kind == configpb.ModelInstanceGroup_KIND_GPU {
			errs = append(errs, errors.New("instance_group kind KIND_GPU: gosr serve runs models on the CPU"))
		}
	}
	if d := c.DynamicBatching; d != nil {
		if c.MaxBatchSize == 0 {
			errs = append(errs, errors.New("dynamic_batching needs max_batch_size > 0"))
		}
		for _, p := range d.PreferredBatchSize {
			if p <= 0 || p > c.MaxBatchSize {
				errs = append(errs, fmt.Errorf("preferred_batch_size %d is not in [1, max_batch_size %d]", p, c.MaxBatchSize))
			}
		}
	}
	return errors.Join(errs...)
}

func checkDims(what, name string, dims []int64) error {
	for _, d := range dims {
		if d < -1 {
			return fmt.Errorf("%s %q: dims %v: a dimension is -1 (any) or at least 0", what, name, dims)
		}
	}
	return nil
}

// parameter is the config's string parameter key, or def.
func parameter(c *configpb.ModelConfig, key, def string) string {
	if p, ok := c.GetParameters()[key]; ok && strings.TrimSpace(p.GetStringValue()) != "" {
		return strings.TrimSpace(p.GetStringValue())
	}
	return def
}
