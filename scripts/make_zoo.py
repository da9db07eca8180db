"""Writes gosr's compatibility suite: real models (scripts/zoo_models.py),
each saved as users save it, for the Go test that loads and runs every one
(internal/ptfixture.ZooDir, loaders/zoo_test.go) and for srbench compare.

Usage: /usr/bin/python3 scripts/make_zoo.py OUTDIR [--only NAME...] [-j N]
       /usr/bin/python3 scripts/make_zoo.py --cache   (make zoo: into the directory the Go tests read)

--cache writes to <cache root>/zoo-<first 16 hex digits of
generator_sha256>, as internal/ptfixture.ZooDir finds it (the root is
$GOSR_PT_CACHE, else Go's os.UserCacheDir's gosr: $XDG_CACHE_HOME/gosr,
else ~/.cache/gosr), unless a manifest of this generator is there already.

For each model NAME, OUTDIR gets NAME.{scripted,traced,scripted_frozen,
traced_frozen}.pt (torch.jit.save of torch.jit.script / torch.jit.trace of
the eval-mode module, and torch.jit.freeze of each), NAME.inputs.pt (the
tuple of positional inputs) and NAME.expected.pt (the eager model's output,
NamedTuples as plain tuples). Where a variant's own output has another
structure than the eager one (a scripted GoogLeNet returns
GoogLeNetOutputs(logits, None, None) where eager returns the logits; a
traced segmentation model a tuple where eager returns a dict), the variant's
output is written as NAME.VARIANT.expected.pt after its tensors were checked
against the eager ones. Every saved variant is loaded back and run first; a
variant PyTorch itself cannot make or run is left out and the manifest's
"skipped" says why.

manifest.json has the same form as make_pt_testdata.py's (read by
internal/ptfixture), plus each case's family and tol_scale: a Go result
must match each expected tensor within tol_scale times that tensor's
largest magnitude (1e-4, the issue's bound, unless zoo_models.TOLS says
why not). generator_sha256 covers this file, make_pt_testdata.py (whose
helpers it uses) and zoo_models.py.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import warnings
import zlib

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) if "__file__" in globals() else os.getcwd()
SELF = "scripts/make_zoo.py"
MODELS_FILE = "scripts/zoo_models.py"
HELPERS = "scripts/make_pt_testdata.py"
VARIANTS = ("scripted", "traced", "scripted_frozen", "traced_frozen")
TOL_SCALE = 1e-4
CHECK = 1e-5  # a saved variant against the eager model, relative to the largest magnitude
CHILD_TIMEOUT = 900  # seconds for one model's child process

import torch  # noqa: E402


def load(path, name):
    """Executes a repository file under its relative name (TorchScript's
    debug info records it) as module name."""
    import types
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    with open(os.path.join(REPO_DIR, path)) as f:
        exec(compile(f.read(), path, "exec"), mod.__dict__)
    return mod


def generator_sha256():
    h = hashlib.sha256()
    for p in (SELF, HELPERS, MODELS_FILE):
        with open(os.path.join(REPO_DIR, p), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def plain(v):
    """The value with NamedTuples as tuples and dicts kept (torch.save of a
    NamedTuple would pickle its class)."""
    if isinstance(v, torch.Tensor) or v is None:
        return v
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(plain(x) for x in v) if type(v) in (list, tuple) else tuple(plain(x) for x in v)
    return v


def tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, dict):
        return [t for x in v.values() for t in tensors(x)]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in tensors(x)]
    return []


def structure(v):
    if isinstance(v, torch.Tensor):
        return "T"
    if v is None:
        return "N"
    if isinstance(v, dict):
        return "{" + ",".join("%s:%s" % (k, structure(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "(" + ",".join(structure(x) for x in v) + ")"
    return type(v).__name__


def close(got, want, tol):
    """None if every tensor of want is matched by got's (in order, the
    extra Nones of a NamedTuple aside) within tol of its largest magnitude."""
    g, w = tensors(got), tensors(want)
    if len(g) != len(w):
        return "%d output tensors, eager gives %d" % (len(g), len(w))
    for i, (a, b) in enumerate(zip(g, w)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return "output %d is %s %s, eager gives %s %s" % (i, a.dtype, tuple(a.shape), b.dtype, tuple(b.shape))
        if a.numel() == 0:
            continue
        scale = b.double().abs().max().item() if b.is_floating_point() else 0.0
        d = (a.double() - b.double()).abs().max().item()
        if d > tol * max(scale, 1e-30) and d > 0:
            return "output %d differs from eager by %g (> %g of %g)" % (i, d, tol, scale)
    return None


def make(name, outdir):
    """Child process: writes one model's files; returns (entries, skipped)."""
    helpers = load(HELPERS, "make_pt_testdata_helpers")
    zoo = load(MODELS_FILE, "zoo_models")
    builder, family = zoo.MODELS[name]
    torch.manual_seed(zlib.crc32(name.encode()))
    module, inputs = builder()
    module.eval()
    with torch.no_grad():
        expected = module(*inputs)
    tol, why = zoo.TOLS.get(name, (TOL_SCALE, ""))
    skip = zoo.SKIP.get(name, {})
    made, skipped = {}, []
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in ("scripted", "traced"):
            if v in skip:
                skipped.append({"model": name, "variant": v, "why": skip[v]})
                continue
            try:
                if v == "scripted":
                    made[v] = torch.jit.script(module)
                else:
                    made[v] = torch.jit.trace(module, inputs, check_trace=False, strict=False)
            except Exception as e:  # noqa: BLE001 - recorded
                skipped.append({"model": name, "variant": v, "why": helpers.err_line(e)})
                continue
            try:
                made[v + "_frozen"] = torch.jit.freeze(made[v])
            except Exception as e:  # noqa: BLE001 - recorded
                skipped.append({"model": name, "variant": v + "_frozen", "why": helpers.err_line(e)})
    entries = []
    for variant in VARIANTS:
        if variant not in made:
            continue
        path = "%s.%s.pt" % (name, variant)
        full = os.path.join(outdir, path)
        torch.jit.save(made[variant], full)
        loaded = torch.jit.load(full)
        try:
            with torch.no_grad():
                got = loaded(*inputs)
        except Exception as e:  # noqa: BLE001 - recorded
            os.remove(full)
            skipped.append({"model": name, "variant": variant, "why": "PyTorch cannot run it: " + helpers.err_line(e)})
            continue
        bad = close(got, expected, CHECK)
        if bad:
            os.remove(full)
            skipped.append({"model": name, "variant": variant, "why": "PyTorch's own run differs: " + bad})
            continue
        e = {"model": name, "variant": variant, "path": path, "family": family,
             "inputs": name + ".inputs.pt", "expected": name + ".expected.pt",
             "rtol": 0.0, "atol": 0.0, "tol_scale": tol, "large": True, "ops": helpers.op_kinds(loaded)}
        if why:
            e["tolerance_reason"] = why
        if structure(got) != structure(expected):
            e["expected"] = "%s.%s.expected.pt" % (name, variant)
            e["note"] = "its output is %s where eager gives %s" % (structure(got), structure(expected))
            torch.save(plain(got), os.path.join(outdir, e["expected"]))
        entries.append(e)
    torch.save(tuple(inputs), os.path.join(outdir, name + ".inputs.pt"))
    torch.save(plain(expected), os.path.join(outdir, name + ".expected.pt"))
    return entries, skipped


