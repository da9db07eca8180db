"""Turns a torch module (or IR text) plus inputs into a gosr fixture:
<name>.ir (the graph as PyTorch prints it) and <name>.safetensors holding
  c0, c1, ...  every tensor-typed prim::Constant, in printing order (nodes in
               order, recursing into blocks), taken with node.t('value');
               PyTorch prints one-element tensors as {v} and big ones as
               <Tensor>, so the Go parser takes all of them from this list;
  in0, ...     the (tensor) inputs;
  out0, ...    the outputs flattened depth-first; int/float/bool outputs are
               0-d int64/float64/bool tensors; metadata "outputs" records the
               structure, e.g. "tuple(tensor,list(tensor,int))".
"""
import os
import zlib

import torch

import st_io

SCRIPTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(SCRIPTS_DIR)


def seed_for(name):
    torch.manual_seed(zlib.crc32(name.encode()))


def tensor_constants(block_or_graph):
    out = []
    for n in block_or_graph.nodes():
        if n.kind() == "prim::Constant" and n.outputsSize() == 1 and \
                n.output().type().isSubtypeOf(torch._C.TensorType.get()) and n.hasAttribute("value"):
            out.append(n.t("value"))
        for b in n.blocks():
            out.extend(tensor_constants(b))
    return out


def flatten(v):
    """Returns (structure string, list of tensors)."""
    if isinstance(v, torch.Tensor):
        return "tensor", [v]
    if isinstance(v, bool):
        return "bool", [torch.tensor(v, dtype=torch.bool)]
    if isinstance(v, int):
        return "int", [torch.tensor(v, dtype=torch.int64)]
    if isinstance(v, float):
        return "float", [torch.tensor(v, dtype=torch.float64)]
    if isinstance(v, (tuple, list)):
        parts, ts = [], []
        for x in v:
            s, t = flatten(x)
            parts.append(s)
            ts.extend(t)
        kind = "tuple" if isinstance(v, tuple) else "list"
        return "%s(%s)" % (kind, ",".join(parts)), ts
    raise TypeError("unsupported output %r" % type(v))


def graph_text(g):
    # Source locations name this checkout's absolute path; make them relative
    # so that the committed files do not depend on where they were made.
    s = str(g)
    return s.replace(REPO_DIR + "/", "")


def write_fixture(ir_path, st_path, ir_text, consts, inputs, outputs, meta):
    structure, outs = flatten(outputs)
    entries = [("c%d" % i, t) for i, t in enumerate(consts)]
    entries += [("in%d" % i, t) for i, t in enumerate(inputs)]
    entries += [("out%d" % i, t) for i, t in enumerate(outs)]
    md = {"outputs": structure, "torch_version": torch.__version__}
    md.update({k: str(v) for k, v in meta.items()})
    with open(ir_path, "w") as f:
        f.write(ir_text if ir_text.endswith("\n") else ir_text + "\n")
    st_io.write(st_path, entries, md)
    # Self-check the writer.
    back, _ = st_io.read(st_path)
    for name, t in entries:
        assert torch.equal(back[name], t.detach().contiguous()) or \
            (t.is_floating_point() and torch.allclose(back[name], t, equal_nan=True)), name


def freeze(module):
    sm = torch.jit.script(module.eval())
    fm = torch.jit.freeze(sm)
    expand_tensor_lists(fm.graph)
    return fm


def expand_tensor_lists(block, g=None):
    """Rewrites each Tensor[] constant (freezing folds nn.LSTM's
    _flat_weights into one, printed as [<Tensors>], which the IR text
    cannot carry) into tensor constants and a prim::ListConstruct, the
    form gosr's loader gives frozen archives."""
    g = g or block
    for n in list(block.nodes()):
        for b in n.blocks():
            expand_tensor_lists(b, g)
        if n.kind() != "prim::Constant" or n.output().type().str() != "Tensor[]":
            continue
        lc = g.create("prim::ListConstruct", 1)
        lc.output().setType(n.output().type())
        lc.insertAfter(n)
        for t in n.output().toIValue():
            c = g.insertConstant(t)
            c.node().moveBefore(lc)
            lc.addInput(c)
        n.output().replaceAllUsesWith(lc.output())
        n.destroy()


def emit_module(ir_path, st_path, module, inputs, rtol, atol, noncontig, meta=None):
    for t in inputs:
        assert isinstance(t, torch.Tensor), "inputs must be tensors"
    fm = freeze(module)
    with torch.no_grad():
        outputs = fm(*[t.clone() for t in inputs])
        eager = module(*[t.clone() for t in inputs])
    try:
        check_same(outputs, eager)
    except AssertionError as e:
        raise AssertionError("%s: frozen module disagrees with eager: %s" % (ir_path, e))
    g = fm.graph.copy()
    # Static Runtime drops the unused module input of a frozen graph
    # (RemoveSelfFromGraphInput); do it here so that in0.. are the graph inputs.
    self_in = g.inputs().__next__()
    assert self_in.type().kind() == "ClassType" and not self_in.uses(), "self still used after freezing"
    g.eraseInput(0)
    text = graph_text(g)
    consts = tensor_constants(g)
    m = {"graph_kind": "frozen_module", "noncontig": "1" if noncontig else "0", "rtol": rtol, "atol": atol}
    m.update(meta or {})
    write_fixture(ir_path, st_path, text, consts, inputs, outputs, m)
    return text


def check_same(a, b):
    sa, ta = flatten(a)
    sb, tb = flatten(b)
    # TorchScript returns lists where eager Python returns tuples (chunk, split).
    assert sa.replace("list", "tuple") == sb.replace("list", "tuple"), (sa, sb)
    for x, y in zip(ta, tb):
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
        if x.is_floating_point():
            assert torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True), (x, y)
        else:
            assert torch.equal(x, y), (x, y)
