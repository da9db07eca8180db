"""A torch.package importer in pure Python, without torch.

gosr embeds this module in its private CPython interpreters, where torch is
not importable, to load the Python side of torch.package archives. It mirrors
PyTorch 1.13's torch.package.PackageImporter (package_importer.py,
_mangling.py, _package_unpickler.py, _importlib.py) where it matters:

- Hermetic imports: packaged modules live in the importer's own dict, never
  in sys.modules, named "<gosr_package_N>.pkg.mod"; their __builtins__ is a
  copy whose __import__ goes through the importer.
- Externs (.data/extern_modules, and their submodules) come from the system.
  torch is implicitly extern in every package; where it cannot be imported,
  importing it fails with an error that says why.
- Mocked modules are the sources torch.package writes (_mock.py and a
  module __getattr__ handing out MockedObject), run as any other source.
- Pickles resolve classes through the importer. torch's storages and tensor
  rebuild functions are understood without torch: tensors are built by a
  tensor factory (numpy views by default).

Only the standard library is used. Everything here trusts the archive:
packaged code and pickles run with the process's rights.
"""

import builtins
import collections
import importlib
import importlib.machinery
import importlib.util
import io
import itertools
import linecache
import os
import pickle
import re
import struct
import sys
import threading
import types
import weakref
import zipfile
import zlib

__all__ = [
    "PackageError",
    "RecordNotFoundError",
    "Reader",
    "ZipReader",
    "PackageImporter",
    "TensorData",
    "TorchDtype",
    "default_tensor_factory",
    "dumps",
    "loads",
    "demangle",
    "is_mangled",
]


class PackageError(Exception):
    """The archive or one of its entries cannot be used."""


class RecordNotFoundError(PackageError, LookupError):
    """An entry the caller asked for is not in the archive."""


# --- mangling (torch/package/_mangling.py) --------------------------------

_MANGLE_RE = re.compile(r"<(?:gosr|torch)_package_\d+>")
_mangle_counter = itertools.count()  # process-wide, as torch's _mangle_index
# Live importers by mangle parent, so that dumps can check an object against
# the importer it came from even when the caller did not pass it.
_importers = weakref.WeakValueDictionary()


def is_mangled(name):
    return _MANGLE_RE.match(name) is not None


def demangle(name):
    """'<gosr_package_3>.pkg.mod' -> 'pkg.mod', whichever importer mangled it."""
    if is_mangled(name):
        _, sep, rest = name.partition(".")
        return rest if sep else ""
    return name


def _mangle_prefix(name):
    return name.partition(".")[0] if is_mangled(name) else ""


# --- readers --------------------------------------------------------------


class Reader:
    """What a PackageImporter reads the archive through. Names are relative
    to the archive's top directory ("pkg/mod.py", ".data/0.storage")."""

    name = "<package>"

    def records(self):
        raise NotImplementedError

    def read(self, name):
        """The bytes of one entry (bytes or a memoryview); KeyError if absent."""
        raise NotImplementedError


class ZipReader(Reader):
    """A Reader over a zip archive as torch.package writes it: every entry
    under one top directory, which is stripped."""

    def __init__(self, path_or_file):
        if isinstance(path_or_file, (str, os.PathLike)):
            self.name = os.fspath(path_or_file)
        else:
            self.name = str(getattr(path_or_file, "name", "<zip>"))
        try:
            self._zip = zipfile.ZipFile(path_or_file)
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as e:
            raise PackageError(f"{self.name}: not a readable zip archive: {e}") from e
        except OSError as e:
            raise PackageError(f"{self.name}: cannot open: {e}") from e
        self._names = {}
        top = None
        for full in self._zip.namelist():
            if full.endswith("/"):
                continue
            first, sep, rest = full.partition("/")
            if not sep or (top is not None and first != top):
                raise PackageError(
                    f"{self.name}: entry {full!r} is not under the archive's top "
                    f"directory {top!r}: not a torch.package archive"
                )
            top = first
            self._names[rest] = full
        if top is None:
            raise PackageError(f"{self.name}: empty archive")

    def records(self):
        return list(self._names)

    def read(self, name):
        full = self._names[name]  # KeyError if absent, as Reader says
        try:
            return self._zip.read(full)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as e:
            raise PackageError(f"{self.name}: entry {name}: cannot read: {e}") from e

    def close(self):
        self._zip.close()


# --- the module tree (package_importer.py's _PathNode) ---------------------


class _PackageNode:
    def __init__(self, source_file):
        self.source_file = source_file
        self.children = {}


class _ModuleNode:
    __slots__ = ["source_file"]

    def __init__(self, source_file):
        self.source_file = source_file


class _ExternNode:
    pass


# torch.package lets these through even when not extern, because torch
# itself imports numpy (pytorch/MultiPy#46).
IMPLICIT_IMPORT_ALLOWLIST = ("numpy", "numpy.core", "numpy.core._multiarray_umath")

_TORCH_UNAVAILABLE = (
    "{name!r} (needed by package {archive}) cannot be imported: torch is not "
    "importable in gosr's private interpreters. gosr runs the TorchScript graph "
    "in Go and hands tensors to packaged Python code as arrays (use "
    "numpy.asarray(x) or memoryview(x)); a private copy of libpython cannot "
    "load PyTorch's native libraries safely. Underlying error: {err}"
)