def one(name, outdir):
    torch.set_num_threads(1)
    out = make(name, outdir)
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)


def run_child(name, outdir):
    env = dict(os.environ, PYTHONHASHSEED="0")
    child = "exec(compile(open(%r).read(), %r, 'exec'))" % (SELF, SELF)
    cmd = [sys.executable, "-c", child, outdir, "--one", name]
    try:
        r = subprocess.run(cmd, env=env, cwd=REPO_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        return [], [{"model": name, "variant": "*", "why": "generation timed out after %d s" % CHILD_TIMEOUT}]
    if r.returncode != 0:
        tail = (r.stderr or "").strip().splitlines()[-3:]
        return [], [{"model": name, "variant": "*", "why": "generation failed (exit %d): %s" %
                     (r.returncode, " | ".join(tail))}]
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--cache", action="store_true", help="write to the cache directory the Go tests read")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("-j", type=int, default=max(1, min(2, os.cpu_count() or 1)), help="models made at once")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cache:
        root = os.environ.get("GOSR_PT_CACHE") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gosr")
        args.outdir = os.path.join(root, "zoo-" + generator_sha256()[:16])
        try:
            with open(os.path.join(args.outdir, "manifest.json")) as f:
                if json.load(f).get("generator_sha256") == generator_sha256():
                    print("make_zoo.py: %s is up to date" % args.outdir)
                    return
        except (OSError, ValueError):
            pass
        print("make_zoo.py: writing %s" % args.outdir, flush=True)
    if not args.outdir:
        ap.error("OUTDIR (or --cache) is required")
    outdir = os.path.abspath(args.outdir)
    if args.one:
        one(args.one, outdir)
        return
    models = load(MODELS_FILE, "zoo_models").MODELS
    names = list(models)
    if args.only:
        unknown = [n for n in args.only if n not in models]
        if unknown:
            ap.error("unknown model(s) %s; known: %s" % (", ".join(unknown), ", ".join(models)))
        names = args.only
    os.makedirs(outdir, exist_ok=True)
    manifest_path = os.path.join(outdir, "manifest.json")
    entries, skipped = [], []
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        entries = [e for e in old["cases"] if e["model"] not in names]
        skipped = [s for s in old.get("skipped", []) if s["model"] not in names]
    with concurrent.futures.ThreadPoolExecutor(args.j) as ex:
        for name, (got, skip) in zip(names, ex.map(lambda n: run_child(n, outdir), names)):
            entries.extend(got)
            skipped.extend(skip)
            print("%s: %s%s" % (name, ", ".join(e["variant"] for e in got) or "nothing",
                                "".join("; %s skipped: %s" % (s["variant"], s["why"]) for s in skip)), flush=True)
    order = list(models)
    key = lambda e: (order.index(e["model"]) if e["model"] in order else len(order), e["model"],  # noqa: E731
                     VARIANTS.index(e["variant"]) if e["variant"] in VARIANTS else -1)
    entries.sort(key=key)
    skipped.sort(key=key)
    manifest = {"torch_version": torch.__version__, "generator": SELF,
                "generator_sha256": generator_sha256(), "cases": entries, "skipped": skipped}
    tmp = manifest_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, manifest_path)


if __name__ == "__main__":
    main()
