"""Python fallbacks for gosr: mark a Python function as a graph node that calls
packaged Python, export one torch.package archive holding the scripted model
and the Python sources, and run that archive in PyTorch.

    import gosr_fallback as gf

    tokenize = gf.fallback("textpkg.tok:tokenize")   # or gf.fallback(fn, "(str[] texts) -> (Tensor, Tensor)")

    class Model(torch.nn.Module):
        def forward(self, texts: List[str]) -> Tensor:
            ids, offsets = tokenize(texts)            # scripts to gosr::python_call("textpkg.tok:tokenize", texts)
            ...

    gf.export("model.pt", Model(), intern=["textpkg.**"])
    out = gf.load("model.pt")(["some text"])          # the same archive, run by PyTorch

A fallback scripts to a call of the custom op
`gosr::python_call.<overload>(str fn, <args>) -> <returns>` whose first
argument is the constant "pkg.mod:qualname". The archive holds the scripted
model at model/model.pkl, the packaged sources, and __gosr__/fallbacks.json
listing the op schemas (register them before loading the model).

Values cross by the same rules as in gosr: tensors reach the function as
numpy arrays (`t.detach().numpy()`; gosr passes a buffer-protocol view), and
results are converted by the declared return type (see `_convert_result`).

The ops are defined with CONSERVATIVE alias analysis, so TorchScript treats
them as having side effects: torch.jit.freeze neither folds a call whose
arguments are all constants (it would run the Python at freeze time) nor
removes one whose results are unused.
"""
import ast
import hashlib
import importlib
import inspect
import json
import linecache
import threading
import traceback
from typing import Dict, List, Optional, Tuple  # noqa: F401 (wrapper globals)

import torch
import torch.package
from torch import Tensor

NAMESPACE = "gosr"
OP_NAME = "python_call"
MANIFEST_PACKAGE = "__gosr__"
MANIFEST_RESOURCE = "fallbacks.json"
MANIFEST_VERSION = 1
MODEL_PACKAGE = "model"
MODEL_RESOURCE = "model.pkl"
# The module the generated wrappers claim to live in: scripted code calls
# them as __torch__.gosr_fallback.<name> (a frozen model inlines them).
WRAPPER_MODULE = "gosr_fallback"

_lock = threading.RLock()
_library = None  # the one torch.library.Library("gosr", "DEF") of this process
_ops = {}  # (op name, overload) -> schema text registered in this process
_fallbacks = {}  # "pkg.mod:qualname" -> _Fallback declared in this process
_default_resolver = None  # importer of the last package loaded; None: normal import
_local = threading.local()  # .resolver while a PackagedModel runs
_function_cache = {}  # (resolver, name) -> function


# ---------------------------------------------------------------------------
# Types: one small tree for both TorchScript annotations and schema syntax.
# A type is a tuple: ("Tensor",), ("int",), ("float",), ("bool",), ("str",),
# ("List", T), ("Optional", T), ("Dict", K, V), ("Tuple", T1, T2, ...).

_SCALARS = {"Tensor", "int", "float", "bool", "str"}
_ALIASES = {
    "Tensor": "Tensor", "torch.Tensor": "Tensor",
    "int": "int", "float": "float", "bool": "bool", "str": "str",
    "List": "List", "list": "List", "typing.List": "List",
    "Tuple": "Tuple", "tuple": "Tuple", "typing.Tuple": "Tuple",
    "Dict": "Dict", "dict": "Dict", "typing.Dict": "Dict",
    "Optional": "Optional", "typing.Optional": "Optional",
}


