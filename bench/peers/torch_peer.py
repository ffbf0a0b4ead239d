"""torch_peer.py - the PyTorch side of kindling's benchmark (bench/run.js runs it).

Reads one JSON request on stdin:
  {"threads": 2, "min_sample_s": 0.02, "warmup_s": 0.05, "repeats": 11,
   "cases": [{"name": "add", "size": 1024}, ...]}
and prints one JSON object on stdout:
  {"torch": "2.3.0", "threads": 2, "results": [{"name", "size", "batch", "median_s", "best_s", "samples"}]}
Each case is timed exactly as the JS side times kindling: calls are batched so one sample
lasts at least min_sample_s (after warmup_s of warm-up), `repeats` samples are taken, and
median_s is the median time per call. A case this file does not know gets an "error".
Results are dropped right away (refcounting frees them), as the JS side disposes its own.
"""
import json
import statistics
import sys
import time

import torch


def case_add_overhead(size):
    a = torch.randn(size)
    b = torch.randn(size)
    return lambda: a.add(b)


def case_add(size):
    a = torch.randn(size)
    b = torch.randn(size)
    return lambda: a.add(b)


def case_matmul(size):
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    return lambda: torch.matmul(a, b)


CASES = {
    "add.overhead": case_add_overhead,
    "add": case_add,
    "matmul": case_matmul,
}


def measure(fn, min_sample_s, warmup_s, repeats):
    clock = time.perf_counter
    # warm-up, and calibration of the batch so that one sample lasts >= min_sample_s
    end = clock() + warmup_s
    while clock() < end:
        fn()
    batch = 1
    while True:
        t0 = clock()
        for _ in range(batch):
            fn()
        dt = clock() - t0
        if dt >= min_sample_s or batch > (1 << 24):
            break
        batch *= int(min_sample_s / dt * 1.2) + 1 if dt > 0 else 10
    samples = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(batch):
            fn()
        samples.append((clock() - t0) / batch)
    return batch, samples


def main():
    req = json.load(sys.stdin)
    threads = int(req.get("threads") or 0)
    if threads > 0:
        torch.set_num_threads(threads)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "results": []}
    for c in req["cases"]:
        name, size = c["name"], c["size"]
        make = CASES.get(name)
        if make is None:
            out["results"].append({"name": name, "size": size, "error": "no PyTorch version of this case"})
            continue
        with torch.no_grad():
            batch, samples = measure(make(size), req["min_sample_s"], req["warmup_s"], req["repeats"])
        out["results"].append({"name": name, "size": size, "batch": batch, "median_s": statistics.median(samples),
                               "best_s": min(samples), "samples": samples})
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
