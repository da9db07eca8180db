// Package tscode reads the TorchScript code that torch.jit.save writes under
// code/ in an archive (the Python subset PyTorch's PythonPrint emits) and
// compiles it into gosr's graph IR.
//
// The parser (lexer.go, parser.go) turns a source file into the syntax tree
// below; the compiler (compile*.go) resolves names, calls and types against
// the module objects from data.pkl and PyTorch's op schemas.
//
// The tree's depth is bounded by the parser for brackets, right operands
// and blocks, but not along left-nested chains (BinOp.X, Attribute.X,
// Call.Func, Subscript.X) or elif chains (If.Else), which are as deep as
// they are long (up to a statement's token limit, or the file, for elif):
// code that walks the tree follows those in loops (see limits.go).
package tscode

// Pos is a place in a source file: the archive entry and a 1-based line and
// column.
type Pos struct {
	File      string
	Line, Col int
}

// File is one parsed source file, e.g. code/__torch__/torch/nn/modules/linear.py.
type File struct {
	Name string // archive entry
	Body []Stmt // top level: Import, ClassDef, FuncDef, Assign (rare)
}

// Node is any syntax tree node.
type Node interface{ At() Pos }

// Stmt is a statement.
type Stmt interface {
	Node
	stmt()
}

// Expr is an expression (also used for type annotations: Tensor,
// List[int], Optional[Tensor], Tuple[Tensor, Tensor],
// __torch__.torch.nn.modules.linear.Linear, Final[int], NoneType).
type Expr interface {
	Node
	expr()
}

// ---- statements

// Import is `import a.b.c` (PyTorch writes `import __torch__.x.y`).
type Import struct {
	Pos
	Names []string // dotted names
}

// ClassDef is `class Name(Bases): body`; the body holds AnnAssign
// (attribute declarations, `momentum : Final[float] = 0.1`), Assign
// (`__parameters__ = ["weight", ]`), FuncDef (methods) and Pass.
type ClassDef struct {
	Pos
	Name  string
	Bases []Expr
	Body  []Stmt
}

// FuncDef is a function or method.
type FuncDef struct {
	Pos
	Name       string
	Decorators []Expr
	Params     []*Param
	Returns    Expr // nil when not annotated
	Body       []Stmt
}

// Param is one parameter: `name: Type = default`.
type Param struct {
	Pos
	Name    string
	Type    Expr // nil when not annotated
	Default Expr // nil when none
}

// ExprStmt is an expression evaluated for its effect.
type ExprStmt struct {
	Pos
	X Expr
}

// Assign is `t1 = t2 = value`; a target is a Name, Tuple/List (unpacking),
// Attribute (`self.x = v`) or Subscript (`l[0] = v`).
type Assign struct {
	Pos
	Targets []Expr
	Value   Expr
}

// AugAssign is `target op= value` (Op without the "=": "+", "-", ...).
type AugAssign struct {
	Pos
	Target Expr
	Op     string
	Value  Expr
}

// AnnAssign is `target : Type` or `target : Type = value`.
type AnnAssign struct {
	Pos
	Target Expr
	Type   Expr
	Value  Expr // nil when absent
}

// If is if/elif/else; an elif is an If alone in Else.
type If struct {
	Pos
	Cond Expr
	Body []Stmt
	Else []Stmt // nil when absent
}

// For is `for target in iter: body`.
type For struct {
	Pos
	Target Expr
	Iter   Expr
	Body   []Stmt
}

// While is `while cond: body`.
type While struct {
	Pos
	Cond Expr
	Body []Stmt
}

// Return is `return` or `return value`.
type Return struct {
	Pos
	Value Expr // nil for a bare return
}

// Raise is `raise exc`.
type Raise struct {
	Pos
	Exc Expr // nil for a bare raise
}

// Assert is `assert cond, msg`.
type Assert struct {
	Pos
	Cond Expr
	Msg  Expr // nil when absent
}

// Pass, Break and Continue are the simple statements of their names.
type Pass struct{ Pos }
type Break struct{ Pos }
type Continue struct{ Pos }

// Delete is `del targets`.
type Delete struct {
	Pos
	Targets []Expr
}

