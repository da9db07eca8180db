"""gosr's runtime module inside each private interpreter.

Go calls into this module for everything that is easier to say in Python
than through the C API: tensor views over gosr memory, converting results
by their declared TorchScript type, formatting exceptions, pickling
movable objects. It must not import torch (it is not importable here).
"""
import array
import ctypes
import linecache
import pickle
import re
import sys
import traceback

# dtype codes are ivalue.DType's numbers.
_DT = {
    1: ("float32", ctypes.c_float, "<f4", "f"),
    2: ("float64", ctypes.c_double, "<f8", "d"),
    3: ("float16", ctypes.c_uint16, "<f2", "e"),
    4: ("bfloat16", ctypes.c_uint16, "<u2", "H"),
    5: ("int64", ctypes.c_int64, "<i8", "q"),
    6: ("int32", ctypes.c_int32, "<i4", "i"),
    7: ("int16", ctypes.c_int16, "<i2", "h"),
    8: ("int8", ctypes.c_int8, "|i1", "b"),
    9: ("uint8", ctypes.c_uint8, "|u1", "B"),
    10: ("bool", ctypes.c_bool, "|b1", "?"),
}
_BY_NAME = {v[0]: k for k, v in _DT.items()}
_BY_TYPESTR = {v[2][1:]: k for k, v in _DT.items()}  # "f4" -> 1
_BY_TYPESTR["b1"] = 10


class _TensorMixin:
    """A gosr tensor seen from Python: a ctypes array over gosr's memory
    (so the buffer protocol works) with numpy's array interface."""

    @property
    def shape(self):
        return self._gosr_shape

    @property
    def dtype(self):
        return _DT[self._gosr_code][0]

    @property
    def ndim(self):
        return len(self._gosr_shape)

    @property
    def nbytes(self):
        return ctypes.sizeof(self)

    @property
    def data_ptr(self):
        return ctypes.addressof(self)

    @property
    def __array_interface__(self):
        return {
            "version": 3,
            "shape": self._gosr_shape,
            "typestr": _DT[self._gosr_code][2],
            "data": (ctypes.addressof(self), False),
            "strides": None,
        }

    def numpy(self):
        import numpy

        return numpy.asarray(self)

    def tolist(self):
        mv = memoryview(self).cast("B")
        if not self._gosr_shape:
            return mv.cast(_DT[self._gosr_code][3]).tolist()[0]
        if 0 in self._gosr_shape:
            return [] if len(self._gosr_shape) == 1 else _empty(self._gosr_shape)
        return mv.cast(_DT[self._gosr_code][3], self._gosr_shape).tolist()

    def __len__(self):
        if not self._gosr_shape:
            raise TypeError("len() of a 0-d tensor")
        return self._gosr_shape[0]

    def __repr__(self):
        return "gosr.Tensor(%s, dtype=%s, shape=%s)" % (self.tolist(), self.dtype, self._gosr_shape)

    def __reduce_ex__(self, protocol):
        # Out-of-band: the buffer travels beside the pickle, so a movable
        # object replicated to another interpreter views the same memory.
        if protocol >= 5:
            return (_rebuild, (pickle.PickleBuffer(self), self._gosr_code, self._gosr_shape))
        return (_rebuild_bytes, (bytes(memoryview(self).cast("B")), self._gosr_code, self._gosr_shape))


def _empty(shape):
    if len(shape) == 1:
        return []
    return [_empty(shape[1:]) for _ in range(shape[0])]


_types = {}


def _tensor_type(code, shape):
    key = (code, shape)
    t = _types.get(key)
    if t is None:
        base = _DT[code][1]
        dims = shape if shape else (1,)
        for d in reversed(dims):
            base = base * d
        t = type("Tensor", (_TensorMixin, base), {"_gosr_code": code, "_gosr_shape": shape})
        if len(_types) > 4096:
            _types.clear()
        _types[key] = t
    return t


_numpy = False  # not tried yet


def _np():
    global _numpy
    if _numpy is False:
        try:
            import numpy
        except ImportError:
            numpy = None
        _numpy = numpy
    return _numpy


def tensor(addr, code, shape):
    """A read-only view of gosr memory at addr (contiguous, shape a tuple):
    a numpy array when numpy imports (what the PyTorch side of a fallback
    gets too: t.numpy()), else a gosr Tensor (a ctypes array with numpy's
    array interface). Either supports the buffer protocol; neither copies."""
    np = _np()
    if np is not None and code != 4:
        n = 1
        for d in shape:
            n *= d
        if n == 0 or addr == 0:
            return np.zeros(shape, dtype=_DT[code][2])
        raw = (ctypes.c_char * (n * ctypes.sizeof(_DT[code][1]))).from_address(addr)
        a = np.frombuffer(raw, dtype=_DT[code][2], count=n).reshape(shape)
        a.flags.writeable = False
        return a
    return _tensor_type(code, shape).from_address(addr)