_NEEDS_LOADING = object()


def _resolve_name(name, package, level):
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        raise ImportError("attempted relative import beyond top-level package")
    base = bits[0]
    return f"{base}.{name}" if name else base


def _calc_package(globals_):
    package = globals_.get("__package__")
    if package is not None:
        return package
    spec = globals_.get("__spec__")
    if spec is not None:
        return spec.parent
    package = demangle(globals_["__name__"])
    if "__path__" not in globals_:
        package = package.rpartition(".")[0]
    return package


def _normalize_resource(resource):
    parent, file_name = os.path.split(resource)
    if parent:
        raise ValueError(f"{resource!r} must be only a file name")
    return file_name


class PackageImporter:
    """Imports modules and loads pickles out of one torch.package archive.

    reader is a Reader (or a path, opened with ZipReader); name is used in
    messages and in the file names tracebacks show. tensor_factory builds
    the tensors of pickles (see default_tensor_factory); extern_import
    imports extern modules from the system.
    """

    def __init__(
        self,
        reader,
        name=None,
        *,
        tensor_factory=None,
        extern_import=importlib.import_module,
    ):
        if isinstance(reader, (str, os.PathLike)):
            reader = ZipReader(reader)
        self.reader = reader
        self.name = name or getattr(reader, "name", "<package>")
        self.filename = self.name  # torch's attribute
        self.tensor_factory = tensor_factory or default_tensor_factory
        self._extern_import = extern_import
        self._mangle_parent = f"<gosr_package_{next(_mangle_counter)}>"
        self._lock = threading.RLock()
        self._storages = {}  # storage key -> buffer, read once per importer
        self._sources = {}  # module name -> archive entry of its source
        try:
            self._records = list(reader.records())
        except PackageError:
            raise
        except Exception as e:
            raise PackageError(f"archive {self.name}: cannot list entries: {e}") from e
        self._record_set = set(self._records)

        self.root = _PackageNode(None)
        self.modules = {}
        self.extern_modules = self._read_extern()
        for extern in self.extern_modules:
            self._add_extern(extern)
        for record in self._records:
            self._add_file(record)

        self.patched_builtins = builtins.__dict__.copy()
        self.patched_builtins["__import__"] = self.__import__
        # Packaged modules may reference their importer, as in torch.package.
        self.modules["torch_package_importer"] = self
        _importers[self._mangle_parent] = self

    def __repr__(self):
        return f"<gosr_package.PackageImporter {self.name} {self._mangle_parent}>"

    # -- public API ---------------------------------------------------------

    def id(self):
        """The mangle parent of this importer's modules, e.g. '<gosr_package_3>'."""
        return self._mangle_parent

    def import_module(self, name, package=None):
        """Import name from the package (or the system, for externs) and
        return it; modules are kept in self.modules, not sys.modules."""
        if name.startswith(self._mangle_parent + "."):
            name = name[len(self._mangle_parent) + 1 :]
        return self._gcd_import(name)

    def resolve(self, target):
        """'pkg.mod:qual.name' -> that object, importing pkg.mod from the package."""
        module_name, sep, qualname = target.partition(":")
        if not sep or not module_name or not qualname:
            raise ValueError(
                f"archive {self.name}: {target!r} is not a function name of the "
                f"form 'pkg.mod:qual.name'"
            )
        obj = self.import_module(module_name)
        for i, part in enumerate(qualname.split(".")):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                have = ".".join([module_name] + qualname.split(".")[:i])
                raise AttributeError(
                    f"archive {self.name}: {have} has no attribute {part!r} "
                    f"(resolving {target!r})"
                ) from None
        return obj

    def load_binary(self, package, resource):
        return bytes(self._read(self._zipfile_path(package, resource)))

    def load_text(self, package, resource, encoding="utf-8", errors="strict"):
        data = self._read(self._zipfile_path(package, resource))
        return str(data, encoding, errors)

    def load_pickle(self, package, resource, map_location=None):
        """Unpickle an entry, importing what it needs from the package.
        map_location is accepted for torch's signature; tensors are CPU."""
        entry = self._zipfile_path(package, resource)
        data = self._read(entry)
        return _unpickle(data, self, entry)

    def file_structure(self, *, include="**", exclude=()):
        """A Directory tree of the archive's entries, as torch's."""
        matcher = _GlobGroup(include, exclude)
        top = Directory(self.name, True)
        for record in self._records:
            if matcher.matches(record):
                top._add_file(record)
        return top

    def python_version(self):
        """The Python version the package was made with, or None."""
        if ".data/python_version" not in self._record_set:
            return None
        return str(self._read(".data/python_version"), "utf-8").strip()

    def has_record(self, entry):
        return entry in self._record_set

    def get_source(self, module_name):
        """The source of a packaged module (used by linecache and inspect)."""
        module = self.import_module(demangle(module_name))
        entry = self._sources.get(demangle(module.__name__))
        if entry is None:
            return None
        return importlib.util.decode_source(bytes(self._read(entry)))

    def close(self):
        close = getattr(self.reader, "close", None)
        if close is not None:
            close()

    # -- archive access -----------------------------------------------------

    def _read(self, entry):
        try:
            return self.reader.read(entry)
        except KeyError:
            raise RecordNotFoundError(f"archive {self.name}: no entry {entry!r}") from None
        except PackageError:
            raise
        except Exception as e:
            raise PackageError(f"archive {self.name}: entry {entry}: cannot read: {e}") from e

    def _read_extern(self):
        if ".data/extern_modules" not in self._record_set:
            raise PackageError(
                f"archive {self.name}: no .data/extern_modules entry: not a "
                f"torch.package archive"
            )
        data = self._read(".data/extern_modules")
        try:
            text = str(data, "utf-8")
        except UnicodeDecodeError as e:
            raise PackageError(f"archive {self.name}: entry .data/extern_modules: {e}") from e
        return [line.strip() for line in text.splitlines() if line.strip()]

    def _zipfile_path(self, package, resource):
        if not isinstance(package, str):
            package = package.__name__
        name = demangle(package)
        return f"{name.replace('.', '/')}/{_normalize_resource(resource)}"

    def _get_or_create_package(self, atoms):
        cur = self.root
        for i, atom in enumerate(atoms):
            node = cur.children.get(atom)
            if node is None:
                node = cur.children[atom] = _PackageNode(None)
            if isinstance(node, _ExternNode):
                return node
            if isinstance(node, _ModuleNode):
                raise PackageError(
                    f"archive {self.name}: inconsistent module structure: module "
                    f"{'.'.join(atoms[: i + 1])} is not a package, but has submodules"
                )
            cur = node
        return cur

    def _add_file(self, filename):
        *prefix, last = filename.split("/")
        if prefix and prefix[0] == ".data":
            return
        package = self._get_or_create_package(prefix)
        if isinstance(package, _ExternNode):
            raise PackageError(
                f"archive {self.name}: inconsistent module structure: {filename} "
                f"is inside a module marked extern"
            )
        if last == "__init__.py":
            package.source_file = filename
        elif last.endswith(".py"):
            package.children[last[: -len(".py")]] = _ModuleNode(filename)

    def _add_extern(self, extern_name):
        *prefix, last = extern_name.split(".")
        package = self._get_or_create_package(prefix)
        if isinstance(package, _ExternNode):
            return  # a shorter extern covers it
        package.children[last] = _ExternNode()

    def _knows(self, name):
        """Whether name is a packaged or an extern module of this archive."""
        cur = self.root
        for atom in name.split("."):
            if not isinstance(cur, _PackageNode) or atom not in cur.children:
                return False
            cur = cur.children[atom]
            if isinstance(cur, _ExternNode):
                return True
        return True

    # -- importing (CPython's import code, as torch.package copied it) ------

    def _gcd_import(self, name, package=None, level=0):
        if not isinstance(name, str):
            raise TypeError(f"module name must be str, not {type(name)}")
        if level < 0:
            raise ValueError("level must be >= 0")
        if level > 0:
            if not isinstance(package, str):
                raise TypeError("__package__ not set to a string")
            if not package:
                raise ImportError("attempted relative import with no known parent package")
            name = _resolve_name(name, package, level)
        if not name:
            raise ValueError("Empty module name")
        with self._lock:
            return self._find_and_load(name)

    def _find_and_load(self, name):
        module = self.modules.get(name, _NEEDS_LOADING)
        if module is _NEEDS_LOADING:
            return self._do_find_and_load(name)
        if module is None:
            raise ModuleNotFoundError(f"import of {name} halted; None in modules", name=name)
        # The standard library fakes these submodules in sys.modules.
        if name == "os":
            self.modules["os.path"] = module.path
        elif name == "typing":
            for sub in ("io", "re"):
                if hasattr(module, sub):
                    self.modules["typing." + sub] = getattr(module, sub)
        return module

    def _do_find_and_load(self, name):
        parent, _, last = name.rpartition(".")
        if parent:
            if parent not in self.modules:
                self._gcd_import(parent)
            if name in self.modules:  # importing the parent imported it
                return self.modules[name]
            parent_module = self.modules[parent]
            if not hasattr(parent_module, "__path__"):
                sub = parent_module.__dict__.get(last)
                extern = getattr(parent_module, "__loader__", None) is not self
                if extern and isinstance(sub, types.ModuleType):
                    # an extern extension package that sets up its submodules
                    self.modules[name] = sub
                    return sub
                raise ModuleNotFoundError(
                    f"No module named {name!r}; {parent!r} is not a package "
                    f"(archive {self.name})",
                    name=name,
                )
        module = self._load_module(name, parent)
        self._install_on_parent(parent, name, module)
        return module

    def _load_module(self, name, parent):
        cur = self.root
        for atom in name.split("."):
            if not isinstance(cur, _PackageNode) or atom not in cur.children:
                if name in IMPLICIT_IMPORT_ALLOWLIST:
                    return self._import_extern(name)
                raise ModuleNotFoundError(
                    f'No module named "{name}" in self-contained archive '
                    f'"{self.name}" and the module is also not in the list of '
                    f"allowed external modules: {self.extern_modules}",
                    name=name,
                )
            cur = cur.children[atom]
            if isinstance(cur, _ExternNode):
                return self._import_extern(name)
        return self._make_module(name, cur.source_file, isinstance(cur, _PackageNode), parent)

    def _import_extern(self, name):
        try:
            module = self._extern_import(name)
        except Exception as e:
            if name == "torch" or name.startswith("torch."):
                cls = ModuleNotFoundError if isinstance(e, ModuleNotFoundError) else ImportError
                msg = _TORCH_UNAVAILABLE.format(name=name, archive=self.name, err=f"{type(e).__name__}: {e}")
                raise cls(msg, name=name) from e
            if isinstance(e, ImportError):
                cls = ModuleNotFoundError if isinstance(e, ModuleNotFoundError) else ImportError
                raise cls(
                    f"extern module {name!r} of archive {self.name} cannot be imported "
                    f"from the system: {e}",
                    name=name,
                ) from e
            raise
        if name == "importlib":
            module = self._importlib_proxy(module)
        self.modules[name] = module
        return module

    def _importlib_proxy(self, real):
        """importlib as packaged code sees it: import_module goes through
        this importer, so it cannot reach around the package."""
        proxy = types.ModuleType("importlib", real.__doc__)
        proxy.__dict__.update(real.__dict__)
        importer = self

        def import_module(name, package=None):
            if name.startswith("."):
                if not package:
                    raise TypeError(
                        f"the 'package' argument is required to perform a relative "
                        f"import for {name!r}"
                    )
                level = len(name) - len(name.lstrip("."))
                name = _resolve_name(name[level:], demangle(package), level)
            return importer.import_module(name)

        def __getattr__(attr):  # submodules imported after the copy
            return getattr(real, attr)

        proxy.import_module = import_module
        proxy.__getattr__ = __getattr__
        return proxy

    def _make_module(self, name, filename, is_package, parent):
        spec = importlib.machinery.ModuleSpec(
            name, self, origin="<package_importer>", is_package=is_package
        )
        module = importlib.util.module_from_spec(spec)
        module.__name__ = self._mangle_parent + "." + name
        ns = module.__dict__
        ns["__spec__"] = spec
        ns["__loader__"] = self
        ns["__file__"] = None
        ns["__cached__"] = None
        ns["__builtins__"] = self.patched_builtins
        ns["__torch_package__"] = True
        self.modules[name] = module
        # Set it on the parent before running it, so that IMPORT_FROM finds
        # it without looking in sys.modules.
        self._install_on_parent(parent, name, module)
        if filename is None:
            return module
        try:
            source = bytes(self._read(filename))
            text = importlib.util.decode_source(source)
            shown = self._register_source(filename, text)
            ns["__file__"] = shown
            self._sources[name] = filename
            code = compile(text, shown, "exec", dont_inherit=True)
            exec(code, ns)
        except BaseException:
            # As CPython does for sys.modules: a module that failed to run is
            # not left half-initialized for the next import.
            self.modules.pop(name, None)
            if parent and getattr(self.modules.get(parent), name.rpartition(".")[2], None) is module:
                delattr(self.modules[parent], name.rpartition(".")[2])
            raise
        return module

    def _register_source(self, filename, text):
        """Put a packaged source in linecache under '<archive name>/pkg/mod.py'
        (mtime None: checkcache never drops it), so tracebacks show its lines."""
        lines = text.splitlines(True)
        shown = f"{self.name}/{filename}"
        entry = linecache.cache.get(shown)
        if entry is not None and len(entry) == 4 and entry[2] != lines:
            # Another archive of the same name: keep both apart.
            shown = f"{self.name}{self._mangle_parent}/{filename}"
        linecache.cache[shown] = (len(text), None, lines, shown)
        return shown

    def _install_on_parent(self, parent, name, module):
        if not parent:
            return
        parent_module = self.modules[parent]
        if getattr(parent_module, "__loader__", None) is self:
            setattr(parent_module, name.rpartition(".")[2], module)

    def _handle_fromlist(self, module, fromlist, *, recursive=False):
        module_name = demangle(module.__name__)
        if hasattr(module, "__path__"):
            for x in fromlist:
                if not isinstance(x, str):
                    where = module_name + ".__all__" if recursive else "``from list''"
                    raise TypeError(f"Item in {where} must be str, not {type(x).__name__}")
                if x == "*":
                    if not recursive and hasattr(module, "__all__"):
                        self._handle_fromlist(module, module.__all__, recursive=True)
                elif not hasattr(module, x):
                    from_name = f"{module_name}.{x}"
                    try:
                        self._gcd_import(from_name)
                    except ModuleNotFoundError as exc:
                        # Names in a fromlist that are not modules are left to
                        # IMPORT_FROM, as CPython does.
                        if exc.name == from_name and self.modules.get(from_name, _NEEDS_LOADING) is not None:
                            continue
                        raise
        return module

    def __import__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            module = self._gcd_import(name)
        else:
            package = _calc_package(globals if globals is not None else {})
            module = self._gcd_import(name, package, level)
        if fromlist:
            return self._handle_fromlist(module, fromlist)
        if level == 0:
            return self._gcd_import(name.partition(".")[0])
        if not name:
            return module
        cut_off = len(name) - len(name.partition(".")[0])
        module_name = demangle(module.__name__)
        return self.modules[module_name[: len(module_name) - cut_off]]

    # -- pickles ------------------------------------------------------------

    def _storage(self, dtype, key, numel, entry):
        """The storage of a pickle's tensors, read once per key and shared."""
        buf = self._storages.get(key)
        record = f".data/{key}.storage"
        if buf is None:
            try:
                buf = self._read(record)
            except RecordNotFoundError:
                raise PackageError(
                    f"archive {self.name}: entry {entry} needs storage {record}, "
                    f"which is not in the archive"
                ) from None
            self._storages[key] = buf
        need = numel * _ITEMSIZE[dtype]
        have = memoryview(buf).nbytes
        if have < need:
            raise PackageError(
                f"archive {self.name}: entry {record} has {have} bytes, but {entry} "
                f"needs {numel} {dtype} elements ({need} bytes) there"
            )
        return _Storage(buf, dtype, numel, key)