// With is `with items: body` (kept so the compiler can reject it by line).
type With struct {
	Pos
	Items []Expr
	Vars  []Expr // per item: the target after "as", nil when absent (added by the parser)
	Body  []Stmt
}

// ---- expressions

// Name is an identifier.
type Name struct {
	Pos
	ID string
}

// ConstKind says which literal a Const holds.
type ConstKind uint8

const (
	ConstNone ConstKind = iota
	ConstBool
	ConstInt
	ConstFloat
	ConstString
	ConstEllipsis
)

// Const is a literal. Integers beyond int64 are an error at parse time.
type Const struct {
	Pos
	Kind  ConstKind
	Bool  bool
	Int   int64
	Float float64
	Str   string // decoded (escapes resolved)
}

// Attribute is `x.attr`.
type Attribute struct {
	Pos
	X    Expr
	Attr string
}

// Keyword is `name=value` in a call.
type Keyword struct {
	Pos
	Name  string
	Value Expr
}

// Call is `fn(args, kw=value)`.
type Call struct {
	Pos
	Func     Expr
	Args     []Expr
	Keywords []*Keyword
}

// Subscript is `x[index]`; a multi-dimensional index is a Tuple whose
// elements may be Slices.
type Subscript struct {
	Pos
	X     Expr
	Index Expr
}

// Slice is `lo:hi:step` inside a subscript; absent parts are nil.
type Slice struct {
	Pos
	Lo, Hi, Step Expr
}

// Tuple is `(a, b)` or `a, b` (also `()` and `(a,)`).
type Tuple struct {
	Pos
	Elts []Expr
}

// List is `[a, b]`.
type List struct {
	Pos
	Elts []Expr
}

// Dict is `{k: v, ...}`.
type Dict struct {
	Pos
	Keys, Values []Expr
}

// BinOp is `x op y`; Op is one of + - * / // % ** @ & | ^ << >>.
type BinOp struct {
	Pos
	Op   string
	X, Y Expr
}

// UnaryOp is `op x`; Op is one of - + ~ not.
type UnaryOp struct {
	Pos
	Op string
	X  Expr
}

// BoolOp is `a and b and c` or `a or b` (Op "and" / "or").
type BoolOp struct {
	Pos
	Op     string
	Values []Expr
}

// Compare is a comparison chain `x op1 y1 op2 y2`; ops are == != < <= > >=
// is, "is not", in, "not in".
type Compare struct {
	Pos
	X   Expr
	Ops []string
	Ys  []Expr
}

// IfExp is `then if cond else els`.
type IfExp struct {
	Pos
	Cond, Then, Else Expr
}

// ListComp is `[elt for target in iter]` (TorchScript allows it; PyTorch
// rarely prints it).
type ListComp struct {
	Pos
	Elt, Target, Iter Expr
}

// At returns the node's position.
func (p Pos) At() Pos { return p }

func (*Import) stmt()    {}
func (*ClassDef) stmt()  {}
func (*FuncDef) stmt()   {}
func (*ExprStmt) stmt()  {}
func (*Assign) stmt()    {}
func (*AugAssign) stmt() {}
func (*AnnAssign) stmt() {}
func (*If) stmt()        {}
func (*For) stmt()       {}
func (*While) stmt()     {}
func (*Return) stmt()    {}
func (*Raise) stmt()     {}
func (*Assert) stmt()    {}
func (*Pass) stmt()      {}
func (*Break) stmt()     {}
func (*Continue) stmt()  {}
func (*Delete) stmt()    {}
func (*With) stmt()      {}

func (*Name) expr()      {}
func (*Const) expr()     {}
func (*Attribute) expr() {}
func (*Call) expr()      {}
func (*Subscript) expr() {}
func (*Slice) expr()     {}
func (*Tuple) expr()     {}
func (*List) expr()      {}
func (*Dict) expr()      {}
func (*BinOp) expr()     {}
func (*UnaryOp) expr()   {}
func (*BoolOp) expr()    {}
func (*Compare) expr()   {}
func (*IfExp) expr()     {}
func (*ListComp) expr()  {}
