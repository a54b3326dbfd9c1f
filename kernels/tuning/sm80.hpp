// Decode tuning for Ampere and Ada (sm_80 code; A100: 108 SMs, 2048 threads,
// 64K registers per SM, ~1.5-2 TB/s). Same register budget as Hopper, less
// bandwidth to cover: the Hopper shapes, with fewer blocks required per SM
// (less memory parallelism needed to saturate HBM2e).
#pragma once
#include "decode_shape.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<80> {
  static constexpr int min_blocks_per_sm = 3;
  static constexpr int launch_bound = 768;  // <= 80 registers: as measured best on Hopper

  static constexpr decode_shape shape(decode_class c, bool k_last, int state_bytes) {
    if (k_last) {
      switch (c) {
        case decode_class::k128: return {8, chunks_for(128, 8, state_bytes), 2, 1, 4};
        case decode_class::k64: return {4, chunks_for(64, 4, state_bytes), 2, 1, 4};
        default: return {16, chunks_for(256, 16, state_bytes), 1, 1, 4};
      }
    }
    switch (c) {
      case decode_class::k128:
        return state_bytes == 4 ? decode_shape{4, 1, 8, 4, 2} : decode_shape{8, 1, 4, 4, 2};
      case decode_class::k64: return {4, 1, 4, 4, 2};
      default: return state_bytes == 4 ? decode_shape{4, 1, 8, 8, 1} : decode_shape{8, 1, 4, 8, 1};
    }
  }
};

}  // namespace dk::tuning
