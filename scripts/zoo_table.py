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
    m = re.search(r"(aten::\w+|prim::\w+)", err)
    what = m.group(1) if m else err.split(":")[-1].strip()[:40]
    return "no (%s: %s)" % (row["stage"], what)


def table(report, times):
    by_model = {}
    for r in report:
        by_model.setdefault((r["family"], r["model"]), {})[r["variant"]] = r
    ok = sum(1 for r in report if not r.get("stage"))
    lines = ["%d of %d archives load, match PyTorch and run without allocating." % (ok, len(report)), ""]
    head = ["family", "model"] + list(VARIANTS) + ["gosr us", "PyTorch SR us", "PyTorch SR / gosr"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    order = {f: i for i, f in enumerate(FAMILIES)}
    for (family, model), vs in sorted(by_model.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        t = None
        for v in ("traced_frozen", "scripted_frozen", "traced", "scripted"):
            x = times.get("%s.%s" % (model, v))
            if x and vs.get(v) and not vs[v].get("stage") and x.get("gosr_us") and x.get("pytorch_static_runtime_us"):
                t = (v, x["gosr_us"], x["pytorch_static_runtime_us"])
                break
        tcols = ["-", "-", "-"]
        if t:
            tcols = ["%.0f (%s)" % (t[1], t[0]), "%.0f" % t[2], "%.2fx" % (t[2] / t[1])]
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
