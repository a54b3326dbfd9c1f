// Decode tuning for consumer Blackwell (sm_120a; RTX 5090: 170 SMs, 1536
// threads and 64K registers per SM, ~1.8 TB/s GDDR7). Fewer threads per SM:
// V-last blocks stay one warp wide along V so that 12 of them still fit.
// Otherwise the Hopper table (untuned on hardware: no sm_120 device here); only
// the differences from sm90.hpp are written down.
#pragma once
#include "sm90.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<120> : decode_tuning<90> {
  static constexpr int min_blocks_per_sm = 3;
  static constexpr int t1_min_blocks_per_sm = 6;
  // 16-bit state: T = 1 kernels capped at 128 registers for K-last, 144 for V-last (1536 threads per SM:
  // one-warp blocks still fill it).
  static constexpr int t1_klast_b16_bound = 512;
  static constexpr int t1_bf16io_b16_bound = 512;  // the bf16-I/O body too (640 spills here)
  static constexpr int t1_vlast_b16_bound = 448;
  // 100 KB of shared memory per SM: 2 blocks x 4 warps x 2 stages x 4 KB (+ v, barriers).
  static constexpr int t1_pipe_stages = 2;
  static constexpr int t1_pipe_blocks_per_sm = 2;
  static constexpr int t1_pipe_vlast_blocks_per_sm = 1;  // 2 stages x 32 KB + 6 KB
  // t1_bf16io_smem needs 32 x 5 KB of shared memory per SM.
  static constexpr int t1_bf16io_smem_max_heads_per_sm = 0, t1_bf16io_smem_min_heads_per_sm = 0;
  static constexpr int t1_bf16io_smem_vlast_b16_min_heads_per_sm = 0, t1_bf16io_smem_vlast_f32_min_heads_per_sm = 0;
  static constexpr int t1_bf16io_smem_b16_min_heads_per_sm = 0, t1_bf16io_smem_b16_bound = 0;
  static constexpr bool t1_per_key_smem = false;  // as t1_bf16io_smem (its shared memory per SM)

  static constexpr decode_shape shape(decode_class c, bool k_last, int state_bytes) {
    if (k_last) return decode_tuning<90>::shape(c, k_last, state_bytes);
    switch (c) {
      case decode_class::k128:
        return state_bytes == 4 ? decode_shape{4, 1, 8, 4, 1} : decode_shape{8, 1, 4, 4, 1};
      case decode_class::k64: return {4, 1, 4, 4, 1};
      default: return decode_tuning<90>::shape(c, k_last, state_bytes);
    }
  }
};

}  // namespace dk::tuning
