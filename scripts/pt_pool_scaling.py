"""PyTorch's Static Runtime on one model in 1 or 2 worker processes, round by
round on request: the control for gosr's pool figure (loaders'
BenchmarkPoolScaling). Separate processes share no memory at all, so how far their
throughput falls short of 2x is what the machine itself costs two busy
cores running this kind of work.

Usage: pt_pool_scaling.py MODEL.pt INPUTS.pt SPAN_SECONDS
Prints "ready" once both workers have loaded the model and warmed up, then
for each line N (1 or 2) read from stdin runs N workers for SPAN_SECONDS
each and prints their summed rate (runs per second). EOF ends it.
"""

import multiprocessing as mp
import sys
import time

import torch


def worker(path, inputs_path, span, go, out):
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    m = torch.jit.load(path)
    inputs = torch.load(inputs_path)
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    sm = torch._C._jit_to_static_module(m._c)
    for _ in range(100):
        sm(*inputs)
    out.put(0.0)
    while go.get():
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < span:
            sm(*inputs)
            n += 1
        out.put(n / (time.perf_counter() - t0))


def main():
    path, inputs_path, span = sys.argv[1], sys.argv[2], float(sys.argv[3])
    out = mp.Queue()
    gos = [mp.Queue(), mp.Queue()]
    procs = [mp.Process(target=worker, args=(path, inputs_path, span, g, out), daemon=True) for g in gos]
    for p in procs:
        p.start()
    for _ in procs:
        out.get()
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        for g in gos[:n]:
            g.put(True)
        print(sum(out.get() for _ in range(n)), flush=True)
    for g in gos:
        g.put(False)
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
