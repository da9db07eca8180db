"""Writes docs/compatibility.md's table from the compatibility suite's results.

Usage:
  go test -run TestZooMatchesPyTorch ./internal/compat/ -args -zoo-report /tmp/zoo-report.json
  go run ./cmd/srbench compare ZOO_DIR -json > /tmp/zoo-compare.json    # optional: times
  python3 scripts/zoo_table.py /tmp/zoo-report.json [/tmp/zoo-compare.json] > table.md
  python3 scripts/zoo_table.py --write docs/compatibility.md /tmp/zoo-report.json [/tmp/zoo-compare.json]

The report says, per archive, whether gosr loads it, matches PyTorch's
eager output (1e-4 of each output's largest magnitude) on two runs and
allocates nothing on a third, or at which stage it fails. The compare JSON
(srbench compare over the suite's directory) gives gosr's and PyTorch
Static Runtime's median time per run for each archive, one thread each.
With --write, the table replaces what stands between the file's
"<!-- zoo-table -->" and "<!-- /zoo-table -->" lines.
"""
import json
import re
import sys

VARIANTS = ("scripted", "traced", "scripted_frozen", "traced_frozen")
FAMILIES = ("classification", "segmentation", "video", "rnn", "transformer", "layers")


def cell(row):
    if row is None:
        return "-"
    if not row.get("stage"):
        return "yes"
    err = row.get("error", "")
    if row["stage"] == "allocate":
        n = re.match(r"(\S+) allocations", err)
        return "matches; %s allocations a run" % (n.group(1) if n else "some")
    m = re.search(r"(aten::\w+|prim::\w+)", err)
    what = m.group(1) if m else err.split(":")[-1].strip()[:40]
    return "no (%s: %s)" % (row["stage"], what)


def us(v):
    return "%.0f" % v if v >= 10 else "%.1f" % v


def pt_note(x):
    """Why PyTorch's Static Runtime has no time for a row."""
    note = x.get("note", "")
    if "timed out" in note:
        return "timed out"
    if "PyTorch failed" in note:
        return "fails: " + note.strip().splitlines()[-1].split(":", 1)[-1].strip()[:60]
    return "-"


def table(report, times):
    by_model = {}
    for r in report:
        by_model.setdefault((r["family"], r["model"]), {})[r["variant"]] = r
    ok = sum(1 for r in report if not r.get("stage"))
    match = sum(1 for r in report if r.get("stage") in (None, "", "allocate"))
    lines = ["%d of %d archives load and match PyTorch; %d of them also run without allocating." % (match, len(report), ok), ""]
    head = ["family", "model"] + list(VARIANTS) + ["gosr us", "PyTorch SR us", "PyTorch SR / gosr"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    order = {f: i for i, f in enumerate(FAMILIES)}
    for (family, model), vs in sorted(by_model.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        tcols = ["-", "-", "-"]
        for v in ("traced_frozen", "scripted_frozen", "traced", "scripted"):
            x = times.get("%s.%s" % (model, v))
            if not x or not x.get("gosr_us") or not vs.get(v) or vs[v].get("stage"):
                continue
            g, sr = x["gosr_us"], x.get("pytorch_static_runtime_us")
            tcols = ["%s (%s)" % (us(g), v), us(sr) if sr else pt_note(x), "%.2fx" % (sr / g) if sr else "-"]
            break
        lines.append("| " + " | ".join([family, model] + [cell(vs.get(v)) for v in VARIANTS] + tcols) + " |")
    return "\n".join(lines) + "\n"


def main():
    args = sys.argv[1:]
    out = None
    if args and args[0] == "--write":
        out, args = args[1], args[2:]
    if not args:
        raise SystemExit(__doc__)
    with open(args[0]) as f:
        report = json.load(f)
    times = {}
    if len(args) > 1:
        with open(args[1]) as f:
            for x in json.load(f):
                times[x["model"]] = x
    t = table(report, times)
    if out is None:
        sys.stdout.write(t)
        return
    with open(out) as f:
        doc = f.read()
    start, end = "<!-- zoo-table -->\n", "<!-- /zoo-table -->"
    i, j = doc.index(start) + len(start), doc.index(end)
    with open(out, "w") as f:
        f.write(doc[:i] + t + doc[j:])


if __name__ == "__main__":
    main()
