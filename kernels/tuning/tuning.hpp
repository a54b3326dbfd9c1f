// All tuning tables, one header per arch family. The host picks the family of
// the code path that runs (dk::gpu::target.arch) through family_of().
#pragma once
#include "decode_shape.hpp"
#include "gfx906.hpp"
#include "sm100.hpp"
#include "sm120.hpp"
#include "sm80.hpp"
#include "sm90.hpp"

namespace dk::tuning {

// CUDA: 10*major+minor of the compiled code path (80..89 -> 80, 90 -> 90,
// 100..119 -> 100, 120.. -> 120); AMD: the gfx number (gfx9 -> 906). 0: none.
constexpr int family_of(int arch, bool amd) {
  if (amd) return arch >= 900 && arch < 1000 ? 906 : 0;
  if (arch >= 120) return 120;
  if (arch >= 100) return 100;
  if (arch >= 90) return 90;
  if (arch >= 80) return 80;
  return 0;
}

}  // namespace dk::tuning
