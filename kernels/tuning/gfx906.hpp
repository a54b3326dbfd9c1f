// Decode tuning for AMD gfx906 (MI50: 60 CUs, wave64, 64 KB LDS, 256 VGPRs per
// lane, ~1 TB/s HBM2). A wave has 64 lanes, so with the same lanes_k a wave
// covers twice the V rows of a CUDA warp; blocks stay at 2 waves along V.
// The general kernels keep K-last lanes_k at 8 or below; the T = 1 kernels use 16
// for fp32 state and 8 for 16-bit state (their sums over lanes are DPP row
// reductions in dk::group_sum, not ds_bpermute).
#pragma once
#include "decode_shape.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<906> {
  static constexpr int min_blocks_per_sm = 4;
  static constexpr int launch_bound = 0;
  // General kernels: elements per thread of each staged operand loaded at once
  // (1: fewer predicate masks live, which on wave64 cost two SGPRs each).
  static constexpr int stage_rounds = 1;

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

  // T = 1 kernels: wave64, so a wave covers twice a CUDA warp's rows; V-last
  // keeps all of K in one wave (16 lanes x 8 keys, 64-byte runs per row), no LDS.
  // No register cap (256 VGPRs per lane). Compiled, not run (no AMD GPU here).
  static constexpr bool t1_kernels = true;  // false: T = 1 runs the general kernels
  // Per-key gates stay on the general kernel: the t1 per-key body is measured on Hopper only.
  static constexpr bool t1_per_key = false, t1_small_per_key = false;
  static constexpr int t1_per_key_klast_f32_bound = 0, t1_per_key_klast_b16_bound = 0;
  static constexpr int t1_per_key_vlast_f32_bound = 0, t1_per_key_vlast_b16_bound = 0;
  static constexpr bool t1_per_key_smem = false, t1_per_key_smem_vlast = false;
  static constexpr int t1_per_key_smem_f32_bound = 0, t1_per_key_smem_b16_bound = 0;
  static constexpr int t1_min_blocks_per_sm = 4;
  static constexpr int t1_small_heads_per_sm = 1;
  static constexpr int t1_bf16io_smem_small_sms_per_head = 0;  // no t1_bf16io_smem (no cp.async)
  static constexpr bool t1_small_bf16io = false;  // not measured on gfx906
  // Small grids: blocks of up to t1_small_max_warps_v warps, at least
  // t1_small_min_blocks_per_sm per SM (fewer, larger blocks than 1-warp ones:
  // each block costs the launch about a nanosecond, exposed when there is little data).
  static constexpr int t1_small_max_warps_v = 4;
  static constexpr int t1_small_min_blocks_per_sm = 1;
  // Per layout and state width (f32 / 16-bit): lanes along K, rows per thread
  // (K-last: values; V-last: keys), and the register cap (launch bound).
  static constexpr int t1_klast_f32_lanes = 16, t1_klast_f32_rows = 4, t1_klast_f32_bound = 0;
  static constexpr int t1_klast_b16_lanes = 8, t1_klast_b16_rows = 4, t1_klast_b16_bound = 0;
  static constexpr int t1_vlast_f32_lanes = 16, t1_vlast_f32_rows = 8, t1_vlast_f32_bound = 0;
  static constexpr int t1_vlast_b16_lanes = 16, t1_vlast_b16_rows = 8, t1_vlast_b16_bound = 0;
  static constexpr bool t1_vlast_b16_v_major_lanes = false;  // not measured on AMD
  static constexpr bool t1_stream_state = false;  // streaming cache hints on the state
  // The bf16-I/O T = 1 bodies are measured on Hopper only: not taken here.
  static constexpr bool t1_bf16io = false;
  static constexpr int t1_bf16io_f32_bound = 0, t1_bf16io_b16_bound = 0;
  static constexpr int t1_bf16io_smem_max_heads_per_sm = 0, t1_bf16io_smem_min_heads_per_sm = 0;
  static constexpr int t1_bf16io_smem_vlast_b16_min_heads_per_sm = 0, t1_bf16io_smem_vlast_f32_min_heads_per_sm = 0;
  static constexpr int t1_bf16io_smem_vlast_f32_warps_v = 1, t1_bf16io_smem_vlast_b16_warps_v = 1;
  static constexpr int t1_bf16io_smem_b16_min_heads_per_sm = 0, t1_bf16io_smem_b16_bound = 0;  // no cp.async
  static constexpr int t1_bf16io_smem_bound = 0;
  static constexpr int t1_bf16io_max_warps_v = 1;
  static constexpr int t1_bf16io_f32_lookahead_blocks_per_sm = 0;  // prefetch_l2 is a no-op on AMD
  static constexpr int t1_vlast_smem_f32_lookahead_waves = 0, t1_vlast_smem_b16_lookahead_waves = 0;
  static constexpr int t1_max_warps_v = 2, t1_vlast_max_warps_v = 2;
  static constexpr int programmatic_prefetch_max_bytes_per_sm = 0;  // no programmatic launch on AMD
  static constexpr int programmatic_late_prefetch_blocks_per_sm = 0;
  static constexpr int programmatic_late_prefetch_vlast_blocks_per_sm = 0;
  // No bulk-copy engine on gfx906: no streaming kernel (decode_mode::t1_pipe).
  static constexpr int t1_pipe_f32_min_heads_per_sm = 0, t1_pipe_b16_min_heads_per_sm = 0;
  static constexpr int t1_pipe_stages = 2, t1_pipe_warps = 1, t1_pipe_blocks_per_sm = 1;
  static constexpr int t1_pipe_chunk = 0, t1_pipe_chunk_min_tiles_per_warp = 0;
  static constexpr int t1_pipe_vlast_b16_min_heads_per_sm = 0;
  static constexpr int t1_pipe_vlast_stages = 2, t1_pipe_vlast_warps = 1, t1_pipe_vlast_blocks_per_sm = 1;
  static constexpr int t1_pipe_vlast_row_bytes = 128;
  // T > 1 with bf16 I/O: measured on Hopper only, not taken here (general).
  static constexpr bool tn_bf16io = false;
  static constexpr int tn_bf16io_lanes = 16, tn_bf16io_rows = 4, tn_bf16io_bound = 0, tn_bf16io_bound16 = 0;
  static constexpr int tn_bf16io_mid_min_heads_per_sm = 0, tn_bf16io_mid_max_heads_per_sm = 0, tn_bf16io_mid_bound = 0;
  // No tensor-core mma on gfx906 (decode_mode::tn_mma).
  static constexpr bool tn_mma = false;
  static constexpr int tn_mma_max_tokens = 0, tn_mma_f32_bound = 0, tn_mma_b16_bound = 0;
  static constexpr bool tn_mma_vlast = false;
  static constexpr int tn_mma_vlast_warps_v = 1, tn_mma_vlast_b16_bound = 0;
  static constexpr bool tn_mma_vlast_bf16_reload_k = false;
  static constexpr bool tn_mma_chunked = false;
  static constexpr int tn_mma_chunked_max_tokens = 0, tn_mma_chunked_bound = 0;
  static constexpr bool tn_mma_per_key = false;
  static constexpr bool tn_mma_per_key_chunked = false;
  static constexpr int tn_mma_per_key_warps_v = 1, tn_mma_per_key_vlast_f32_min_heads_per_sm = 0;
  static constexpr int tn_mma_per_key_late_prefetch_blocks_per_sm = 0;
  static constexpr int tn_mma_f32_lookahead_warps = 0, tn_mma_b16_lookahead_warps = 0;
  static constexpr int tn_mma_vlast_f32_lookahead_warps = 0, tn_mma_vlast_b16_lookahead_warps = 0;
  static constexpr bool tn_per_key = false;
  static constexpr int tn_per_key_f32_bound = 0, tn_per_key_b16_bound = 0;
  static constexpr bool tn_vlast = false;
  static constexpr int tn_vlast_f32_lanes = 4, tn_vlast_f32_rows = 8, tn_vlast_b16_lanes = 8, tn_vlast_b16_rows = 4;
  static constexpr int tn_vlast_max_warps_v = 4, tn_vlast_bound = 0, tn_vlast_b16_scatter_stages = 0;
  static constexpr bool tn_per_key_vlast = false;
  static constexpr int tn_per_key_vlast_f32_lanes = 4, tn_per_key_vlast_f32_rows = 8;
  static constexpr int tn_per_key_vlast_b16_lanes = 8, tn_per_key_vlast_b16_rows = 4;
};

}  // namespace dk::tuning
