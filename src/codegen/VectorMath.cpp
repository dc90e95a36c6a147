#include "codegen/VectorMath.h"

namespace tessel::codegen {

// The approximations:
// - exp: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so that n ln2 is exact), e^r by
//   the degree-6 polynomial of Cephes' expf (Moshier, cephes/single/expf.c), 2^n built in the
//   exponent bits (in two factors, so that n reaches 128 and e^x stays exact down to
//   subnormal results). Below -88 it is 0 (e^-88 is 6e-39, below the smallest normal float),
//   above ln(FLT_MAX) infinite; NaN stays NaN.
// - erf: for |x| < 1, x P(x^2) with P of degree 5; for 1 <= |x| <= 4, 1 - exp(Q(|x|)) with Q
//   of degree 7 approximating log(erfc); past 4, erf is 1 in float. Both fitted by least
//   squares on Chebyshev nodes to Python's math.erf / math.erfc (relative error 2e-7 below 1,
//   absolute 9e-8 above, evaluated in float).
// - tanh: for |x| < 0.625, x S(x^2) with S of degree 5 (the same fit, relative error 1.3e-7),
//   else 1 - 2 / (e^(2|x|) + 1), where no cancellation loses digits.
const char* const kVectorMathText = R"VECTORMATH(
// c0 + c1 x + c2 x^2 + ... by Horner's rule, the coefficients from the constant term up.
template <class V> static inline V tessel_vpoly(V x, float c) { return (V){} + c; }
template <class V, class... C> static inline V tessel_vpoly(V x, float c, C... higher) {
  return tessel_vpoly<V>(x, higher...) * x + c;
}
template <class V, class I> static inline V tessel_vexp(V x) {
  const V lo = (V){} - 88.0f, hi = (V){} + 88.7228394f, zero = (V){};
  V c = x < lo ? lo : x;
  c = c > hi ? hi : c;
  const V fx = c * 1.44269504f + 0.5f;
  I n = __builtin_convertvector(fx, I);
  n = n + (I)(__builtin_convertvector(n, V) > fx);  // floor: -1 where truncation rounded up
  const V fn = __builtin_convertvector(n, V);
  const V r = c - fn * 0.693359375f + fn * 2.12194440e-4f;
  const V p = tessel_vpoly<V>(r, 5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f, 8.3334519073e-3f, 1.3981999507e-3f,
                              1.9875691500e-4f);
  V y = p * (r * r) + r + 1.0f;
  // 2^n as 2^(n-1) * 2 above 0 and 2^(n+1) / 2 below: both factors normal floats for every n
  // of [-127, 128].
  const I up = n > (I){};
  const I bits = (n + 127 + (up ? (I){} - 1 : (I){} + 1)) << 23;
  V scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  y = y * scale * (up ? zero + 2.0f : zero + 0.5f);
  y = x < lo ? zero : y;
  y = x > hi ? zero + __builtin_inff() : y;
  return x != x ? x : y;
}
template <class V, class I> static inline V tessel_verf(V x) {
  const V zero = (V){};
  const V a = x < zero ? -x : x, a2 = a * a;
  const V s = tessel_vpoly<V>(a2, 1.128379150e+00f, -3.761241473e-01f, 1.128078896e-01f, -2.672698978e-02f, 4.934518824e-03f,
                              -5.696712979e-04f);
  const V t = a > 4.0f + zero ? zero + 4.0f : a;
  const V q = tessel_vpoly<V>(t, -7.569686265e-04f, -1.125925949e+00f, -6.390933195e-01f, -1.033189800e-01f, 2.262198592e-02f,
                              -3.436867597e-03f, 3.175720345e-04f, -1.330939038e-05f);
  const V y = a < 1.0f + zero ? a * s : 1.0f - tessel_vexp<V, I>(q);
  return x < zero ? -y : y;
}
template <class V, class I> static inline V tessel_vtanh(V x) {
  const V zero = (V){};
  const V a = x < zero ? -x : x, a2 = a * a;
  const V s = tessel_vpoly<V>(a2, 9.999999983e-01f, -3.333327769e-01f, 1.333141861e-01f, -5.373984368e-02f, 2.064225476e-02f,
                              -5.709965235e-03f);
  const V y = a < 0.625f + zero ? a * s : 1.0f - 2.0f / (tessel_vexp<V, I>(a + a) + 1.0f);
  return x < zero ? -y : y;
}
template <class V, class I> static inline V tessel_vsigmoid(V x) { return 1.0f / (1.0f + tessel_vexp<V, I>(-x)); }
)VECTORMATH";

}  // namespace tessel::codegen
