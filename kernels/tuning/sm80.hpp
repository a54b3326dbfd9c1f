// Decode tuning for Ampere and Ada (sm_80 code; A100: 108 SMs, 2048 threads,
// 64K registers per SM, ~1.5-2 TB/s). Same register budget as Hopper, less
// bandwidth to cover: the Hopper table, with fewer blocks required per SM
// (less memory parallelism needed to saturate HBM2e). Untuned on hardware: no
// sm_80 device here; only the differences from sm90.hpp are written down.
#pragma once
#include "sm90.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<80> : decode_tuning<90> {
  static constexpr int min_blocks_per_sm = 3;
  static constexpr int t1_min_blocks_per_sm = 6;
  // 16-bit state: T = 1 kernels capped at 128 registers for K-last, 144 for V-last (Hopper's caps spill here).
  static constexpr int t1_klast_b16_bound = 512;
  static constexpr int t1_bf16io_b16_bound = 512;  // the bf16-I/O body too (640 spills here)
  static constexpr int t1_vlast_b16_bound = 448;
  // T > 1: Hopper's 96 registers spill 4-24 bytes here; 128 do not.
  static constexpr int tn_bf16io_bound = 512, tn_bf16io_bound16 = 512;
  static constexpr int tn_bf16io_mid_max_heads_per_sm = 0;  // the caps above are the mid instance's already
  // 164 KB of shared memory per SM would hold the 32 blocks of t1_bf16io_smem
  // with 4 KB to spare: not taken before it is measured on an sm_80 device.
  static constexpr int t1_bf16io_smem_max_heads_per_sm = 0, t1_bf16io_smem_min_heads_per_sm = 0;
  static constexpr int t1_bf16io_smem_vlast_b16_min_heads_per_sm = 0, t1_bf16io_smem_vlast_f32_min_heads_per_sm = 0;
  static constexpr int t1_bf16io_smem_b16_min_heads_per_sm = 0, t1_bf16io_smem_b16_bound = 0;
  static constexpr bool t1_per_key_smem = false;  // as t1_bf16io_smem: not taken before it is measured on an sm_80 device
  // No bulk-copy engine before sm_90: no streaming kernel (decode_mode::t1_pipe).
  static constexpr int t1_pipe_f32_min_heads_per_sm = 0;
  static constexpr int t1_pipe_b16_min_heads_per_sm = 0;
  static constexpr int t1_pipe_vlast_b16_min_heads_per_sm = 0;
};

}  // namespace dk::tuning