def _rebuild(buf, code, shape):
    mv = memoryview(buf)
    if mv.readonly:
        # ctypes needs a writable buffer to view; the address is still
        # the shared one.
        addr = _addr_of(mv)
        t = tensor(addr, code, shape)
        t._gosr_keep = mv
        return t
    t = _tensor_type(code, shape).from_buffer(mv.cast("B"))
    return t


def _rebuild_bytes(b, code, shape):
    buf = bytearray(b)
    return _tensor_type(code, shape).from_buffer(buf)


def _addr_of(mv):
    """Address of a C-contiguous buffer's first byte (read-only ones too)."""
    mv = mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv
    if len(mv) == 0:
        return 0
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(mv))
    except TypeError:
        pass
    # A read-only buffer: ask the C API of this interpreter's own libpython
    # (ctypes.pythonapi would name the process's main program instead).
    obj = ctypes.py_object(mv)
    buf = ctypes.c_void_p()
    size = ctypes.c_ssize_t()
    f = _pyapi.PyObject_AsReadBuffer
    f.restype = ctypes.c_int
    if f(obj, ctypes.byref(buf), ctypes.byref(size)) != 0:
        raise BufferError("cannot read the buffer's address")
    return buf.value or 0


_pyapi = None


def start_watchdog(fd, running_addr, ident_addr, libpython):
    """A thread that raises TimeoutError in a job when gosr writes that
    job's number to the pipe fd (a context ended). The job runs on the
    thread whose ident gosr stores beside its number."""
    global _pyapi
    import os
    import threading

    _pyapi = ctypes.PyDLL(libpython)  # dlopen from here finds this copy
    set_async = _pyapi.PyThreadState_SetAsyncExc
    set_async.argtypes = (ctypes.c_ulong, ctypes.py_object)
    set_async.restype = ctypes.c_int
    running = ctypes.c_int64.from_address(running_addr)
    ident = ctypes.c_uint64.from_address(ident_addr)

    def watch():
        while True:
            b = os.read(fd, 8)
            if len(b) < 8:
                return
            gen = int.from_bytes(b, "little")
            # We hold the GIL here, so the job cannot end under us.
            if running.value == gen:
                set_async(ident.value, ContextEnded)

    threading.Thread(target=watch, name="gosr-watchdog", daemon=True).start()


def view(addr, size):
    """A read-only memoryview of size bytes of gosr memory at addr."""
    if size == 0:
        return memoryview(b"")
    return memoryview((ctypes.c_char * size).from_address(addr)).cast("B").toreadonly()


def package_tensor(storage, dtype, offset, size, stride, requires_grad=False):
    """Tensor factory for pickles inside a package: numpy views when numpy
    is importable, gosr tensors otherwise; never a copy."""
    code = _BY_NAME[dtype]
    size = tuple(size)
    itemsize = ctypes.sizeof(_DT[code][1])
    mv = memoryview(storage).cast("B")
    contiguous = _is_contiguous(size, stride)
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None and dtype != "bfloat16":
        flat = numpy.frombuffer(mv, dtype=_DT[code][2])
        n = 1
        for d in size:
            n *= d
        if n == 0:
            return numpy.zeros(size, dtype=_DT[code][2])
        return numpy.lib.stride_tricks.as_strided(
            flat[offset:], shape=size, strides=tuple(s * itemsize for s in stride), writeable=False)
    if not contiguous:
        raise ValueError("gosr: a non-contiguous tensor in a pickle needs numpy in the interpreter")
    addr = _addr_of(mv) + offset * itemsize
    t = tensor(addr, code, size)
    t._gosr_keep = storage
    return t


def _is_contiguous(size, stride):
    expect = 1
    for d, s in zip(reversed(size), reversed(stride)):
        if d != 1 and s != expect:
            return False
        expect *= d
    return True


class Out(tuple):
    """A tensor result for Go: (addr, code, shape, keepalive)."""


class Err(tuple):
    """A failed call for Go: (type name, message, formatted traceback)."""


