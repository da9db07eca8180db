package pickle

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Limits of Describe: a value from a hostile pickle may be nested millions
// deep, hold millions of items or share one container many times over
// (a DAG that is exponentially large as a tree), and fmt's %v recurses
// through all of it until the Go runtime aborts on stack overflow.
const (
	describeDepth = 4   // containers printed this deep; deeper ones are "(...)"
	describeItems = 6   // items printed per container
	describeStr   = 40  // bytes of a string, bytes or integer printed
	describeLen   = 200 // about the longest description
)

// Describe returns a short, Python-like rendering of an unpickled value
// for error messages: at most describeDepth containers deep, a few items
// of each, long strings cut, about 200 bytes in all, whatever the value
// (nesting, size or sharing). Use it, never %v, for values a pickle made.
// Types it does not know are shown by their Go type.
func Describe(v any) string {
	d := describer{}
	d.value(v, 0)
	if d.cut {
		d.b.WriteString("...")
	}
	return d.b.String()
}

type describer struct {
	b   strings.Builder
	cut bool // the length budget ran out
}

func (d *describer) write(s string) {
	if d.cut {
		return
	}
	if room := describeLen - d.b.Len(); len(s) > room {
		d.b.WriteString(s[:max(room, 0)])
		d.cut = true
		return
	}
	d.b.WriteString(s)
}

func clip(s string) string {
	if len(s) > describeStr {
		return s[:describeStr] + "..."
	}
	return s
}

func (d *describer) value(v any, depth int) {
	if d.cut {
		return
	}
	switch x := v.(type) {
	case nil:
		d.write("None")
	case bool:
		if x {
			d.write("True")
		} else {
			d.write("False")
		}
	case int64:
		d.write(strconv.FormatInt(x, 10))
	case int:
		d.write(strconv.Itoa(x))
	case *big.Int:
		if x == nil {
			d.write("<nil int>")
		} else if x.BitLen() > 128 {
			d.write(fmt.Sprintf("<int of %d bits>", x.BitLen()))
		} else {
			d.write(x.String())
		}
	case float64:
		d.write(strconv.FormatFloat(x, 'g', -1, 64))
	case string:
		d.write(strconv.Quote(clip(x)))
	case []byte:
		d.write("b" + strconv.Quote(clip(string(x))))
	case Global:
		d.write(clip(x.Module + "." + x.Name))
	case Tuple:
		d.items("(", ")", []any(x), depth, len(x) == 1)
	case *List:
		if x == nil {
			d.write("<nil list>")
			return
		}
		d.items("[", "]", x.Items, depth, false)
	case *Set:
		if x == nil {
			d.write("<nil set>")
			return
		}
		name := "set"
		if x.Frozen {
			name = "frozenset"
		}
		if len(x.Items) == 0 {
			d.write(name + "()")
			return
		}
		d.items(name+"({", "})", x.Items, depth, false)
	case []int:
		// Sizes and strides read from a pickle: as many as it held.
		d.write("[")
		for i, n := range x {
			if i > 0 {
				d.write(", ")
			}
			if i == 2*describeItems {
				d.write(fmt.Sprintf("... %d items", len(x)))
				break
			}
			d.write(strconv.Itoa(n))
		}
		d.write("]")
	case *Dict:
		if x == nil {
			d.write("<nil dict>")
			return
		}
		d.dict(x, depth)
	default:
		d.write(fmt.Sprintf("<%T>", v))
	}
}

func (d *describer) items(open, close string, items []any, depth int, single bool) {
	if depth >= describeDepth && len(items) > 0 {
		d.write(open + "..." + close)
		return
	}
	d.write(open)
	for i, it := range items {
		if d.cut {
			return
		}
		if i > 0 {
			d.write(", ")
		}
		if i == describeItems {
			d.write(fmt.Sprintf("... %d items", len(items)))
			break
		}
		d.value(it, depth+1)
	}
	if single {
		d.write(",")
	}
	d.write(close)
}

func (d *describer) dict(x *Dict, depth int) {
	if depth >= describeDepth && len(x.Keys) > 0 {
		d.write("{...}")
		return
	}
	d.write("{")
	for i := range x.Keys {
		if d.cut {
			return
		}
		if i > 0 {
			d.write(", ")
		}
		if i == describeItems {
			d.write(fmt.Sprintf("... %d items", len(x.Keys)))
			break
		}
		d.value(x.Keys[i], depth+1)
		d.write(": ")
		if i < len(x.Values) {
			d.value(x.Values[i], depth+1)
		}
	}
	d.write("}")
}
