#!/usr/bin/python3
"""Writes real TorchScript code samples for loaders/tscode's parser tests.

Run from the repository root (or via `make tscode-samples`):
    /usr/bin/python3 scripts/make_tscode_samples.py
It needs PyTorch (Debian python3-torch, 1.13); torchvision
(python3-torchvision) is used when present. Each model is saved with
torch.jit.save and the archive's code/**/*.py entries are copied to
  loaders/tscode/testdata/code/<model>/<path under code/>
skipping files already written with the same content (nn.Linear and the
like appear in many models), and beside each <file>.py a <file>.py.golden:
the tree that CPython's own ast module reads from it, printed in the form
loaders/tscode/parser_test.go prints the Go parser's tree, so the Go test
checks the parser against Python. With --goldens-only it rewrites just the
goldens of the samples present.
"""
import argparse
import ast
import io
import math
import os
import re
import shutil
import sys
import zipfile
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.nn as nn

OUT = os.path.join("loaders", "tscode", "testdata", "code")


class Pair(NamedTuple):
    first: torch.Tensor
    second: Optional[torch.Tensor]


@torch.jit.interface
class Scorer(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class Doubler(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


@torch.jit.script
def free_fn(xs: List[int], k: int = -3) -> int:
    total = 0
    for i, v in enumerate(xs):
        if v > k:
            total += i * v
        elif v == k:
            total -= 1
        else:
            total = total // 2
    return total


class Syntax(nn.Module):
    """Exercises the syntax PythonPrint emits: unpacking, Optional
    refinement, loops with break/continue, strings with escapes, dicts,
    list comprehensions, NamedTuple, interfaces, exported methods."""
    __constants__ = ["k", "label"]
    scorer: Scorer

    def __init__(self):
        super().__init__()
        self.k = 3
        self.label = "q\"uote's \\ and\ttab"
        self.lin = nn.Linear(4, 4)
        self.scorer = Doubler()
        self.names: List[str] = ["a", "b"]
        self.table: Dict[str, int] = {"x": 1, "y": 2}

    @torch.jit.export
    def helper(self, x: torch.Tensor, scale: float = 2.0) -> Tuple[torch.Tensor, int]:
        return x * scale, x.dim()

    @torch.jit.export
    def pair(self, x: torch.Tensor) -> Pair:
        return Pair(x, None if x.dim() > 1 else x)

    def forward(self, x: torch.Tensor, y: Optional[torch.Tensor] = None, n: int = 5) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = {}
        s = "tab\there \"quoted\" 'single' back\\slash nl\n"
        assert x.dim() == 2, "need 2-D, got " + str(x.dim())
        a, b = self.helper(x, 2.0)
        if y is not None and b > 1 or n < 0:
            a = a + y if y is not None else a
        elif not (n in [1, 2, 3]):
            a = -a
        else:
            a = a ** 2
        i = 0
        while i < n and i != 7:
            i += 1
            if i == 3:
                continue
            if i > 100:
                break
        vals = [float(j) * 0.5 for j in range(n)]
        m = float("inf")
        for v in vals:
            m = min(m, v)
        idx = n // 2 % 3 << 1 | 1 & 7 ^ 2
        z = x[:, 0:2:1, None] if x.dim() == 3 else x[..., :1]
        out["a"] = a
        out["z"] = z
        out[s] = self.lin(x)
        out[self.label] = self.scorer.forward(x)
        lst: List[int] = [free_fn([1, 2, 3]), self.table["x"]]
        lst.append(idx)
        del lst[0]
        if 0 <= idx < 10:
            out["ok"] = x
        ii = 0x1F + 0o7 + 0b11 - idx + 1e10
        if ii >= 1e10 and ii != -1.5e-7:
            raise RuntimeError("too big {}".format(ii))
        p = self.pair(x)
        out["p"] = p.first
        return out


def code_files(module):
    buf = io.BytesIO()
    torch.jit.save(module, buf)
    z = zipfile.ZipFile(buf)
    for n in sorted(z.namelist()):
        parts = n.split("/")
        if len(parts) > 2 and parts[1] == "code" and n.endswith(".py"):
            yield "/".join(parts[2:]), z.read(n)


def models():
    yield "syntax", torch.jit.script(Syntax())
    yield "transformer", torch.jit.script(nn.TransformerEncoderLayer(8, 2, 16))
    yield "lstm", torch.jit.script(nn.LSTM(4, 4))
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(4, 2)).eval()
    yield "cnn_frozen", torch.jit.freeze(torch.jit.script(cnn))
    yield "cnn_traced", torch.jit.trace(cnn, torch.zeros(1, 3, 4, 4))
    try:
        import torchvision
    except ImportError:
        print("torchvision not installed: skipping its models", file=sys.stderr)
        return
    yield "resnet18", torch.jit.script(torchvision.models.resnet18())


# ---- the golden form, mirrored by treeString in parser_test.go

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
          ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
          ast.LShift: "<<", ast.RShift: ">>"}
UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
          ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def quote(s):
    out = []
    for ch in s:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif 0x20 <= ord(ch) < 0x7F:
            out.append(ch)
        else:
            out.append("\\u{%x}" % ord(ch))
    return '"' + "".join(out) + '"'


def float_str(v):
    """Go's strconv.FormatFloat(v, 'e', -1, 64): shortest digits, e+XX."""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if math.isnan(v):
        return "nan"
    mant, _, exp = ("%r" % v).partition("e")
    sign = "-" if mant.startswith("-") else ""
    mant = mant.lstrip("-")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    e10 = int(exp or 0) + len(whole) - 1
    if digits == "":
        return sign + "0e+00"
    e10 -= len(whole + frac) - len((whole + frac).lstrip("0"))
    digits = digits.rstrip("0")
    m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return "%s%se%s%02d" % (sign, m, "-" if e10 < 0 else "+", abs(e10))


def const_str(v):
    if v is None or isinstance(v, bool):
        return str(v)
    if v is Ellipsis:
        return "..."
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_str(v)
    if isinstance(v, str):
        return quote(v)
    raise ValueError("constant %r" % (v,))


def ex(e):
    if e is None:
        return ""
    t = type(e)
    if t is ast.Name:
        return e.id
    if t is ast.Constant:
        return const_str(e.value)
    if t is ast.UnaryOp and isinstance(e.op, ast.USub) and type(e.operand) is ast.Constant \
            and type(e.operand.value) in (int, float):
        return const_str(-e.operand.value)  # the Go parser folds -literal
    if t is ast.Attribute:
        return ex(e.value) + "." + e.attr
    if t is ast.Call:
        args = [ex(a) for a in e.args] + ["%s=%s" % (k.arg, ex(k.value)) for k in e.keywords]
        return ex(e.func) + "(" + ", ".join(args) + ")"
    if t is ast.Subscript:
        return ex(e.value) + "[" + ex(e.slice) + "]"
    if t is ast.Slice:
        s = ex(e.lower) + ":" + ex(e.upper)
        if e.step is not None:
            s += ":" + ex(e.step)
        return s
    if t is ast.Tuple:
        if len(e.elts) == 1:
            return "(" + ex(e.elts[0]) + ",)"
        return "(" + ", ".join(ex(x) for x in e.elts) + ")"
    if t is ast.List:
        return "[" + ", ".join(ex(x) for x in e.elts) + "]"
    if t is ast.Dict:
        return "{" + ", ".join(ex(k) + ": " + ex(v) for k, v in zip(e.keys, e.values)) + "}"
    if t is ast.BinOp:
        return "(%s %s %s)" % (ex(e.left), BINOPS[type(e.op)], ex(e.right))
    if t is ast.UnaryOp:
        if isinstance(e.op, ast.Not):
            return "(not %s)" % ex(e.operand)
        return "(%s%s)" % (UNOPS[type(e.op)], ex(e.operand))
    if t is ast.BoolOp:
        op = " and " if isinstance(e.op, ast.And) else " or "
        return "(" + op.join(ex(v) for v in e.values) + ")"
    if t is ast.Compare:
        s = "(" + ex(e.left)
        for op, y in zip(e.ops, e.comparators):
            s += " %s %s" % (CMPOPS[type(op)], ex(y))
        return s + ")"
    if t is ast.IfExp:
        return "(%s if %s else %s)" % (ex(e.body), ex(e.test), ex(e.orelse))
    if t is ast.ListComp:
        g = e.generators[0]
        return "[%s for %s in %s]" % (ex(e.elt), ex(g.target), ex(g.iter))
    raise ValueError("expression %s" % ast.dump(e))


def stmts(out, body, depth):
    for s in body:
        stmt(out, s, depth)


