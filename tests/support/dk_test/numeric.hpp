// Storage dtypes, their rounding, random inputs and error norms shared by the test suites.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <deltakit/deltakit.h>

namespace dkt {

// The storage types the tests put into tensors.
enum class dt { f32, bf16, f16, i32, i64 };

const char* dt_name(dt t);
dk_dtype to_dk(dt t);
std::size_t dt_size(dt t);
inline bool is_float(dt t) { return t == dt::f32 || t == dt::bf16 || t == dt::f16; }

// Bit conversions (round to nearest even; NaN stays NaN).
std::uint16_t f32_to_bf16(float x);
float bf16_to_f32(std::uint16_t h);
std::uint16_t f32_to_f16(float x);
float f16_to_f32(std::uint16_t h);

// Stores x (rounded to `t`) at p; loads an element of type `t` at p as double.
void store(dt t, void* p, double x);
double load(dt t, const void* p);
// A quiet NaN of type `t` at p.
void store_nan(dt t, void* p);

// Seeded random numbers.
class rng {
 public:
  explicit rng(std::uint64_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(gen_); }
  std::uint64_t bits() { return gen_(); }
  std::mt19937_64& engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

// Relative L2 error ||x - ref|| / ||ref|| accumulated over several blocks; also counts values
// that are not finite.
struct error_norm {
  double diff2 = 0.0;
  double ref2 = 0.0;
  std::int64_t count = 0;
  std::int64_t non_finite = 0;
  double max_abs = 0.0;

  void add(double x, double ref) {
    ++count;
    if (!std::isfinite(x)) {
      ++non_finite;
      return;
    }
    const double d = x - ref;
    diff2 += d * d;
    ref2 += ref * ref;
    if (std::fabs(d) > max_abs) max_abs = std::fabs(d);
  }
  double relative() const {
    if (non_finite > 0) return INFINITY;
    return ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  }
  std::string describe() const;
};

}  // namespace dkt