# --- tensors without torch ------------------------------------------------

# dtype name -> (struct format, numpy typestr, itemsize)
_DTYPES = {
    "float32": ("<f", "<f4", 4),
    "float64": ("<d", "<f8", 8),
    "float16": ("<e", "<f2", 2),
    "bfloat16": ("<H", None, 2),
    "int64": ("<q", "<i8", 8),
    "int32": ("<i", "<i4", 4),
    "int16": ("<h", "<i2", 2),
    "int8": ("<b", "|i1", 1),
    "uint8": ("<B", "|u1", 1),
    "bool": ("<?", "|b1", 1),
    "complex64": ("<ff", "<c8", 8),
    "complex128": ("<dd", "<c16", 16),
}
_ITEMSIZE = {k: v[2] for k, v in _DTYPES.items()}

# torch storage class names (torch.FloatStorage, ...) -> dtype
_STORAGE_DTYPES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "UntypedStorage": "uint8",
    "_UntypedStorage": "uint8",
}

# torch dtype attributes (torch.float32, torch.long, ...) -> dtype name
_TORCH_DTYPE_NAMES = {
    "float32": "float32", "float": "float32",
    "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16",
    "bfloat16": "bfloat16",
    "int64": "int64", "long": "int64",
    "int32": "int32", "int": "int32",
    "int16": "int16", "short": "int16",
    "int8": "int8", "uint8": "uint8", "bool": "bool",
    "complex64": "complex64", "cfloat": "complex64",
    "complex128": "complex128", "cdouble": "complex128",
}  # fmt: skip


