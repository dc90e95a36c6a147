#!/usr/bin/env bash
# Installs the Debian packages tessel needs to build and test, skipping those already present.
# Idempotent: running it on a machine that has everything does nothing but check.
set -euo pipefail
packages=(
  cmake g++ make pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libfmt-dev libcli11-dev
  libdnnl-dev
  libxgboost-dev xgboost
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
  # clang builds both trees of `make test`, and lld links them (Makefile, CMakeLists.txt).
  clang libclang-rt-14-dev libomp-14-dev lld
  # The compile cache of the tests' kernels (tests/kernel-cache/gcc), and of rebuilds of the tree.
  ccache
  libonnx-dev libstb-dev
  # OpenCL: the loader and PoCL, which runs the OpenCL kernels of the tests on this CPU.
  ocl-icd-libopencl1 pocl-opencl-icd
  # The ONNX tests: the exporter of torchvision's networks, rendered text for PaddleOCR's cls.
  python3-onnx python3-numpy python3-torch python3-torchvision imagemagick fonts-dejavu-core
  # The `tessel` Python package (src/python): its bindings, the headers they build against, its tests.
  pybind11-dev python3-dev python3-pytest
  # `tessel records plot` and tessel.records.plot draw with matplotlib (src/python/tessel/records_plot.py).
  python3-matplotlib
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