def _array_out(a):
    code = _BY_TYPESTR.get(a.__array_interface__["typestr"][1:])
    if code is None:
        raise TypeError("gosr: a result array of dtype %s has no gosr dtype" % a.__array_interface__["typestr"])
    ai = a.__array_interface__
    if ai.get("strides") is not None:
        import numpy

        a = numpy.ascontiguousarray(a)
        ai = a.__array_interface__
    return Out((ai["data"][0], code, tuple(ai["shape"]), a))


def _flatten(x, shape, out):
    if isinstance(x, (list, tuple)):
        shape.append(len(x))
        first = None
        for e in x:
            sub = []
            _flatten(e, sub, out)
            if first is None:
                shape.extend(sub)
                first = sub
            elif sub != first:
                raise ValueError("gosr: a ragged nested list cannot become a tensor")
        return
    out.append(x)


def _int_array(x):
    """array('q', x) when x is a flat sequence of ints, else None."""
    try:
        return array.array("q", x)
    except (TypeError, OverflowError):
        return None


def to_tensor(x):
    if isinstance(x, _TensorMixin):
        return Out((ctypes.addressof(x), x._gosr_code, x._gosr_shape, x))
    if hasattr(x, "__array_interface__"):
        return _array_out(x)
    mod = type(x).__module__
    if mod == "torch" and hasattr(x, "numpy"):
        return _array_out(x.detach().contiguous().numpy())
    if isinstance(x, (bool, int, float)):
        x, shape = [x], ()
        flat = x
    elif isinstance(x, (list, tuple)):
        # A flat list of ints (token ids, offsets): one C pass, no walk
        # in Python. Bools among ints give int64 below too.
        a = _int_array(x) if x and type(x[0]) is int else None
        if a is not None:
            return Out((a.buffer_info()[0], 5, (len(x),), a))
        shape, flat = [], []
        _flatten(x, shape, flat)
        shape = tuple(shape)
        n = 1
        for d in shape:
            n *= d
        if n != len(flat):
            raise ValueError("gosr: a ragged nested list cannot become a tensor")
    elif isinstance(x, memoryview):
        return _array_out(_MV(x))
    else:
        raise TypeError("gosr: expected a tensor (array, list of numbers), got %s" % type(x).__name__)
    if all(type(v) is bool for v in flat) and flat:
        a = array.array("b", [1 if v else 0 for v in flat])
        code = 10
    elif all(isinstance(v, int) for v in flat):
        a = array.array("q", flat)
        code = 5
    else:
        a = array.array("f", [float(v) for v in flat])
        code = 1
    addr = a.buffer_info()[0] if len(a) else 0
    return Out((addr, code, shape, a))


class _MV:
    def __init__(self, mv):
        fmt = mv.format.lstrip("@=<")
        typestr = {"f": "f4", "d": "f8", "q": "i8", "l": "i8", "i": "i4", "h": "i2", "b": "i1", "B": "u1", "?": "b1", "e": "f2"}[fmt]
        self.__array_interface__ = {"version": 3, "shape": mv.shape, "typestr": "<" + typestr,
                                    "data": (_addr_of(mv), mv.readonly), "strides": None}
        self.keep = mv


# Converters by TorchScript type string, built once per string.
_conv_cache = {}


def _split_top(s):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def converter(ts):
    c = _conv_cache.get(ts)
    if c is None:
        c = _make_conv(ts.strip())
        _conv_cache[ts] = c
    return c


def _make_conv(ts):
    if ts.endswith("?"):
        inner = converter(ts[:-1])
        return lambda x: None if x is None else inner(x)
    m = re.fullmatch(r"(\w+)\[(.*)\]", ts)
    if m:
        head, args = m.group(1), _split_top(m.group(2))
        if head == "Optional":
            inner = converter(args[0])
            return lambda x: None if x is None else inner(x)
        if head == "List":
            inner = converter(args[0])
            return lambda x: [inner(e) for e in _iter(x)]
        if head == "Tuple":
            convs = [converter(a) for a in args]

            def tup(x):
                x = tuple(_iter(x))
                if len(x) != len(convs):
                    raise TypeError("gosr: expected a tuple of %d values, got %d" % (len(convs), len(x)))
                return tuple(c(e) for c, e in zip(convs, x))
            return tup
        if head == "Dict":
            kc, vc = converter(args[0]), converter(args[1])
            return lambda x: {kc(k): vc(v) for k, v in x.items()}
    if ts.startswith("(") and ts.endswith(")"):
        return converter("Tuple[" + ts[1:-1] + "]")
    return _SCALARS.get(ts, _any)


