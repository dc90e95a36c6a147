/// The machine model of a CPU target: the facts of the machine that tessel's schedules are
/// derived from. Its ISA class (which keys shipped records and what a module requires), the
/// vector width and register count (a register tile must fit the register file: 16 ymm on
/// AVX2, 32 zmm on AVX-512, 32 NEON q registers on AArch64), the FMA units per core, the cache
/// sizes (cache blocking, packed weights, Winograd's transformed weights against the L2) and the
/// cores a parallel loop is divided for. Each group of facts says where it came from (cpuid,
/// sysfs, the table of -mcpu names, a stated fallback of its class, the target string).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "target/CpuFeatures.h"

namespace tessel::target {

/// The classes of CPU whose kernels differ in shape. Records shipped with tessel are kept per
/// class; a module records its class and refuses to load on a CPU of a lesser one.
enum class IsaClass { X86_64, X86_64Avx2, X86_64Avx512, Aarch64, Arm };

/// "x86_64", "x86_64-avx2", "x86_64-avx512", "aarch64", "arm".
std::string isaClassName(IsaClass isa);

struct CpuMachine {
  std::string arch = "x86_64";  ///< "x86_64", "aarch64", "arm"
  std::string name;             ///< the CPU: its -mcpu name, or the host's model name
  CpuFeatureSet features;       ///< what the kernels may use (closed under prerequisites)
  int vectorBytes = 16;         ///< one SIMD register: 64 with AVX-512, 32 with AVX, 16 with SSE / NEON
  int vectorRegisters = 16;     ///< SIMD registers: 32 with AVX-512 and on AArch64, 16 otherwise
  int fmaUnits = 1;             ///< vector FMAs a core starts per cycle
  int64_t l1dBytes = 0;         ///< level-1 data cache of one core
  int64_t l2Bytes = 0;          ///< level-2 cache of one core (or of the cluster that shares it)
  int64_t llcBytes = 0;         ///< last-level cache, shared
  int cores = 1;                ///< the cores a parallel kernel is divided for
  /// The compiler tunes code for an AMD Zen core (gcc's znver1-5; -march=native on an AMD or
  /// Hygon CPU of family 17h or later). Its tuning folds a vector load into the FMA that reads
  /// it, where gcc's Intel and generic tunings load it into a register first: see
  /// broadcastRegisters.
  bool zenTuning = false;
  std::string featuresFrom, cachesFrom, coresFrom;  ///< where each group of facts came from

  IsaClass isa() const;
  std::string isaClass() const { return isaClassName(isa()); }
  bool has(const std::string& feature) const { return features.count(feature) > 0; }
  /// The register files the default rules treat as large (AVX-512, AArch64): half of them hold
  /// accumulators and the small-image pointwise convolutions take four-vector weight blocks; a
  /// smaller one (AVX2, SSE: 16) gives the accumulators all but the weight vectors.
  static constexpr int kLargeRegisterFile = 32;
  static bool largeRegisterFile(int64_t vectorRegisters) { return vectorRegisters >= kLargeRegisterFile; }
  /// x86 without AVX-512: its FMA reads only a full vector from memory (the {1toN} broadcast
  /// operand is AVX-512's: Intel SDM vol. 2, VFMADD231PS), so whether a register tile needs a
  /// register for its broadcast input depends on the compiler's tuning (zenTuning).
  bool tilesFollowTuning() const { return arch == "x86_64" && !has("avx512f"); }
  /// Registers a register tile gives its broadcast input, beside accumulators and weight
  /// vectors: 0 with AVX-512 (the broadcast is the FMA's memory operand), on ARM (NEON's
  /// by-element FMLA takes the input from a lane of a vector that serves several of them) and
  /// under a Zen tuning (one weight vector's load folds into its FMA, which frees the register
  /// the broadcast takes: 7 x 2 accumulators on AVX2 ran 0.87-0.96x the time of 6 x 2 in
  /// untuned networks on a Zen 3); 1 otherwise (gcc's haswell tuning spilled an accumulator of
  /// 7 x 2: 0.55x oneDNN's conv where 6 x 2 reached 1.0x).
  int broadcastRegisters() const { return tilesFollowTuning() && !zenTuning ? 1 : 0; }
  /// Whose tuning records serve this machine: its ISA class, with "-zen" where its register
  /// tiles follow a Zen tuning ("x86_64-avx2-zen"): a tile tuned under one tuning spills under
  /// the other (records tuned on a Zen 3 took 1.17-1.42x the untuned time compiled for haswell).
  std::string recordFamily() const { return isaClass() + (tilesFollowTuning() && zenTuning ? "-zen" : ""); }
  /// Elements of `elementBytes` in one vector register (at least 1).
  int lanes(int elementBytes) const { return vectorBytes >= elementBytes ? vectorBytes / elementBytes : 1; }
  /// The tracked features in a fixed order: what a module built for this machine requires.
  std::vector<std::string> requiredFeatures() const;
  /// Derives the vector width, register count and FMA-unit fallback from `arch` and `features`
  /// (called after the features change).
  void deriveVectorFacts();
  /// Fills caches left at 0 with the stated fallback of the class (`cachesFrom` says so).
  void fillCacheFallbacks();
  /// Where the register tiles follow the compiler's tuning: which one and what it means for
  /// them ("; Zen tuning: ..."); empty elsewhere.
  std::string tuningNote() const;
  /// Several lines: class and features, vectors and registers, caches, cores, and their sources.
  std::string describe() const;
  /// One line: "x86_64-avx2 (AMD EPYC): 32-byte vectors x 16 registers, 2 FMA units, L1d 32 KiB,
  /// L2 512 KiB, LLC 32 MiB, 2 cores".
  std::string summary() const;
};

/// "48 KiB", "2 MiB", "1.25 MiB".
std::string formatBytes(int64_t bytes);

}  // namespace tessel::target