def _parse_annotation(text, where):
    """Parses a TorchScript annotation such as "Tuple[Tensor, List[str]]"."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise TypeError(f"{where}: cannot parse type annotation {text!r}: {e}") from None

    def name_of(n):
        if isinstance(n, ast.Name):
            return n.id
        if isinstance(n, ast.Attribute):
            return f"{name_of(n.value)}.{n.attr}"
        if isinstance(n, ast.Constant) and n.value is None:
            return "None"
        raise TypeError(f"{where}: unsupported type annotation {text!r}")

    def conv(n):
        if isinstance(n, ast.Subscript):
            head = _ALIASES.get(name_of(n.value))
            args = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            args = [conv(a) for a in args]
            if head == "List" and len(args) == 1:
                return ("List", args[0])
            if head == "Optional" and len(args) == 1:
                return ("Optional", args[0])
            if head == "Dict" and len(args) == 2:
                return ("Dict", args[0], args[1])
            if head == "Tuple":
                return ("Tuple",) + tuple(args)
            raise TypeError(f"{where}: unsupported type annotation {text!r} "
                            "(want Tensor, int, float, bool, str, List, Tuple, Optional, Dict)")
        head = _ALIASES.get(name_of(n))
        if head in _SCALARS:
            return (head,)
        raise TypeError(f"{where}: unsupported type annotation {text!r} "
                        "(want Tensor, int, float, bool, str, List, Tuple, Optional, Dict)")

    return conv(node)


def _annotation_text(ann):
    """The text of a Python annotation object (string, class or typing form)."""
    if isinstance(ann, str):
        return ann
    if ann is None or ann is type(None):
        return "None"
    if isinstance(ann, type) and not getattr(ann, "__args__", None):
        if ann is torch.Tensor:
            return "Tensor"
        return ann.__qualname__
    return str(ann).replace("typing.", "").replace("torch.Tensor", "Tensor")


def _schema_type(t):
    """A type in operator schema syntax: str[], Tensor?, Dict(str, Tensor), (int, str)."""
    if t[0] in _SCALARS:
        return t[0]
    if t[0] == "List":
        return _schema_type(t[1]) + "[]"
    if t[0] == "Optional":
        return _schema_type(t[1]) + "?"
    if t[0] == "Dict":
        return f"Dict({_schema_type(t[1])}, {_schema_type(t[2])})"
    return "(" + ", ".join(_schema_type(e) for e in t[1:]) + ")"


def _annotation(t):
    """A type in TorchScript annotation syntax: List[str], Optional[Tensor]."""
    if t[0] in _SCALARS:
        return t[0]
    return f"{t[0]}[" + ", ".join(_annotation(e) for e in t[1:]) + "]"


class Signature:
    """A fallback's parameters (names and types) and return types."""

    def __init__(self, params, returns):
        self.params = params  # [(name, type)]
        self.returns = returns  # [type]; several: the function returns a tuple

    @property
    def key(self):
        """What the overload name hashes: "(<arg types>) -> (<return types>)"."""
        args = ", ".join(_schema_type(t) for _, t in self.params)
        rets = ", ".join(_schema_type(t) for t in self.returns)
        return f"({args}) -> ({rets})"

    @property
    def args_key(self):
        return tuple(_schema_type(t) for _, t in self.params)

    @property
    def overload(self):
        return "s" + hashlib.sha1(self.key.encode()).hexdigest()[:8]

    def schema(self, op_name, qualified=True):
        names = [n for n, _ in self.params]
        args = ["str fn"]
        for name, t in self.params:
            # The op's own first argument is `fn`; rename a parameter of that name.
            if name == "fn":
                name = "fn_"
                while name in names:
                    name += "_"
            args.append(f"{_schema_type(t)} {name}")
        if len(self.returns) == 1:
            rets = _schema_type(self.returns[0])
        else:
            rets = "(" + ", ".join(_schema_type(t) for t in self.returns) + ")"
        ns = f"{NAMESPACE}::" if qualified else ""
        return f"{ns}{op_name}.{self.overload}({', '.join(args)}) -> {rets}"

    @classmethod
    def from_schema(cls, text, where):
        """From "(str text, int k) -> (Tensor, Tensor)", or a whole op schema
        "gosr::python_call.sXXXXXXXX(str fn, ...) -> ..." (its `fn` included)."""
        text = text.strip()
        try:
            parsed = torch._C.parse_schema(text if not text.startswith("(") else "f" + text)
        except RuntimeError as e:
            raise TypeError(f"{where}: bad schema {text!r}: {e}") from None
        params = []
        for a in parsed.arguments:
            if a.default_value is not None or a.kwarg_only:
                raise TypeError(f"{where}: schema {text!r}: argument {a.name!r} has a default "
                                "or is keyword-only; fallbacks take positional arguments only")
            params.append((a.name, _parse_annotation(a.type.annotation_str, where)))
        returns = [_parse_annotation(r.type.annotation_str, where) for r in parsed.returns]
        return cls(params, returns)

    @classmethod
    def from_function(cls, fn, where):
        """From the function's annotations (strings such as "Tensor" are fine:
        packaged code does not import torch)."""
        sig = inspect.signature(fn)
        params = []
        for p in sig.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(f"{where}: parameter {p.name!r} is {p.kind.description}; "
                                "fallbacks take positional parameters only")
            if p.annotation is p.empty:
                raise TypeError(f"{where}: parameter {p.name!r} has no type annotation "
                                "(annotate it, or pass schema=)")
            params.append((p.name, _parse_annotation(_annotation_text(p.annotation),
                                                     f"{where}, parameter {p.name!r}")))
        if sig.return_annotation is sig.empty:
            raise TypeError(f"{where}: no return annotation (annotate it, or pass schema=)")
        ret_text = _annotation_text(sig.return_annotation)
        if ret_text == "None":
            return cls(params, [])
        ret = _parse_annotation(ret_text, f"{where}, return type")
        # A returned tuple is several returns of the op, as TorchScript's ops do.
        returns = list(ret[1:]) if ret[0] == "Tuple" and len(ret) > 2 else [ret]
        return cls(params, returns)


