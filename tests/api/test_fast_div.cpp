// dk::fast_div (kernels/common/fast_div.hpp), the multiply-shift division the
// decode kernels place their blocks with: exact against integer division for
// every divisor up to 4096 around each multiple, for large divisors, and at the
// ends of its range (0 <= n < 2^31).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "common/fast_div.hpp"

namespace {

bool matches(std::uint32_t d, std::uint32_t n) { return dk::fast_div(d)(n) == n / d; }

}  // namespace

TEST_CASE("fast_div: floor(n / d) for 0 <= n < 2^31") {
  constexpr std::uint32_t kTop = 0x7fffffffu;
  std::mt19937_64 rng(2026);
  long failures = 0;
  for (std::uint32_t d = 1; d <= 4096; ++d) {
    // Every multiple up to a few hundred and its neighbours, where rounding would show.
    for (std::uint64_t m = 0; m <= 300ull * d && m < kTop; m += d)
      for (std::uint64_t n : {m, m + 1, m ? m - 1 : m}) failures += !matches(d, std::uint32_t(n));
    for (int i = 0; i < 200; ++i) failures += !matches(d, std::uint32_t(rng() & kTop));
    failures += !matches(d, kTop);
  }
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t d = std::uint32_t(rng() | 1u);
    const std::uint32_t n = std::uint32_t((rng() % (std::uint64_t(kTop) / d + 1)) * d);
    failures += !matches(d, n) + !matches(d, n ? n - 1 : 0) + !matches(d, std::uint32_t(rng() & kTop));
  }
  for (std::uint32_t d : {kTop, kTop + 1, kTop + 2, 0xffffffffu, 1u << 20, (1u << 20) + 1})
    for (std::uint32_t n : {0u, 1u, d - 1 > kTop ? kTop : d - 1, kTop}) failures += !matches(d, n);
  CHECK(failures == 0);
}
