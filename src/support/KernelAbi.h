/* The C calling convention of every compiled tessel kernel. Plain C, included both by the
 * runtime (which calls kernels) and, as text, at the top of every generated source file
 * (codegen embeds this very file at build time), so the two sides cannot drift apart. */
#ifndef TESSEL_KERNEL_ABI_H
#define TESSEL_KERNEL_ABI_H
#include <stdint.h>

/* One kernel argument: an n-dimensional tensor on a device. */
typedef struct TesselTensor {
  void* data;
  const int64_t* shape;
  const int64_t* strides; /* in elements; NULL means compact row-major */
  int32_t ndim;
  uint8_t dtype_code;     /* 0 int, 1 uint, 2 float, 3 bool */
  uint8_t dtype_bits;
  uint16_t dtype_lanes;
  int32_t device_type;    /* 1 cpu, 2 cuda, 4 opencl, 12 vta */
  int32_t device_id;
} TesselTensor;

/* Returns 0 on success; otherwise writes a message naming the offending argument into
 * error (at most error_capacity bytes, NUL-terminated) and returns non-zero. */
typedef int32_t (*TesselKernel)(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity);

/* Every compiled module exports this symbol: a JSON document listing its kernels and, for
 * each, the name, dtype and shape of every argument. */
#define TESSEL_MODULE_MANIFEST_SYMBOL "tessel_module_manifest"
typedef const char* (*TesselManifestFn)(void);

/* A CPU module also exports what its kernels need of the CPU, as a NUL-terminated string
 * "<isa class>: <feature> ...": data, so the runtime reads it without running the module's code
 * (target/CpuRequirements.h). Empty when the module was compiled without a target. */
#define TESSEL_MODULE_REQUIRES_SYMBOL "tessel_module_requires"

#define TESSEL_DEVICE_CPU 1
#define TESSEL_DEVICE_CUDA 2
#define TESSEL_DEVICE_OPENCL 4
#define TESSEL_DEVICE_VTA 12

#endif
