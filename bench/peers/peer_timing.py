"""The timing loop both Python peers use (time_torch.py, time_ort.py), as time_ort.js times ONNX
Runtime: warm-up calls, then single calls timed one by one until `runs` of them (when given) or
at least 10 and `min_seconds` of them (at most 1000). Returns the milliseconds of each call."""
import time


def time_calls(call, warmup, runs, min_seconds):
    for _ in range(warmup):
        call()
    times = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
        elapsed = time.perf_counter() - start
        if runs > 0:
            if len(times) >= runs:
                return times
        elif (len(times) >= 10 and elapsed >= min_seconds) or len(times) >= 1000:
            return times