def stmt(out, s, depth):
    ind = "  " * depth

    def line(text, node=s):
        out.append("%s%d:%d %s" % (ind, node.lineno, node.col_offset + 1, text))

    t = type(s)
    if t is ast.Import:
        line("import " + ", ".join(a.name for a in s.names))
    elif t is ast.ClassDef:
        bases = "(" + ", ".join(ex(b) for b in s.bases) + ")" if s.bases else ""
        line("class %s%s:" % (s.name, bases))
        stmts(out, s.body, depth + 1)
    elif t is ast.FunctionDef:
        for d in s.decorator_list:
            line("@" + ex(d), d)
        args = s.args.args
        defaults = [None] * (len(args) - len(s.args.defaults)) + list(s.args.defaults)
        params = []
        for a, d in zip(args, defaults):
            p = a.arg
            if a.annotation is not None:
                p += ": " + ex(a.annotation)
            if d is not None:
                p += " = " + ex(d)
            params.append(p)
        ret = " -> " + ex(s.returns) if s.returns is not None else ""
        line("def %s(%s)%s:" % (s.name, ", ".join(params), ret))
        stmts(out, s.body, depth + 1)
    elif t is ast.Expr:
        line(ex(s.value))
    elif t is ast.Assign:
        line(" = ".join([ex(x) for x in s.targets] + [ex(s.value)]))
    elif t is ast.AugAssign:
        line("%s %s= %s" % (ex(s.target), BINOPS[type(s.op)], ex(s.value)))
    elif t is ast.AnnAssign:
        v = " = " + ex(s.value) if s.value is not None else ""
        line("%s : %s%s" % (ex(s.target), ex(s.annotation), v))
    elif t is ast.If:
        line("if %s:" % ex(s.test))
        stmts(out, s.body, depth + 1)
        if s.orelse:
            out.append(ind + "else:")
            stmts(out, s.orelse, depth + 1)
    elif t is ast.For:
        line("for %s in %s:" % (ex(s.target), ex(s.iter)))
        stmts(out, s.body, depth + 1)
    elif t is ast.While:
        line("while %s:" % ex(s.test))
        stmts(out, s.body, depth + 1)
    elif t is ast.Return:
        line("return" + (" " + ex(s.value) if s.value is not None else ""))
    elif t is ast.Raise:
        line("raise" + (" " + ex(s.exc) if s.exc is not None else ""))
    elif t is ast.Assert:
        line("assert " + ex(s.test) + (", " + ex(s.msg) if s.msg is not None else ""))
    elif t in (ast.Pass, ast.Break, ast.Continue):
        line(t.__name__.lower())
    elif t is ast.Delete:
        line("del " + ", ".join(ex(x) for x in s.targets))
    elif t is ast.With:
        items = [ex(i.context_expr) + (" as " + ex(i.optional_vars) if i.optional_vars is not None else "")
                 for i in s.items]
        line("with %s:" % ", ".join(items))
        stmts(out, s.body, depth + 1)
    else:
        raise ValueError("statement %s" % ast.dump(s))


def golden(src):
    out = []
    stmts(out, ast.parse(src).body, 0)
    return "".join(x + "\n" for x in out)


def write_goldens():
    for root, _, files in os.walk(OUT):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fp:
                    g = golden(fp.read())
                with open(path + ".golden", "w", encoding="utf-8", newline="\n") as fp:
                    fp.write(g)


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        # TorchScript prints __constants__ in set order: fix string hashing
        # so that the samples come out the same every run.
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goldens-only", action="store_true", help="rewrite the goldens only")
    if ap.parse_args().goldens_only:
        write_goldens()
        return
    torch.manual_seed(0)
    if os.path.isdir(OUT):
        for entry in os.listdir(OUT):
            p = os.path.join(OUT, entry)
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif entry.endswith(".py") or entry.endswith(".golden"):
                os.remove(p)
    seen = set()
    total = 0
    for name, module in models():
        for rel, data in code_files(module):
            # Mangled variants (linear/___torch_mangle_7.py) differ only in
            # constants: one of each kind is enough.
            key = name + ":" + re.sub(r"/___torch_mangle_\d+\.py$", "/M.py", rel)
            if data in seen or key in seen:
                continue
            seen.add(data)
            seen.add(key)
            path = os.path.join(OUT, name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            total += len(data)
            print("%6d %s" % (len(data), path))
    print("%d bytes in all" % total)
    write_goldens()


if __name__ == "__main__":
    main()
