"""The tokenizer fixture's Python function in plain CPython, in 1 and in 2
separate processes, rounds interleaved: the control for issue 7's figure
(srbench run -model testdata/pyfallback/tokenizer.pt -threads 2
-interpreters 1,2). Separate processes share nothing but the hardware, so
how far 2 fall short of 2x is what the machine costs two cores running
this Python; gosr's interpreters in one process are measured against it.

Usage: /usr/bin/python3 scripts/py_process_scaling.py [ROUNDS [SECONDS]]
(defaults 11 rounds of 1 s). Each process calls textpkg.tok.tokenize on
the fixture's batches in turn, as srbench does with the fixture's cases.
Needs no torch.
"""

import multiprocessing as mp
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "scripts", "pyfallback_src"))

from make_pyfallback_testdata import TOKENIZER_BATCHES  # noqa: E402
from textpkg.tok import tokenize  # noqa: E402


def worker(go, out, span):
    for i in range(200):
        tokenize(TOKENIZER_BATCHES[i % len(TOKENIZER_BATCHES)])
    out.put(0.0)
    while go.get():
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < span:
            tokenize(TOKENIZER_BATCHES[n % len(TOKENIZER_BATCHES)])
            n += 1
        out.put(n / (time.perf_counter() - t0))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    span = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    out = mp.Queue()
    gos = [mp.Queue(), mp.Queue()]
    procs = [mp.Process(target=worker, args=(g, out, span), daemon=True) for g in gos]
    for p in procs:
        p.start()
    for _ in procs:
        out.get()
    r1, r2, paired = [], [], []
    for _ in range(rounds):
        gos[0].put(1)
        a = out.get()
        for g in gos:
            g.put(1)
        b = out.get() + out.get()
        r1.append(a)
        r2.append(b)
        paired.append(b / a)
    for g in gos:
        g.put(0)
    m1, m2 = statistics.median(r1), statistics.median(r2)
    print(f"CPython, textpkg.tok.tokenize: 1 process {m1:.0f} calls/s, 2 processes {m2:.0f} calls/s, "
          f"ratio {m2 / m1:.2f}x, median paired ratio {statistics.median(paired):.2f}x "
          f"({rounds} interleaved rounds of {span:g} s)")


if __name__ == "__main__":
    main()