class TorchDtype(str):
    """A torch dtype met in a pickle (torch.float32): its name, as a str."""

    def __repr__(self):
        return f"torch.{str.__str__(self)}"

    def __reduce__(self):
        return (TorchDtype, (str(self),))


class _StorageType:
    """torch.FloatStorage and friends, as the storage ids of pickles name them."""

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self):
        return f"<storage type torch.{self.name}>"


class _Storage:
    __slots__ = ("buffer", "dtype", "numel", "key")

    def __init__(self, buffer, dtype, numel, key):
        self.buffer = buffer
        self.dtype = dtype
        self.numel = numel
        self.key = key


class _TensorType:
    """torch.Tensor / torch.nn.Parameter as _rebuild_from_type_v2 names them."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<tensor type {self.name}>"


class TensorData:
    """A read-only tensor view over a storage buffer, for interpreters
    without numpy: the buffer (a memoryview of bytes), dtype name, offset,
    shape and stride (in elements). numpy.asarray() reads it without a copy
    through __array_interface__ (not for bfloat16)."""

    __slots__ = ("buffer", "dtype", "offset", "shape", "stride", "requires_grad")

    def __init__(self, buffer, dtype, offset, shape, stride, requires_grad=False):
        if dtype not in _DTYPES:
            raise ValueError(f"unknown tensor dtype {dtype!r}")
        self.buffer = memoryview(buffer).cast("B")
        self.dtype = dtype
        self.offset = offset
        self.shape = tuple(shape)
        self.stride = tuple(stride)
        self.requires_grad = requires_grad

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return _ITEMSIZE[self.dtype]

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def __array_interface__(self):
        typestr = _DTYPES[self.dtype][1]
        if typestr is None:
            raise AttributeError("bfloat16 has no numpy array interface")
        size = self.itemsize
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": typestr,
            "data": self.buffer,
            "offset": self.offset * size,
            "strides": tuple(s * size for s in self.stride),
        }

    def item_at(self, index):
        """The element at a flat storage index, as a Python number."""
        fmt, _, size = _DTYPES[self.dtype]
        vals = struct.unpack_from(fmt, self.buffer, index * size)
        if self.dtype == "bfloat16":
            return struct.unpack("<f", struct.pack("<I", vals[0] << 16))[0]
        if len(vals) == 2:
            return complex(*vals)
        return vals[0]

    def tolist(self):
        def walk(dim, base):
            if dim == len(self.shape):
                return self.item_at(base)
            return [walk(dim + 1, base + i * self.stride[dim]) for i in range(self.shape[dim])]

        return walk(0, self.offset)

    def __repr__(self):
        return (
            f"TensorData(dtype={self.dtype}, shape={self.shape}, "
            f"stride={self.stride}, offset={self.offset})"
        )

    def __reduce_ex__(self, protocol):
        # Protocol 5 lets the buffer travel out of band (no copy).
        buf = pickle.PickleBuffer(self.buffer) if protocol >= 5 else self.buffer.tobytes()
        return (TensorData, (buf, self.dtype, self.offset, self.shape, self.stride, self.requires_grad))


_numpy_module = None


def _numpy():
    global _numpy_module
    if _numpy_module is None:
        try:
            import numpy
        except ImportError:
            numpy = False
        _numpy_module = numpy
    return _numpy_module or None


def default_tensor_factory(buffer, dtype, offset, size, stride, requires_grad=False):
    """A numpy array viewing buffer (read-only, no copy) if numpy imports,
    else a TensorData. numpy has no bfloat16: those become float32 copies."""
    np = _numpy()
    if np is None:
        return TensorData(buffer, dtype, offset, size, stride, requires_grad)
    itemsize = _ITEMSIZE[dtype]
    strides = tuple(s * itemsize for s in stride)
    if dtype == "bfloat16":
        raw = np.ndarray(size, "<u2", buffer=buffer, offset=offset * 2, strides=strides)
        return (raw.astype("<u4") << 16).view("<f4")
    if _numel(size) == 0:  # an empty tensor: its offset may be past the end
        return np.ndarray(size, _DTYPES[dtype][1], buffer=b"")
    return np.ndarray(size, _DTYPES[dtype][1], buffer=buffer, offset=offset * itemsize, strides=strides)


def _numel(size):
    n = 1
    for d in size:
        n *= d
    return n


class _ScriptModuleStub:
    """torch.jit._script.unpackage_script_module, which gosr cannot run."""

    def __call__(self, importer, *args):
        raise PackageError(
            f"archive {importer.name}: a pickle holds a TorchScript module; "
            f"TorchScript modules are loaded by gosr's Go loader, not inside Python"
        )


_unpackage_script_module = _ScriptModuleStub()

# Modules a pickle may name for plain Python and numpy objects even when
# the package does not list them as extern (torch.package would refuse);
# replicated objects need them.
_PICKLE_SYSTEM_MODULES = frozenset([
    "builtins", "copyreg", "_codecs", "collections", "datetime", "decimal",
    "fractions", "uuid", "numpy", "numpy.core.multiarray", "numpy.core.numeric",
    "numpy.core._multiarray_umath", "numpy._core.multiarray", "numpy._core.numeric",
])  # fmt: skip


class _PackageUnpickler(pickle.Unpickler):
    """Resolves globals through the importer; torch's storages and tensor
    rebuild functions are replaced by the importer's tensor factory."""

    def __init__(self, file, importer, entry, *, buffers=None):
        super().__init__(file, buffers=buffers)
        self._importer = importer
        self._entry = entry
        self._reduces = {}
        self._made = {}  # id(tensor) -> (tensor, factory args)

    def _where(self):
        name = self._importer.name if self._importer is not None else "<no package>"
        return f"archive {name}: entry {self._entry}"

    def find_class(self, module, name):
        module = demangle(module)
        special = self._torch_global(module, name)
        if special is not None:
            return special
        if module == __name__:
            return _getattribute(sys.modules.get(__name__) or _this_module(), name)[0]
        imp = self._importer
        if imp is None or (module in _PICKLE_SYSTEM_MODULES and not imp._knows(module)):
            extern_import = imp._extern_import if imp is not None else importlib.import_module
            mod = extern_import(module)
        else:
            mod = imp.import_module(module)
        try:
            return _getattribute(mod, name)[0]
        except AttributeError:
            raise AttributeError(f"{self._where()}: module {module!r} has no attribute {name!r}") from None

    def _torch_global(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module.partition(".")[0] != "torch":
            return None
        if module in ("torch", "torch.cuda", "torch.storage") and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        if module == "torch":
            if name in _TORCH_DTYPE_NAMES:
                return TorchDtype(_TORCH_DTYPE_NAMES[name])
            if name == "Size":
                return tuple
            if name == "device":
                return _device
            if name == "Tensor":
                return _TensorType("torch.Tensor")
        if module == "torch._utils":
            fn = {
                "_rebuild_tensor_v2": self._rebuild_tensor_v2,
                "_rebuild_tensor": self._rebuild_tensor,
                "_rebuild_parameter": self._rebuild_parameter,
                "_rebuild_parameter_with_state": self._rebuild_parameter,
            }.get(name)
            if fn is not None:
                return fn
        if module == "torch._tensor":
            if name == "_rebuild_from_type_v2":
                return _rebuild_from_type_v2
            if name == "Tensor":
                return _TensorType("torch.Tensor")
        if (module, name) == ("torch.nn.parameter", "Parameter"):
            return _TensorType("torch.nn.Parameter")
        if (module, name) == ("torch.jit._script", "unpackage_script_module"):
            return _unpackage_script_module
        return None  # anything else needs torch itself

    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)

    def _rebuild_tensor_v2(
        self, storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
    ):
        if not isinstance(storage, _Storage):
            raise PackageError(
                f"{self._where()}: a tensor's storage is {type(storage).__name__}, not a storage id"
            )
        size, stride = tuple(size), tuple(stride)
        bad = len(size) != len(stride) or any(d < 0 for d in size) or storage_offset < 0
        if not bad and _numel(size) > 0:
            if any(s < 0 for s in stride):
                bad = True
            else:
                last = storage_offset + sum((d - 1) * s for d, s in zip(size, stride))
                bad = last >= storage.numel
        if bad:
            raise PackageError(
                f"{self._where()}: tensor of size {size}, stride {stride}, offset "
                f"{storage_offset} does not fit in storage {storage.key} "
                f"({storage.numel} {storage.dtype} elements)"
            )
        return self._make_tensor(
            storage.buffer, storage.dtype, storage_offset, size, stride, bool(requires_grad)
        )

    def _make_tensor(self, *args):
        factory = self._importer.tensor_factory if self._importer is not None else default_tensor_factory
        t = factory(*args)
        self._made[id(t)] = (t, args)
        return t

    def _rebuild_parameter(self, data, requires_grad, backward_hooks, state=None):
        # The tensor inside a Parameter was pickled without requires_grad;
        # make it again (a view, not a copy) with the Parameter's.
        made = self._made.get(id(data))
        if made is not None and made[0] is data and made[1][5] != bool(requires_grad):
            return self._make_tensor(*made[1][:5], bool(requires_grad))
        return data

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError(f"{self._where()}: bad persistent id {pid!r}")
        typename = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        data = pid[1:]
        if typename == "storage":
            if self._importer is None or len(data) != 4:
                raise pickle.UnpicklingError(f"{self._where()}: bad storage id {pid!r}")
            storage_type, key, _location, numel = data
            if not isinstance(storage_type, _StorageType):
                raise PackageError(
                    f"{self._where()}: storage {key} has type {storage_type!r}, "
                    f"not a torch storage type"
                )
            return self._importer._storage(storage_type.dtype, str(key), numel, self._entry)
        if typename == "reduce_package":
            if len(data) == 2:
                reduce_id, (func, args) = None, data
            elif len(data) == 3:
                reduce_id, func, args = data
            else:
                raise pickle.UnpicklingError(f"{self._where()}: bad reduce_package id")
            if func is _unpackage_script_module:
                raise PackageError(
                    f"{self._where()}: holds a TorchScript module (ScriptModule "
                    f"{args[0] if args else '?'}); TorchScript modules are loaded by "
                    f"gosr's Go loader, not inside Python"
                )
            if reduce_id is None:
                return func(self._importer, *args)
            if reduce_id not in self._reduces:
                self._reduces[reduce_id] = func(self._importer, *args)
            return self._reduces[reduce_id]
        raise pickle.UnpicklingError(
            f"{self._where()}: unknown persistent id {typename!r}, expected 'storage' or 'reduce_package'"
        )


