// n / d by one multiply and a shift, for 0 <= n < 2^31 and d >= 1 (Granlund
// and Montgomery, "Division by invariant integers using multiplication", 1994):
// with l = ceil(log2 d) and m = ceil(2^(31+l) / d), m < 2^32 and
// floor(n / d) = floor(n * m / 2^(31+l)) for every such n. The host builds one
// per divisor and launch; the kernel then divides in two instructions instead of
// a ~40-cycle division sequence on its critical path.
#pragma once
#include <stdint.h>

// Kernels include it after common/vendor.cuh, whose DK_HOST_DEVICE makes the
// division callable on the device; host-only code (tests) gets a plain inline.
#ifdef DK_HOST_DEVICE
#define DK_FAST_DIV_FN DK_HOST_DEVICE
#else
#define DK_FAST_DIV_FN inline
#endif

namespace dk {

struct fast_div {
  uint32_t mul = 1u << 31, shift = 31;  // d = 1

  fast_div() = default;
  explicit fast_div(uint32_t d) {
    if (d < 2) return;  // 1 (and 0, which no caller passes): the identity
    uint32_t l = 0;
    while ((uint64_t(1) << l) < d) ++l;
    shift = 31 + l;
    mul = uint32_t(((uint64_t(1) << shift) + d - 1) / d);
  }
  // floor(n / d) for 0 <= n < 2^31.
  DK_FAST_DIV_FN uint32_t operator()(uint32_t n) const { return uint32_t((uint64_t(n) * mul) >> shift); }
};

}  // namespace dk