# ---------------------------------------------------------------------------
# Values.

def _to_python(v):
    """An argument as the packaged function sees it: tensors become numpy arrays."""
    if isinstance(v, torch.Tensor):
        return v.detach().numpy()
    if isinstance(v, list):
        return [_to_python(e) for e in v]
    if isinstance(v, tuple):
        return tuple(_to_python(e) for e in v)
    if isinstance(v, dict):
        return {k: _to_python(e) for k, e in v.items()}
    return v


def _list_dtype(v):
    """The dtype of a (nested) list of Python numbers: any float -> float32,
    else any int -> int64, else bool; an empty list is float32 (as torch.tensor([]))."""
    kinds = set()

    def walk(x):
        if isinstance(x, (list, tuple)):
            for e in x:
                walk(e)
        elif isinstance(x, bool):
            kinds.add(bool)
        elif isinstance(x, int):
            kinds.add(int)
        elif isinstance(x, float):
            kinds.add(float)
        else:
            raise TypeError(f"a list for a Tensor must hold ints, floats or bools, not {type(x).__name__}")

    walk(v)
    if float in kinds or not kinds:
        return torch.float32
    if int in kinds:
        return torch.int64
    return torch.bool


def _to_tensor(v):
    if isinstance(v, torch.Tensor):
        return v
    if hasattr(v, "__array_interface__"):
        import numpy as np

        # Copy: the tensor must not alias memory the Python side may still change.
        return torch.from_numpy(np.array(v, copy=True))
    if isinstance(v, (list, tuple, bool, int, float)):
        return torch.tensor(v, dtype=_list_dtype(v))
    raise TypeError(f"cannot make a Tensor of {type(v).__name__} "
                    "(want a numpy array, an object with __array_interface__, "
                    "a list of numbers, or a torch.Tensor)")


def _convert_result(v, t):
    """Converts a Python value to the declared return type t (see module doc)."""
    kind = t[0]
    if kind == "Optional":
        return None if v is None else _convert_result(v, t[1])
    if v is None:
        raise TypeError(f"got None for {_annotation(t)}")
    if kind == "Tensor":
        return _to_tensor(v)
    if kind == "int":
        if isinstance(v, float):
            raise TypeError(f"got float {v!r} for int")
        import operator

        return operator.index(v)
    if kind == "float":
        if isinstance(v, (str, bytes)):
            raise TypeError(f"got {type(v).__name__} for float")
        return float(v)
    if kind == "bool":
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            return bool(v)
        raise TypeError(f"got {type(v).__name__} for bool")
    if kind == "str":
        if not isinstance(v, str):
            raise TypeError(f"got {type(v).__name__} for str")
        return v
    if kind == "List":
        if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
            v = v.tolist()
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"got {type(v).__name__} for {_annotation(t)}")
        return [_convert_result(e, t[1]) for e in v]
    if kind == "Tuple":
        if not isinstance(v, (list, tuple)) or len(v) != len(t) - 1:
            raise TypeError(f"got {type(v).__name__} for {_annotation(t)}")
        return tuple(_convert_result(e, et) for e, et in zip(v, t[1:]))
    if kind == "Dict":
        if not isinstance(v, dict):
            raise TypeError(f"got {type(v).__name__} for {_annotation(t)}")
        return {_convert_result(k, t[1]): _convert_result(e, t[2]) for k, e in v.items()}
    raise TypeError(f"unsupported return type {_annotation(t)}")


def _convert_results(v, returns):
    if not returns:
        return None
    if len(returns) == 1:
        return _convert_result(v, returns[0])
    if not isinstance(v, (list, tuple)) or len(v) != len(returns):
        raise TypeError(f"want a tuple of {len(returns)} results, got {type(v).__name__}")
    return tuple(_convert_result(e, t) for e, t in zip(v, returns))