def _rebuild_from_type_v2(func, new_type, args, state):
    return func(*args)


def _device(kind, index=None):
    return kind if index is None else f"{kind}:{index}"


def _this_module():
    return types.SimpleNamespace(**globals())


def _getattribute(obj, name):
    """(attribute at a dotted qualname, its parent), as pickle's."""
    parent = None
    for part in name.split("."):
        if part == "<locals>":
            raise AttributeError(f"Can't get local attribute {name!r} on {obj!r}")
        parent, obj = obj, getattr(obj, part)
    return obj, parent


def _unpickle(data, importer, entry, buffers=None):
    up = _PackageUnpickler(io.BytesIO(data), importer, entry, buffers=buffers)
    try:
        return up.load()
    except PackageError:
        raise
    except (pickle.UnpicklingError, EOFError, struct.error, IndexError, UnicodeDecodeError) as e:
        name = importer.name if importer is not None else "<no package>"
        raise PackageError(f"archive {name}: entry {entry}: corrupt pickle: {type(e).__name__}: {e}") from e
    except Exception as e:
        name = importer.name if importer is not None else "<no package>"
        e.add_note(f"while unpickling {entry} of archive {name}")
        raise


def loads(data, importer, *, buffers=None):
    """Unpickle data (from dumps), resolving classes through importer."""
    return _unpickle(data, importer, "<dumps data>", buffers=buffers)


