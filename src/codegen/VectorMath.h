/// The float vector math of generated CPU kernels: exp, erf, tanh and sigmoid over GCC vector
/// types of any width, as C++ templates the kernel source includes (kVectorMathText). Without
/// them a vector call became one libm call per lane: softmax, GELU and the tanh of GPT-2's
/// activation spent more time there than their matrix products did (BERT-base at 2 threads:
/// 1.2 ms per softmax of 12 x 128 x 128 scores). Each function follows the libm one within a
/// few units in the last place (tests/codegen compares them over the float range); scalar code
/// keeps calling libm.
#pragma once

namespace tessel::codegen {

/// The templates tessel_vexp, tessel_verf, tessel_vtanh and tessel_vsigmoid<V, I> (and the
/// polynomial tessel_vpoly<V> they share), V a float
/// vector type and I the int32 vector type of as many lanes.
extern const char* const kVectorMathText;

}  // namespace tessel::codegen
