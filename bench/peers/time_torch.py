#!/usr/bin/python3
"""Times a zoo network exported by export_models.py with PyTorch (Debian python3-torch).

  /usr/bin/python3 time_torch.py MODEL_DIR [--name NAME] [--threads 2] [--runs N]
                                           [--warmup N] [--min-seconds S]

The network is rebuilt from its torchvision definition with the weights saved in
MODEL_DIR/weights, then run as TorchScript: torch.jit.trace, torch.jit.freeze,
torch.jit.optimize_for_inference (which moves convolutions to oneDNN). Eager mode is not
timed: Debian's build runs some batch-1 convolutions through the reference BLAS, which
would make PyTorch an unfairly slow peer. torch.set_num_threads(--threads, default 2).
Prints the check against output.npy, then
  BENCH <name>_torch_ms <median> ms
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402
from peer_timing import time_calls  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--name")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=0, help="timed runs (default: by time)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=2.0)
    a = ap.parse_args()
    if a.threads < 1 or a.runs < 0 or a.warmup < 0:
        raise SystemExit("time_torch.py: --threads must be >= 1, --runs and --warmup >= 0")
    if not os.path.exists(os.path.join(a.model_dir, "manifest.json")):
        raise SystemExit("time_torch.py: %s has no manifest.json (run export_models.py)"
                         % a.model_dir)
    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass

    model, man = export_models.load_exported(a.model_dir)
    name = a.name or man["model"]
    x = torch.from_numpy(np.load(os.path.join(a.model_dir, "input.npy")))
    ref = np.load(os.path.join(a.model_dir, "output.npy"))
    with torch.no_grad():
        ts = torch.jit.trace(model, x)
        ts = torch.jit.freeze(ts.eval())
        ts = torch.jit.optimize_for_inference(ts)
        y = ts(x).numpy()
        diff = float(np.abs(y - ref).max())
        rel = diff / max(float(np.abs(ref).max()), 1e-30)
        print("# torch %s: output vs reference: max abs diff %.2e (relative to max %.2e)"
              % (name, diff, rel), flush=True)
        status = 0
        if not rel < 1e-3:
            print("time_torch.py: %s: output differs from the reference (relative %g)"
                  % (name, rel), file=sys.stderr)
            status = 1

        times = time_calls(lambda: ts(x), a.warmup, a.runs, a.min_seconds)
    t = np.array(times)
    print("# torch %s: %d runs, %d threads, TorchScript frozen+optimize_for_inference: "
          "median %.3f min %.3f mean %.3f p90 %.3f ms (torch %s%s)"
          % (name, len(t), a.threads, np.median(t), t.min(), t.mean(),
             np.percentile(t, 90), torch.__version__,
             ", OMP_WAIT_POLICY=" + os.environ["OMP_WAIT_POLICY"]
             if os.environ.get("OMP_WAIT_POLICY") else ""))
    print("BENCH %s_torch_ms %.3f ms" % (name, float(np.median(t))), flush=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
