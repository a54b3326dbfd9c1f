// Decode tuning for datacenter Blackwell (sm_100a; B200: 148 SMs, 2048 threads
// and 64K registers per SM, ~8 TB/s). Twice Hopper's bandwidth with the same
// per-SM resources: more bytes must be in flight per SM, so the launch asks for
// more resident blocks per SM before it keeps V tiles wide. Otherwise the
// Hopper table (untuned on hardware: no sm_100 device here); only the
// differences from sm90.hpp are written down.
#pragma once
#include "sm90.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<100> : decode_tuning<90> {
  static constexpr int min_blocks_per_sm = 6;
  static constexpr int t1_min_blocks_per_sm = 10;
  // 16-bit state: T = 1 kernels capped at 128 registers for K-last, 144 for V-last (V-last spills 4 bytes).
  static constexpr int t1_klast_b16_bound = 512;
  static constexpr int t1_bf16io_b16_bound = 512;  // the bf16-I/O body too (640 spills here)
  static constexpr int t1_vlast_b16_bound = 448;
};

}  // namespace dk::tuning
