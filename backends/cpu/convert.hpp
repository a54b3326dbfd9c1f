// bf16 / fp16 <-> fp32 conversions for the CPU backend, round-to-nearest-even.
// Every function has internal linkage (static inline): this header is included by
// translation units compiled for different ISAs, and an inline function shared
// between them could be merged by the linker into a copy that uses instructions
// the running CPU lacks.
#pragma once
#include <stdint.h>
#include <string.h>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace dk::cpu {

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline float bf16_to_f32(uint16_t h) { return f32_from_bits(uint32_t(h) << 16); }

static inline uint16_t f32_to_bf16(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float f16_to_f32_portable(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0x1f) return f32_from_bits(sign | 0x7f800000u | (m << 13));  // inf / NaN
  if (e != 0) return f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
  // zero or subnormal: m * 2^-24 is exact in fp32
  const float mag = float(m) * 5.9604644775390625e-8f;
  return f32_from_bits(sign | f32_bits(mag));
}

static inline uint16_t f32_to_f16_portable(float f) {
  const uint32_t x = f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN
  if (a >= 0x47800000u) return uint16_t(sign | 0x7c00u);  // >= 65536 (and inf): inf
  if (a >= 0x38800000u) {                                 // a normal half (or rounds to inf)
    const uint32_t m = a - 0x38000000u;                   // rebias the exponent 127 -> 15
    return uint16_t(sign | ((m + 0x0fffu + ((m >> 13) & 1u)) >> 13));
  }
  if (a < 0x33000000u) return uint16_t(sign);  // below 2^-25: rounds to zero
  // half subnormal: round(|f| / 2^-24), ties to even
  const uint32_t e = a >> 23;
  const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14 .. 24
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return uint16_t(sign | q);
}

// Row conversions (n elements, contiguous).
static inline void bf16_row_to_f32(const uint16_t* __restrict src, float* __restrict dst, int n) {
  for (int i = 0; i < n; ++i) dst[i] = f32_from_bits(uint32_t(src[i]) << 16);
}

static inline void f32_row_to_bf16(const float* __restrict src, uint16_t* __restrict dst, int n) {
  for (int i = 0; i < n; ++i) {
    const uint32_t x = f32_bits(src[i]);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t nan = (x >> 16) | 0x40u;
    dst[i] = uint16_t((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

static inline void f16_row_to_f32(const uint16_t* __restrict src, float* __restrict dst, int n) {
  int i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = f16_to_f32_portable(src[i]);
}

static inline void f32_row_to_f16(const float* __restrict src, uint16_t* __restrict dst, int n) {
  int i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) dst[i] = f32_to_f16_portable(src[i]);
}

}  // namespace dk::cpu
