package tscode

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/gosr/gosr/graph"
)

// schemas.txt is torch._C._jit_get_all_schemas() of PyTorch 1.13, one per
// line in registration order, which is the order TorchScript tries
// overloads in (gen_schemas.py remakes it).
//
//go:embed schemas.txt
var schemaText string

var (
	schemaOnce sync.Once
	schemaByOp map[string][]*graph.Schema // "aten::add" -> overloads in order
)

// overloads returns the schemas of a qualified op name, in PyTorch's order.
// Schemas gosr's schema parser does not read (complex, RRef, ...) are
// left out: no gosr kernel takes those types anyway.
func overloads(op string) []*graph.Schema {
	schemaOnce.Do(func() {
		schemaByOp = map[string][]*graph.Schema{}
		for _, line := range strings.Split(schemaText, "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			s, err := graph.ParseSchema(line)
			if err != nil {
				continue
			}
			schemaByOp[s.Name] = append(schemaByOp[s.Name], s)
		}
	})
	return schemaByOp[op]
}