# ---------------------------------------------------------------------------
# Resolving "pkg.mod:qualname".

def _split_name(name):
    mod, sep, qual = name.partition(":")
    if not sep or not mod or not qual:
        raise ValueError(f"fallback name {name!r}: want 'pkg.mod:qualname'")
    return mod, qual


def _resolve(name, import_module=None):
    resolver = import_module or getattr(_local, "resolver", None) or _default_resolver
    key = (resolver, name)
    fn = _function_cache.get(key)
    if fn is None:
        mod, qual = _split_name(name)
        obj = (resolver or importlib.import_module)(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
        fn = _function_cache[key] = obj
    return fn


class FallbackError(RuntimeError):
    """A packaged function raised; the message names it and carries the traceback."""


def _make_kernel(returns):
    def kernel(fn_name, *args):
        try:
            fn = _resolve(fn_name)
            result = fn(*[_to_python(a) for a in args])
            return _convert_results(result, returns)
        except Exception as e:
            msg = f"gosr fallback {fn_name} raised {type(e).__name__}: {e}\n{traceback.format_exc()}"
            # TorchScript's interpreter (1.13) drops a Python kernel's message
            # ("RuntimeError: "): keep it for PackagedModel to re-raise.
            _local.last_error = msg
            raise FallbackError(msg) from e

    return kernel


# ---------------------------------------------------------------------------
# Registering ops.

def _register(op_name, sig):
    """Defines gosr::<op_name>.<overload> once per process (idempotent)."""
    global _library
    key = (op_name, sig.overload)
    schema = sig.schema(op_name, qualified=False)
    with _lock:
        have = _ops.get(key)
        if have is not None:
            if have != schema:
                raise RuntimeError(f"gosr::{op_name}.{sig.overload} is already registered as "
                                   f"{have!r}, not {schema!r}")
            return
        for (name, _), other in _ops.items():
            if name == op_name and _args_of(other) == sig.args_key:
                raise RuntimeError(
                    f"cannot register {NAMESPACE}::{schema}: {NAMESPACE}::{other} takes the same "
                    "argument types with other return types, and TorchScript picks an overload "
                    "by its arguments only (export both fallbacks from one process, which names "
                    "the second python_call_2, or load the packages in separate processes)")
        if _library is None:
            _library = torch.library.Library(NAMESPACE, "DEF")
        _library.define(schema, alias_analysis="CONSERVATIVE")
        # CompositeImplicitAutograd: an op with no tensor arguments dispatches too.
        _library.impl(f"{op_name}.{sig.overload}", _make_kernel(sig.returns), "CompositeImplicitAutograd")
        _ops[key] = schema


def _args_of(schema):
    sig = Signature.from_schema(schema, schema)
    return sig.args_key[1:]  # less `str fn`


def _choose_op_name(sig):
    """python_call, unless it has an overload with the same argument types and
    other returns (TorchScript would pick that one): then python_call_2, ..."""
    i = 1
    while True:
        name = OP_NAME if i == 1 else f"{OP_NAME}_{i}"
        with _lock:
            same = _ops.get((name, sig.overload))
            clash = any(n == name and _args_of(s) == sig.args_key for (n, _), s in _ops.items())
        if same is not None or not clash:
            return name
        i += 1


class _Fallback:
    def __init__(self, name, sig, op_name, wrapper):
        self.name = name
        self.sig = sig
        self.op_name = op_name
        self.wrapper = wrapper


def _wrapper_source(pyname, name, sig, op_name):
    params = []
    for n, t in sig.params:
        params.append(f"{n}: {_annotation(t)}")
    if not sig.returns:
        ret = "None"
    elif len(sig.returns) == 1:
        ret = _annotation(sig.returns[0])
    else:
        ret = "Tuple[" + ", ".join(_annotation(t) for t in sig.returns) + "]"
    call_args = ", ".join([json.dumps(name)] + [n for n, _ in sig.params])
    return (f"def {pyname}({', '.join(params)}) -> {ret}:\n"
            f"    return torch.ops.{NAMESPACE}.{op_name}({call_args})\n")


_RESERVED = {"torch", "Tensor", "List", "Tuple", "Dict", "Optional"}


def fallback(target, schema=None):
    """Marks a packaged Python function as a gosr fallback and returns a
    scriptable wrapper with the same parameters: scripting a call of it records
    gosr::python_call("pkg.mod:qualname", <args>).

    target: the function, or "pkg.mod:qualname" (imported now when schema is
    None, to read its annotations). schema: "(str text, int k) -> (Tensor, Tensor)";
    when None it comes from the annotations (strings like "Tensor" or
    "List[str]" are fine). Positional parameters only, no defaults."""
    if isinstance(target, str):
        name = target
        mod, qual = _split_name(name)
        fn = None
    else:
        fn = target
        mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
        if not mod or not qual or mod == "__main__" or "<locals>" in qual:
            raise ValueError(f"fallback {fn!r}: only functions of importable modules can be "
                             f"packaged (module {mod!r}, qualname {qual!r})")
        name = f"{mod}:{qual}"
    where = f"fallback {name}"
    if schema is not None:
        sig = Signature.from_schema(schema, where)
    else:
        if fn is None:
            fn = _resolve(name, importlib.import_module)
        sig = Signature.from_function(fn, where)
    for n, _ in sig.params:
        if n in _RESERVED or not n.isidentifier():
            raise ValueError(f"{where}: parameter name {n!r} is reserved in the wrapper; rename it")

    with _lock:
        have = _fallbacks.get(name)
        if have is not None:
            if have.sig.key != sig.key:
                raise ValueError(f"{where}: already declared as {have.sig.key}, not {sig.key}")
            return have.wrapper
        op_name = _choose_op_name(sig)
        _register(op_name, sig)
        pyname = "".join(c if c.isalnum() else "_" for c in f"{mod}__{qual}")
        src = _wrapper_source(pyname, name, sig, op_name)
        # torch.jit.script reads the wrapper's source through linecache.
        filename = f"<gosr_fallback {name}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        scope = {"__name__": WRAPPER_MODULE, "torch": torch, "Tensor": Tensor,
                 "List": List, "Tuple": Tuple, "Dict": Dict, "Optional": Optional}
        exec(compile(src, filename, "exec"), scope)
        wrapper = scope[pyname]
        wrapper.__gosr_fallback__ = name
        _fallbacks[name] = _Fallback(name, sig, op_name, wrapper)
        return wrapper


