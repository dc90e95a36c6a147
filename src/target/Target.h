/// A target: what tessel compiles for, parsed once from its string into a value every layer
/// reads. The kind (cpu, cuda, opencl, vta), its flags, and for a CPU the machine model the
/// schedules are derived from: read from this machine when the target is this machine, from
/// the table of -mcpu names otherwise, with any fact overridable in the string.
///
///   cpu [-mcpu=NAME|native] [-mattr=+f,-g] [-mtriple=T] [-num-cores=N] [-opt-level=0..3] [-cc=COMPILER]
///       [-vector-bytes=N] [-vector-registers=N] [-fma-units=N] [-l1d=SIZE] [-l2=SIZE] [-llc=SIZE]
///   cuda [-arch=sm_NN] [-opt-level=0..3] [-matmul-precision=fp32|tf32]        opencl [-device=NAME]        vta
///
/// "llvm" and "c" are accepted for "cpu" (TVM's names). SIZE is bytes or a number with K, M or G
/// (KiB, MiB, GiB). A bad word is an Error naming the target and the word.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "target/CpuMachine.h"

namespace tessel::target {

enum class TargetKind { Cpu, Cuda, Opencl, Vta };

/// How exact a float32 product's multiplications must be. Fp32 (the default): as float32's,
/// which tensor cores reach with three TF32 products per product (3xTF32). Tf32: each operand
/// may be rounded to TF32's 10-bit mantissa, one tensor-core product per product, as PyTorch
/// computes with `torch.backends.cuda.matmul.allow_tf32` (or set_float32_matmul_precision
/// "high"): about 1e-3 relative error instead of 1e-6. A CUDA target's choice.
enum class MatmulPrecision { Fp32, Tf32 };

struct Target {
  TargetKind kind = TargetKind::Cpu;
  std::string text;  ///< the string as given, words separated by single spaces (records and modules keep it)

  // A CPU target's flags.
  std::string mcpu;                ///< -mcpu=; "" (or "native") is this machine's CPU
  std::vector<std::string> mattr;  ///< -mattr= entries, each "+feature" or "-feature"
  std::string mtriple;             ///< -mtriple=; "" is this machine's architecture
  int numCores = 0;                ///< -num-cores=; 0 when not given
  int optLevel = 2;                ///< -opt-level= (a CPU or CUDA target: codegen/Toolchain.h, codegen/Nvrtc.h)
  std::string cc;                  ///< -cc=: the C++ compiler; "" for the default
  /// The machine model of a CPU target; of a GPU target, the CPU it runs beside is another Target.
  CpuMachine cpu;

  // A GPU target's flags.
  std::string arch;    ///< cuda -arch= (default sm_90)
  MatmulPrecision matmulPrecision = MatmulPrecision::Fp32;  ///< cuda -matmul-precision=
  std::string device;  ///< opencl -device= ("mali"); "" for any OpenCL GPU

  /// Parses `text`. Throws Error naming the target and the word at fault.
  static Target parse(std::string_view text);
  /// The host CPU as a target ("cpu").
  static Target host();

  bool isCpu() const { return kind == TargetKind::Cpu; }
  bool isGpu() const { return kind == TargetKind::Cuda || kind == TargetKind::Opencl; }
  bool isVta() const { return kind == TargetKind::Vta; }
  /// A CPU target whose kernels this machine runs: no -mcpu but native, no foreign -mtriple.
  bool runsOnHost() const;
  /// "cpu", "cuda", "opencl", "vta".
  std::string kindName() const;
  const std::string& str() const { return text; }
};

/// The kind of a target string ("cpu" for "llvm -mcpu=x"), without checking its options: what
/// records of another machine's target are grouped by. Error for an unknown kind.
TargetKind targetKindOf(std::string_view text);

/// The kind's name of a target string as records group them: "cpu", "cuda", "opencl", "vta";
/// an unknown kind's own first word (a record of a newer tessel is kept apart, not refused).
std::string targetKindName(std::string_view text);

/// "fp32", "tf32".
std::string matmulPrecisionName(MatmulPrecision precision);

/// "1M" -> 1048576, "48K" -> 49152, "512" -> 512; Error (naming `what`) when not a size.
int64_t parseByteSize(const std::string& value, const std::string& what);

}  // namespace tessel::target
