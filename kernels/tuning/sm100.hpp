// Decode tuning for datacenter Blackwell (sm_100a; B200: 148 SMs, 2048 threads
// and 64K registers per SM, ~8 TB/s). Twice Hopper's bandwidth with the same
// per-SM resources: more bytes must be in flight per SM, so the launch asks for
// more resident blocks per SM before it keeps V tiles wide. Shapes as Hopper
// (untuned on hardware: no sm_100 device here).
#pragma once
#include "decode_shape.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<100> {
  static constexpr int min_blocks_per_sm = 6;
  static constexpr int launch_bound = 768;  // <= 80 registers: as measured best on Hopper
  // General kernels: elements per thread of each staged operand loaded at once.
  static constexpr int stage_rounds = 2;

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

  // T = 1 kernels: Hopper's measured shapes with more blocks per SM asked for
  // (twice the bandwidth to cover with the same per-SM resources); 16-bit caps
  // at 128 registers (V-last spills 4 bytes). Untuned on hardware.
  static constexpr bool t1_kernels = true;  // false: T = 1 runs the general kernels
  static constexpr int t1_min_blocks_per_sm = 10;
  static constexpr int t1_small_heads_per_sm = 2;
  // Small grids: blocks of up to t1_small_max_warps_v warps, at least
  // t1_small_min_blocks_per_sm per SM (fewer, larger blocks than 1-warp ones:
  // each block costs the launch about a nanosecond, exposed when there is little data).
  static constexpr int t1_small_max_warps_v = 4;
  static constexpr int t1_small_min_blocks_per_sm = 1;
  // Per layout and state width (f32 / 16-bit): lanes along K, rows per thread
  // (K-last: values; V-last: keys), and the register cap (launch bound).
  static constexpr int t1_klast_f32_lanes = 16, t1_klast_f32_rows = 4, t1_klast_f32_bound = 768;
  static constexpr int t1_klast_b16_lanes = 8, t1_klast_b16_rows = 4, t1_klast_b16_bound = 512;
  static constexpr int t1_vlast_f32_lanes = 4, t1_vlast_f32_rows = 8, t1_vlast_f32_bound = 896;
  static constexpr int t1_vlast_b16_lanes = 4, t1_vlast_b16_rows = 8, t1_vlast_b16_bound = 448;
  static constexpr bool t1_stream_state = false;  // streaming cache hints on the state
  static constexpr int t1_max_warps_v = 1;
};

}  // namespace dk::tuning