def _iter(x):
    if hasattr(x, "tolist") and not isinstance(x, (list, tuple)):
        return x.tolist()
    return x


def _item(x):
    return x.item() if hasattr(x, "item") and not isinstance(x, (int, float, bool)) else x


def _to_int(x):
    x = _item(x)
    if isinstance(x, bool) or not isinstance(x, int):
        if isinstance(x, float) and x.is_integer():
            return int(x)
        raise TypeError("gosr: expected int, got %s" % type(x).__name__)
    return x


def _to_float(x):
    x = _item(x)
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        raise TypeError("gosr: expected float, got %s" % type(x).__name__)
    return float(x)


def _to_bool(x):
    x = _item(x)
    if not isinstance(x, bool):
        raise TypeError("gosr: expected bool, got %s" % type(x).__name__)
    return x


def _to_str(x):
    if not isinstance(x, str):
        raise TypeError("gosr: expected str, got %s" % type(x).__name__)
    return x


def _to_none(x):
    if x is not None:
        raise TypeError("gosr: expected None, got %s" % type(x).__name__)
    return None


def _any(x):
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_any(e) for e in x)
    if isinstance(x, dict):
        return {_any(k): _any(v) for k, v in x.items()}
    if isinstance(x, _TensorMixin) or hasattr(x, "__array_interface__") or type(x).__module__ == "torch":
        return to_tensor(x)
    return x  # an opaque object: Go keeps a handle


_SCALARS = {"Tensor": to_tensor, "int": _to_int, "float": _to_float, "bool": _to_bool,
            "str": _to_str, "NoneType": _to_none, "None": _to_none, "Any": _any}


def format_exc(e):
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return Err((type(e).__name__, str(e), tb))


def invoke(fn, args, ret):
    """Call fn(*args); convert the result by the TorchScript type ret."""
    try:
        r = fn(*args)
        return converter(ret)(r) if ret else _any(r)
    except BaseException as e:  # noqa: B902 -- everything goes back to Go
        return format_exc(e)


def run(code, filename, glb):
    """exec code (registered in linecache so tracebacks show it)."""
    try:
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        exec(compile(code, filename, "exec"), glb)
        return None
    except BaseException as e:  # noqa: B902
        return format_exc(e)


def evaluate(expr, glb):
    try:
        return _any(eval(expr, glb))
    except BaseException as e:  # noqa: B902
        return format_exc(e)


def guard(fn, *args):
    try:
        return fn(*args)
    except BaseException as e:  # noqa: B902
        return format_exc(e)


class _MemReader:
    """gosr_package's Reader over the archive gosr has mapped."""

    def __init__(self, records):
        self._recs = records  # name -> (addr, size)

    def records(self):
        return list(self._recs)

    def read(self, name):
        try:
            addr, size = self._recs[name]
        except KeyError:
            raise KeyError(name) from None
        return view(addr, size)


def open_package(records, name):
    import gosr_package

    return gosr_package.PackageImporter(_MemReader(records), name, tensor_factory=package_tensor)


def dumps(obj, importer):
    """Pickle obj for replication: (data, [buffers]) with every array's
    memory out of band."""
    import gosr_package

    bufs = []
    data = gosr_package.dumps(obj, importer, protocol=5, buffer_callback=bufs.append)
    out = []
    for b in bufs:
        mv = b.raw()
        out.append((_addr_of(mv), mv.nbytes, b))
    return data, out


def loads(data, importer, views):
    import gosr_package

    return gosr_package.loads(data, importer, buffers=[pickle.PickleBuffer(v) for v in views])


class ContextEnded(TimeoutError):
    """Raised in a call whose Go context ended (deadline or cancel)."""


def _local_dlopen_only():
    """glibc crashes the process (SIGSEGV in add_to_global_resize) when an
    object loaded in a namespace other than the base one calls dlopen with
    RTLD_GLOBAL (torch's __init__ does, for libtorch_global_deps). Inside a
    private interpreter every library is loaded RTLD_LOCAL instead: within
    one namespace its symbols still resolve for what it loads next."""
    import os

    g = os.RTLD_GLOBAL
    cdll_init = ctypes.CDLL.__init__

    def __init__(self, name, mode=ctypes.DEFAULT_MODE, *args, **kwargs):
        cdll_init(self, name, mode & ~g, *args, **kwargs)

    ctypes.CDLL.__init__ = __init__
    set_flags = sys.setdlopenflags
    sys.setdlopenflags = lambda flags: set_flags(flags & ~g)


_local_dlopen_only()
