package loaders

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// An OpCall is a call of an op in an archive's serialized code.
type OpCall struct {
	Op     string // qualified: "aten::lstm", "torchvision::nms"
	Source string // "code/__torch__/...py:LINE:COL"
}

// Serialized TorchScript code calls ATen ops as torch.NAME(...) and
// others as ops.NS.NAME(...) (the printer's form, which is regular).
var (
	atenCall = regexp.MustCompile(`\btorch\.([A-Za-z_][A-Za-z0-9_]*)\(`)
	nsCall   = regexp.MustCompile(`\bops\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\(`)
)

// CodeOpCalls lists the op calls in the code of the TorchScript archive
// at path, in file and line order, as the text shows them: including
// calls in branches the loader would fold away, and without resolving
// overloads. It is for diagnosis where Load fails (srbench check): which
// ops a model's code uses, even when it cannot be compiled.
func CodeOpCalls(path string) ([]OpCall, error) {
	a, err := OpenArchive(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	var recs []string
	for _, r := range a.Records() {
		if strings.HasPrefix(r, "code/") && strings.HasSuffix(r, ".py") {
			recs = append(recs, r)
		}
	}
	sort.Strings(recs)
	var out []OpCall
	for _, r := range recs {
		b, err := a.Record(r)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %s: %w", a.Name(), r, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		for line := 1; sc.Scan(); line++ {
			text := sc.Text()
			for _, m := range atenCall.FindAllStringSubmatchIndex(text, -1) {
				out = append(out, OpCall{Op: "aten::" + text[m[2]:m[3]], Source: fmt.Sprintf("%s:%d:%d", r, line, m[0]+1)})
			}
			for _, m := range nsCall.FindAllStringSubmatchIndex(text, -1) {
				out = append(out, OpCall{Op: text[m[2]:m[3]] + "::" + text[m[4]:m[5]], Source: fmt.Sprintf("%s:%d:%d", r, line, m[0]+1)})
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("archive %s: %s: %w", a.Name(), r, err)
		}
	}
	return out, nil
}