# ---------------------------------------------------------------------------
# Export and load.

def _called_functions(module):
    """The fallback names the graphs of every method of module (and its
    submodules) call: the constant first argument of each gosr op node."""
    found = set()

    def walk(block):
        for node in block.nodes():
            if node.kind().startswith(f"{NAMESPACE}::{OP_NAME}"):
                first = node.inputsAt(0)
                if first.node().kind() == "prim::Constant":
                    found.add(first.toIValue())
                else:
                    raise ValueError(f"a {node.kind()} node does not name its function by a "
                                     "constant string")
            for b in node.blocks():
                walk(b)

    for _, sub in module.named_modules():
        for method in sub._c._method_names():
            walk(sub._c._get_method(method).inlined_graph)  # a copy, with calls inlined
    return found


def manifest(names):
    """The __gosr__/fallbacks.json document for the named fallbacks."""
    ops = {}
    for name in sorted(names):
        fb = _fallbacks.get(name)
        if fb is None:
            raise ValueError(f"the model calls fallback {name!r}, which this process did not declare")
        key = (fb.op_name, fb.sig.overload)
        op = ops.setdefault(key, {
            "name": f"{NAMESPACE}::{fb.op_name}",
            "overload": fb.sig.overload,
            "schema": fb.sig.schema(fb.op_name),
            "functions": [],
        })
        op["functions"].append(name)
    return {"version": MANIFEST_VERSION, "ops": [ops[k] for k in sorted(ops)]}


def _modules_to_save(names):
    """The modules fallbacks name, and their parent packages (so that the
    archive holds each package's __init__.py, not only implicit packages)."""
    mods = set()
    for name in names:
        parts = _split_name(name)[0].split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if getattr(importlib.import_module(parent), "__file__", None):
                mods.add(parent)
        mods.add(".".join(parts))
    return sorted(mods)


