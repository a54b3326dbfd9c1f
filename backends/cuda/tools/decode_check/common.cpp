// The shared pieces of dk_cuda_decode_check declared in decode_check.hpp: the
// driver entry points, element types and their host conversions, the C API helpers.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "decode_check.hpp"

namespace dkc {

driver_api cu;

const char* elem_name(elem e) { return e == elem::f32 ? "f32" : e == elem::bf16 ? "bf16" : "f16"; }
size_t elem_size(elem e) { return e == elem::f32 ? 4 : 2; }
dk_dtype dtype_of(elem e) {
  if (e == elem::f32) return {DK_DTYPE_CODE_FLOAT, 32, 1};
  if (e == elem::bf16) return {DK_DTYPE_CODE_BFLOAT, 16, 1};
  return {DK_DTYPE_CODE_FLOAT, 16, 1};
}

// ---- host float <-> 16-bit conversions (round to nearest even) ----
namespace {
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace
uint16_t to_bf16(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
float from_bf16(uint16_t h) { return float_of(uint32_t(h) << 16); }
uint16_t to_f16(float f) {
  const uint32_t x = bits_of(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (mag < 0x38800000u) {                                   // subnormal half
    const float r = float_of(mag) * 16777216.0f;             // * 2^24
    return uint16_t(sign | uint32_t(std::nearbyint(r)));
  }
  mag += 0xfffu + ((mag >> 13) & 1u);
  return uint16_t(sign | ((mag - 0x38000000u) >> 13));
}
float from_f16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  if (e == 0) return (sign ? -1.f : 1.f) * std::ldexp(float(m), -24);
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  return float_of(sign | ((e + 112) << 23) | (m << 13));
}

// ---- C API helpers ----
dk_context* g_ctx = nullptr;
void* g_stream = nullptr;

bool ok(dk_status s, const char* what) {
  if (s == DK_STATUS_SUCCESS) return true;
  std::printf("  FAIL %s: %s: %s\n", what, dk_status_string(s), dk_last_error());
  return false;
}

}  // namespace dkc
