// Decode tuning for AMD gfx906 (MI50: 60 CUs, wave64, 64 KB LDS, 256 VGPRs per
// lane, ~1 TB/s HBM2). A wave has 64 lanes, so with the same lanes_k a wave
// covers twice the V rows of a CUDA warp; blocks stay at 2 waves along V.
// ds_bpermute shuffles are slow: K-last keeps lanes_k at 8 or below.
#pragma once
#include "decode_shape.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<906> {
  static constexpr int min_blocks_per_sm = 4;
  static constexpr int launch_bound = 0;

  static constexpr decode_shape shape(decode_class c, bool k_last, int state_bytes) {
    if (k_last) {
      switch (c) {
        case decode_class::k128: return {8, chunks_for(128, 8, state_bytes), 2, 1, 2};
        case decode_class::k64: return {4, chunks_for(64, 4, state_bytes), 2, 1, 2};
        default: return {8, chunks_for(256, 8, state_bytes), 1, 1, 2};
      }
    }
    switch (c) {
      case decode_class::k128:
        return state_bytes == 4 ? decode_shape{8, 1, 8, 2, 1} : decode_shape{8, 1, 4, 4, 1};
      case decode_class::k64: return {8, 1, 4, 2, 1};
      default: return state_bytes == 4 ? decode_shape{8, 1, 8, 4, 1} : decode_shape{16, 1, 4, 4, 1};
    }
  }
};

}  // namespace dk::tuning