def export(path, model, *, intern=(), extern=(), mock=(), pickles=None):
    """Writes one torch.package archive: the scripted model at model/model.pkl,
    the sources of every module a fallback of the model names and of their
    parent packages (their dependencies must match the `intern` patterns),
    `extern` and `mock` patterns as torch.package defines them, extra pickles
    {"pkg/res.pkl": obj} (save_pickle), and __gosr__/fallbacks.json.
    Returns the manifest."""
    if not isinstance(model, torch.jit.ScriptModule):
        model = torch.jit.script(model)
    names = _called_functions(model)
    doc = manifest(names)
    torch.package.package_exporter._gate_torchscript_serialization = False
    with torch.package.PackageExporter(path) as e:
        for pattern in intern:
            e.intern(pattern)
        for pattern in extern:
            e.extern(pattern)
        for pattern in mock:
            e.mock(pattern)
        for module_name in _modules_to_save(names):
            e.save_module(module_name)
        for resource_path, obj in sorted((pickles or {}).items()):
            package, _, resource = resource_path.rpartition("/")
            if not package or not resource:
                raise ValueError(f"pickle path {resource_path!r}: want 'pkg/resource.pkl'")
            e.save_pickle(package.replace("/", "."), resource, obj)
        e.save_pickle(MODEL_PACKAGE, MODEL_RESOURCE, model)
        e.save_text(MANIFEST_PACKAGE, MANIFEST_RESOURCE, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return doc


def register_manifest(doc, where="manifest"):
    """Registers the ops a __gosr__/fallbacks.json document lists."""
    if doc.get("version") != MANIFEST_VERSION:
        raise ValueError(f"{where}: version {doc.get('version')!r}, want {MANIFEST_VERSION}")
    for op in doc["ops"]:
        ns, _, op_name = op["name"].partition("::")
        if ns != NAMESPACE:
            raise ValueError(f"{where}: op {op['name']!r} is not in namespace {NAMESPACE}")
        head = f"{op['name']}.{op['overload']}("
        if not op["schema"].startswith(head):
            raise ValueError(f"{where}: schema {op['schema']!r} does not start with {head!r}")
        full = Signature.from_schema(op["schema"], where)
        sig = Signature(full.params[1:], full.returns)
        if sig.overload != op["overload"]:
            raise ValueError(f"{where}: overload {op['overload']} does not match its schema "
                             f"{op['schema']!r} (want {sig.overload})")
        _register(op_name, sig)


class PackagedModel:
    """The scripted model of a package: calls (and methods) run with fallback
    names resolved in this package, so two packages with a module of the same
    name each call their own. Other attributes are the scripted module's."""

    def __init__(self, module, importer):
        self.module = module
        self.importer = importer

    def _run(self, fn, args, kwargs):
        prev = getattr(_local, "resolver", None)
        _local.resolver = self.importer.import_module
        _local.last_error = None
        try:
            return fn(*args, **kwargs)
        except RuntimeError as e:
            msg, _local.last_error = getattr(_local, "last_error", None), None
            if msg is None or isinstance(e, FallbackError):
                raise
            raise FallbackError(f"{msg}\n{e}") from e
        finally:
            _local.resolver = prev

    def __call__(self, *args, **kwargs):
        return self._run(self.module, args, kwargs)

    def __getattr__(self, name):
        attr = getattr(self.module, name)
        if callable(attr) and not isinstance(attr, (type, torch.nn.Module)):
            return lambda *a, **k: self._run(attr, a, k)
        return attr


def load(path):
    """Opens a package written by export: registers its manifest's ops,
    resolves fallbacks in it (the last package loaded is also the default
    for bare calls), and returns its model as a PackagedModel (`.module` is
    the scripted module, `.importer` the PackageImporter)."""
    global _default_resolver
    importer = torch.package.PackageImporter(path)
    try:
        text = importer.load_text(MANIFEST_PACKAGE, MANIFEST_RESOURCE)
    except Exception as e:
        raise ValueError(f"{path}: no {MANIFEST_PACKAGE}/{MANIFEST_RESOURCE} ({e}); "
                         "not written by gosr_fallback.export?") from e
    register_manifest(json.loads(text), f"{path}: {MANIFEST_PACKAGE}/{MANIFEST_RESOURCE}")
    module = importer.load_pickle(MODEL_PACKAGE, MODEL_RESOURCE)
    with _lock:
        _default_resolver = importer.import_module
    return PackagedModel(module, importer)


def call(importer, name, *args):
    """Calls the packaged function `name` as a graph node would: arguments and
    results converted by the value rules and the declared return types (from
    the package's manifest when it lists the function, else the annotations)."""
    fn = _resolve(name, importer.import_module)
    returns = None
    doc = json.loads(importer.load_text(MANIFEST_PACKAGE, MANIFEST_RESOURCE))
    for op in doc["ops"]:
        if name in op["functions"]:
            returns = Signature.from_schema(op["schema"], name).returns
    if returns is None:
        returns = Signature.from_function(fn, name).returns
    return _convert_results(fn(*[_to_python(a) for a in args]), returns)
