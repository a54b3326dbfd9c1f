#include "dk_test/numeric.hpp"

#include <cstdio>

namespace dkt {

const char* dt_name(dt t) {
  switch (t) {
    case dt::f32: return "f32";
    case dt::bf16: return "bf16";
    case dt::f16: return "f16";
    case dt::i32: return "i32";
    case dt::i64: return "i64";
  }
  return "?";
}

dk_dtype to_dk(dt t) {
  switch (t) {
    case dt::f32: return {DK_DTYPE_CODE_FLOAT, 32, 1};
    case dt::bf16: return {DK_DTYPE_CODE_BFLOAT, 16, 1};
    case dt::f16: return {DK_DTYPE_CODE_FLOAT, 16, 1};
    case dt::i32: return {DK_DTYPE_CODE_INT, 32, 1};
    case dt::i64: return {DK_DTYPE_CODE_INT, 64, 1};
  }
  return {};
}

std::size_t dt_size(dt t) {
  switch (t) {
    case dt::f32: case dt::i32: return 4;
    case dt::bf16: case dt::f16: return 2;
    case dt::i64: return 8;
  }
  return 0;
}

std::uint16_t f32_to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t((u + rounding) >> 16);
}

float bf16_to_f32(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

std::uint16_t f32_to_f16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return std::uint16_t(sign | 0x7e00u);   // NaN
  if (a >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // rounds to infinity
  if (a < 0x38800000u) {                                        // half subnormal (< 2^-14)
    float v;
    std::memcpy(&v, &a, 4);
    return std::uint16_t(sign | std::uint32_t(std::nearbyint(v * 16777216.0f)));  // v * 2^24
  }
  const std::uint32_t mant = a & 0x7fffffu;
  const std::uint32_t exp = (a >> 23) - 127u + 15u;
  std::uint32_t h = (exp << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return std::uint16_t(sign | h);
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  std::uint32_t u;
  if (exp == 31)
    u = sign | 0x7f800000u | (mant << 13);
  else
    u = sign | ((exp - 15u + 127u) << 23) | (mant << 13);
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

void store(dt t, void* p, double x) {
  switch (t) {
    case dt::f32: { const float f = float(x); std::memcpy(p, &f, 4); break; }
    case dt::bf16: { const std::uint16_t h = f32_to_bf16(float(x)); std::memcpy(p, &h, 2); break; }
    case dt::f16: { const std::uint16_t h = f32_to_f16(float(x)); std::memcpy(p, &h, 2); break; }
    case dt::i32: { const std::int32_t i = std::int32_t(x); std::memcpy(p, &i, 4); break; }
    case dt::i64: { const std::int64_t i = std::int64_t(x); std::memcpy(p, &i, 8); break; }
  }
}

double load(dt t, const void* p) {
  switch (t) {
    case dt::f32: { float f; std::memcpy(&f, p, 4); return f; }
    case dt::bf16: { std::uint16_t h; std::memcpy(&h, p, 2); return bf16_to_f32(h); }
    case dt::f16: { std::uint16_t h; std::memcpy(&h, p, 2); return f16_to_f32(h); }
    case dt::i32: { std::int32_t i; std::memcpy(&i, p, 4); return i; }
    case dt::i64: { std::int64_t i; std::memcpy(&i, p, 8); return double(i); }
  }
  return 0.0;
}

void store_nan(dt t, void* p) { store(t, p, NAN); }

std::string error_norm::describe() const {
  char text[200];
  std::snprintf(text, sizeof text, "rel_l2=%.3e max_abs=%.3e ref_norm=%.3e n=%lld non_finite=%lld",
                relative(), max_abs, std::sqrt(ref2), (long long)count, (long long)non_finite);
  return text;
}

}  // namespace dkt
