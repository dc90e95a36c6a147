#!/usr/bin/env python3
"""Times an ONNX model with ONNX Runtime's Python package on the CPU: the same session and
timing as time_ort.js (onnxruntime-node), for machines that have Python's onnxruntime and no
Node.js (the GPU machine's 16-core host).

  python3 time_ort.py MODEL_DIR [--name NAME] [--threads 2] [--runs N] [--warmup N]
                                [--min-seconds S] [--no-spin]

MODEL_DIR is a directory written by export_models.py (model.onnx, input.npy, output.npy).
Session: CPU execution provider, all graph optimizations, sequential execution, --threads
intra-op threads, one inter-op thread. Prints the check against output.npy, then
  BENCH <name>_ort_ms <median> ms
"""
import argparse
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_timing import time_calls  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--name")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=0, help="timed runs (default: by time)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=2.0)
    ap.add_argument("--no-spin", action="store_true", help="idle pool threads sleep instead of spinning")
    a = ap.parse_args()
    if a.threads < 1 or a.runs < 0 or a.warmup < 0:
        raise SystemExit("time_ort.py: --threads must be >= 1, --runs and --warmup >= 0")
    model = os.path.join(a.model_dir, "model.onnx")
    if not os.path.exists(model):
        raise SystemExit("time_ort.py: %s has no model.onnx (run export_models.py)" % a.model_dir)
    name = a.name or os.path.basename(os.path.abspath(a.model_dir))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = a.threads
    options.inter_op_num_threads = 1
    if a.no_spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(a.model_dir, "input.npy"))
    feeds = {session.get_inputs()[0].name: x}

    status = 0
    y = session.run(None, feeds)[0]
    reference = os.path.join(a.model_dir, "output.npy")
    if os.path.exists(reference):
        ref = np.load(reference)
        diff = float(np.abs(y - ref).max())
        rel = diff / max(float(np.abs(ref).max()), 1e-30)
        print("# ort %s: output vs torch reference: max abs diff %.2e (relative to max %.2e)" % (name, diff, rel), flush=True)
        if not rel < 1e-3:
            print("time_ort.py: %s: output differs from the reference (relative %g)" % (name, rel), file=sys.stderr)
            status = 1

    t = np.array(time_calls(lambda: session.run(None, feeds), a.warmup, a.runs, a.min_seconds))
    print("# ort %s: %d runs, %d intra-op threads: median %.3f min %.3f mean %.3f p90 %.3f ms (onnxruntime %s, Python%s)"
          % (name, len(t), a.threads, np.median(t), t.min(), t.mean(), np.percentile(t, 90), ort.__version__,
             ", no spinning" if a.no_spin else ""))
    print("BENCH %s_ort_ms %.3f ms" % (name, float(np.median(t))), flush=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
