#!/usr/bin/env bash
# Installs the peers that bench/peers/run.sh times tessel against. Idempotent: what is
# already installed is skipped, so a second run takes about a second.
#   - Debian: python3-torch, python3-torchvision, python3-onnx (run by /usr/bin/python3)
#   - npm:    onnxruntime-node into bench/peers/node_modules (versions in package-lock.json)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

debs=(python3-torch python3-torchvision python3-onnx python3-numpy)
missing=()
for p in "${debs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "install.sh: apt-get install ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  # An old or empty package list finds nothing: refresh it first.
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f "$here/node_modules/onnxruntime-node/package.json" ]; then
  command -v npm >/dev/null || { echo "install.sh: npm not found (apt-get install npm)" >&2; exit 1; }
  echo "install.sh: npm ci onnxruntime-node"
  # The package's install script downloads CUDA libraries from outside the registry, which
  # cannot be reached here; the CPU library ships inside the package itself.
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi

/usr/bin/python3 -c 'import torch, torchvision, onnx, numpy' || {
  echo "install.sh: /usr/bin/python3 cannot import torch/torchvision/onnx/numpy" >&2; exit 1; }
(cd "$here" && node -e 'require("onnxruntime-node")') || {
  echo "install.sh: node cannot load onnxruntime-node" >&2; exit 1; }
echo "install.sh: peers ready"