# --- pickling with demangled names (torch.package's create_pickler) --------


class _DemanglingPickler(pickle._Pickler):
    """Writes globals by their names inside the package ('pkg.mod', not
    '<gosr_package_3>.pkg.mod'), so another importer of the same archive,
    in this interpreter or another, can load them."""

    def __init__(self, file, importer, **kwargs):
        super().__init__(file, **kwargs)
        self._importer = importer
        # The pure-Python pickler saves functions through a table that
        # bypasses method lookup; route them to save_global too.
        self.dispatch = pickle._Pickler.dispatch.copy()
        self.dispatch[types.FunctionType] = _DemanglingPickler.save_global

    def _find(self, obj, name):
        module_name = getattr(obj, "__module__", None)
        if module_name is None:
            module_name = pickle.whichmodule(obj, name)
        plain = demangle(module_name)
        if module_name == __name__:
            module = sys.modules.get(__name__) or _this_module()
        elif is_mangled(module_name):
            owner = _importers.get(_mangle_prefix(module_name)) or self._importer
            if owner is None:
                raise pickle.PicklingError(f"Can't pickle {obj!r}: its importer {module_name} is gone")
            module = owner.import_module(plain)
        else:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                if self._importer is None:
                    raise
                module = self._importer.import_module(module_name)
        return plain, module

    def save_global(self, obj, name=None):
        if name is None:
            name = getattr(obj, "__qualname__", None) or obj.__name__
        try:
            module_name, module = self._find(obj, name)
            obj2, parent = _getattribute(module, name)
        except (ImportError, AttributeError) as e:
            raise pickle.PicklingError(f"Can't pickle {obj!r}: not found as {name}: {e}") from None
        if obj2 is not obj:
            raise pickle.PicklingError(
                f"Can't pickle {obj!r}: it's not the same object as {module_name}.{name}"
            )
        lastname = name.rpartition(".")[2]
        if parent is module:
            name = lastname
        if self.proto >= 4:
            self.save(module_name)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        elif parent is not module:
            self.save_reduce(getattr, (parent, lastname))
        elif self.proto >= 3:
            self.write(pickle.GLOBAL + module_name.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        else:
            if self.fix_imports:
                import _compat_pickle

                if (module_name, name) in _compat_pickle.REVERSE_NAME_MAPPING:
                    module_name, name = _compat_pickle.REVERSE_NAME_MAPPING[(module_name, name)]
                elif module_name in _compat_pickle.REVERSE_IMPORT_MAPPING:
                    module_name = _compat_pickle.REVERSE_IMPORT_MAPPING[module_name]
            try:
                self.write(pickle.GLOBAL + module_name.encode("ascii") + b"\n" + name.encode("ascii") + b"\n")
            except UnicodeEncodeError:
                raise pickle.PicklingError(
                    f"can't pickle global identifier '{module_name}.{name}' "
                    f"using pickle protocol {self.proto}"
                ) from None
        self.memoize(obj)


def dumps(obj, importer=None, *, protocol=5, buffer_callback=None):
    """Pickle obj with packaged modules' names demangled, so that an object
    loaded from a package can be loaded by another importer of the same
    archive (loads). With protocol 5 and a buffer_callback, arrays travel
    out of band."""
    f = io.BytesIO()
    _DemanglingPickler(f, importer, protocol=protocol, buffer_callback=buffer_callback).dump(obj)
    return f.getvalue()


# --- file_structure (file_structure_representation.py, glob_group.py) -----


class Directory:
    """A file tree of an archive's entries (PackageImporter.file_structure)."""

    def __init__(self, name, is_dir):
        self.name = name
        self.is_dir = is_dir
        self.children = {}

    def _get_dir(self, dirs):
        cur = self
        for d in dirs:
            cur = cur.children.setdefault(d, Directory(d, True))
        return cur

    def _add_file(self, file_path):
        *dirs, file = file_path.split("/")
        self._get_dir(dirs).children[file] = Directory(file, False)

    def has_file(self, filename):
        child, _, rest = filename.partition("/")
        if child not in self.children:
            return False
        return True if not rest else self.children[child].has_file(rest)

    def __str__(self):
        out = []
        self._stringify(out, "", "─── ")
        return "".join(out)

    def _stringify(self, out, preamble, pointer):
        out.append(f"{preamble}{pointer}{self.name}\n")
        preamble += "│   " if pointer == "├── " else "    "
        dirs = sorted(k for k, v in self.children.items() if v.is_dir)
        files = sorted(k for k, v in self.children.items() if not v.is_dir)
        for i, key in enumerate(dirs):
            last = i == len(dirs) - 1 and not files
            self.children[key]._stringify(out, preamble, "└── " if last else "├── ")
        for i, key in enumerate(files):
            out.append(f"{preamble}{'└── ' if i == len(files) - 1 else '├── '}{key}\n")


class _GlobGroup:
    """torch.package's glob patterns ('**', 'a*b') over '/'-separated names."""

    def __init__(self, include, exclude=(), separator="/"):
        self.separator = separator
        self.include = self._compile(include)
        self.exclude = self._compile(exclude)

    def matches(self, candidate):
        candidate = self.separator + candidate
        return any(p.fullmatch(candidate) for p in self.include) and not any(
            p.fullmatch(candidate) for p in self.exclude
        )

    def _compile(self, patterns):
        if isinstance(patterns, str):
            patterns = [patterns]
        return [self._to_re(p) for p in patterns]

    def _to_re(self, pattern):
        sep = re.escape(self.separator)
        parts = []
        for component in pattern.split(self.separator):
            if "**" in component:
                if component != "**":
                    raise ValueError("** can only appear as an entire path segment")
                parts.append(f"({sep}[^{sep}]+)*")
            else:
                parts.append(sep + f"[^{sep}]*".join(re.escape(x) for x in component.split("*")))
        return re.compile("".join(parts))
