// Decode tuning for Hopper (sm_90a; the H200: 132 SMs, 2048 threads and
// 64K registers per SM, ~4.3 TB/s measured copy bandwidth).
// Decode at T=1 is a pure stream of the state (read once, written once), so the
// shapes aim for 16-byte accesses coalesced into >= 64-byte runs, few shuffles
// per element, <= ~32 state floats per thread (leaving room for 8+ warps per SM
// with every load in flight at once), and enough blocks for 132 SMs at B*HV=1024.
//
// Measured on the H200 (backends/cuda/tools/decode-sweep, qwen3next K=V=128,
// T=1; backends/cuda/README.md has the table): the kernel is bound by the
// latency of each block (two dependent trips to memory plus ~1k instructions
// per warp), so resident blocks matter most. Capping registers at 80
// (launch_bound 768: 6 blocks of 128 threads per SM) beat 96 registers by
// 4-10% and beat 4 rows per thread (more bytes per block, 3 blocks per SM).
// V-last 16-bit state: 8 lanes x 4 key rows x 4 warps along K (216 -> 201 us at
// B=128) beat 4 lanes x 4 rows x 8 warps; 16 lanes along K for K-last 16-bit
// state lost 30%.
#pragma once
#include "decode_shape.hpp"

namespace dk::tuning {

template <>
struct decode_tuning<90> {
  static constexpr int min_blocks_per_sm = 4;
  static constexpr int launch_bound = 768;  // <= 80 registers per thread
  // General kernels: elements per thread of each staged operand loaded at once.
  static constexpr int stage_rounds = 2;

  static constexpr decode_shape shape(decode_class c, bool k_last, int state_bytes) {
    if (k_last) {
      switch (c) {
        // 8 lanes x 16 keys (fp32: 4 vectors, 16-bit: 2) per row, 2 rows per
        // thread: 3 shuffle stages per row; a warp covers 8 rows, a block 8..32.
        case decode_class::k128: return {8, chunks_for(128, 8, state_bytes), 2, 1, 4};
        // 4 lanes x 16 keys per row, 2 rows: a warp covers 16 rows.
        case decode_class::k64: return {4, chunks_for(64, 4, state_bytes), 2, 1, 4};
        // 16 lanes x 16 keys = 256 keys, 1 row per thread.
        default: return {16, chunks_for(256, 16, state_bytes), 1, 1, 4};
      }
    }
    // V-last: rows are keys. 8 lanes along V read 128 B (fp32) per key row;
    // K is split over 4 lanes x `rows` x warps_k, finished in shared memory.
    switch (c) {
      case decode_class::k128:
        return state_bytes == 4 ? decode_shape{4, 1, 8, 4, 2} : decode_shape{8, 1, 4, 4, 2};
      case decode_class::k64: return {4, 1, 4, 4, 2};
      default: return state_bytes == 4 ? decode_shape{4, 1, 8, 8, 1} : decode_shape{8, 1, 4, 8, 1};
    }
  }

  // T = 1 kernels (decode_mode::t1 / t1_small; tuning/decode_shape.hpp), as
  // measured on the H200 (kernels/decode/NOTES.md, runs 1-2 of
  // backends/cuda/tools/decode-sweep-t1; graph replays, L2 flushed):
  // - K-last fp32: 16 lanes x 8 keys x 4 rows, <= 80 registers, one-warp blocks:
  //   B=512 551 us (92 % of copy); 8 lanes x 16 keys x 2 rows -5 %, 64 B per
  //   thread at 64 registers -4 %, blocks of 2/4 warps -1/-2 %.
  // - K-last 16-bit: 8 lanes x 16 keys x 4 rows packed (128 B per thread, 96
  //   registers): 327 us at B=512; 16 lanes x 8 keys x 8 rows at 124 registers
  //   356 us, x 4 rows at 64 registers 330 us.
  // - V-last: 4 lanes x 8 keys x 4 warps along K, 128-byte runs per row: fp32
  //   B=512 555 us (K-last 551); 16 lanes (all of K in one warp, 32-byte runs)
  //   918 us, 8 lanes 692 us: a warp load touching 16 lines of 128 B saturates
  //   the L1 tag rate.
  // - Streaming cache hints (ld/st.global.cs) on the state: 1-3 % slower.
  static constexpr bool t1_kernels = true;  // false: T = 1 runs the general kernels
  // Per-key gates (KDA) at T = 1 on the t1 body and tiles (decode_mode::t1_per_key).
  // NOTES.md v28, decode-ab, 2 rounds, kimi-linear with PDL, general kernel -> this:
  // fp32 state B=32 44.18 -> 39.47 us, B=512 602.07 -> 556.09; bf16 state B=512
  // 471.35 -> 326.20. Caps: 96 registers for fp32 state, 128 for 16-bit, no spills
  // (the t1 caps spilled 28-212 bytes; fp32 at 80 spills 4-12 and was 0.5 % slower).
  // K-last 16-bit state keeps t1's 8 lanes x 16 keys x 4 rows: 16 x 8 x 4 at 80
  // registers and 16 x 8 x 8 at 128 took 19 % and 11 % longer at B=512.
  static constexpr bool t1_per_key = true;
  static constexpr int t1_per_key_klast_f32_bound = 640, t1_per_key_klast_b16_bound = 512;
  static constexpr int t1_per_key_vlast_f32_bound = 640, t1_per_key_vlast_b16_bound = 448;
  // K-last per-key with bf16 activations on every grid: the t1_bf16io_smem body
  // with the decays (decode_mode::t1_per_key_smem). NOTES.md v29 run 1,
  // decode-ab, 2 rounds, kimi-linear with PDL, t1_per_key -> this (fp32 state
  // at 80 registers): fp32 B=1 4.84 -> 4.03 us, B=8 13.39 -> 11.21, B=32 39.46
  // -> 36.58, B=128 143.65 -> 137.19, B=512 555.64 -> 534.77; bf16 state at 96
  // (80 spill 100-112 bytes) 4.37 -> 3.92, 7.92 -> 8.11 (in graph 8.91 -> 8.25),
  // 25.66 -> 22.46, 86.51 -> 75.92, 326.02 -> 286.27. fp32 at 64 registers (no
  // spill): B=512 532.42, but B=1 4.38, B=8 11.35, B=32 37.28.
  static constexpr bool t1_per_key_smem = true;
  static constexpr int t1_per_key_smem_f32_bound = 768, t1_per_key_smem_b16_bound = 640;
  // V-last per-key with bf16 activations where the scalar gate takes the V-last
  // shared-memory body (4 heads per SM), at its caps (t1_bf16io_smem_bound and
  // _b16_bound: 64 / 80 registers, no spill). NOTES.md v29 run 3, decode-ab, 2 rounds, kimi-linear-vlast with PDL,
  // t1_per_key -> this: fp32 B=32 41.41 -> 38.52 us, B=128 155.50 -> 142.12,
  // B=512 609.78 -> 554.44; bf16 state 24.16 -> 24.41, 87.47 -> 82.55, 334.08 ->
  // 300.33. At 80 / 96 registers 0.3-1.6 % slower than this from B=128.
  static constexpr bool t1_per_key_smem_vlast = true;
  // Per-key gates with K-last 16-bit state on the grids where the scalar gate
  // takes t1_small (decode_mode::t1_small_per_key: the t1 body with t1_small's
  // tile, the gate words loaded before the tile). NOTES.md v32 run 2,
  // decode-ab, 2 rounds, bf16 state, in graph / PDL, t1_per_key_smem -> this:
  // kimi-linear B=1 4.25 / 3.15 -> 3.91 / 3.10 us; 8 heads (HQ = HV = 8) B=1
  // 4.00 / 2.92 -> 3.61 / 2.77, B=4 4.18 / 3.12 -> 3.90 / 3.09. fp32 state lost
  // with it at B=1 of 8 heads (2.63 -> 2.90 with PDL), V-last at kimi-linear
  // B=1 (fp32 3.29 -> 3.69, bf16 2.97 -> 3.11): they keep their kernels.
  static constexpr bool t1_small_per_key = true;
  static constexpr int t1_min_blocks_per_sm = 8;
  // Below 1 head per SM (B=1, contest): t1_small. From 1 (fp32 B=8, 256 heads:
  // one-tile warps, 1.1 waves) the t1 grid: NOTES.md v6, dk_bench, B=8 15.65 ->
  // 15.31 us isolated, 12.75 -> 12.56 in graph (2 heads per SM before).
  static constexpr int t1_small_heads_per_sm = 1;
  // fp32 K-last state with bf16 activations on grids of at most one head per
  // 8 SMs (16 on the H200: tensor-parallel shards at B = 1-2) takes
  // t1_bf16io_smem (under programmatic launch every block prefetching).
  // NOTES.md v32 run 2, decode-ab, 2 rounds, in graph / PDL, t1_small -> it:
  // contest (8 heads) B=1 3.23 / 2.57 -> 3.29 / 2.33 us, B=2 3.49 / 2.75 ->
  // 3.46 / 2.62; B=4 (32 heads) 4.03 / 3.10 -> 4.09 / 3.64 and qwen3next B=1
  // 4.16 / 3.14 -> 4.16 / 3.69 (run 1) lost, as did 16-bit state (contest
  // with PDL 2.37 -> 2.90).
  static constexpr int t1_bf16io_smem_small_sms_per_head = 8;
  // Small grids with bf16 q/k/v/out and K-last 16-bit state: the same body with
  // the activation types fixed at compile time (decode_mode::t1_small_bf16io).
  // NOTES.md v24 run 5, decode-ab, 3 rounds, in graph (PDL): bf16 state B=1 3.83
  // -> 3.77 us (2.87 -> 2.83), contest 3.42 -> 3.32 (2.47 -> 2.37); fp32 state
  // lost with it (B=1 4.14 -> 4.19, contest 3.23 -> 3.29) and keeps t1_small.
  static constexpr bool t1_small_bf16io = true;
  // Small grids: blocks of up to t1_small_max_warps_v warps, at least
  // t1_small_min_blocks_per_sm per SM (fewer, larger blocks than 1-warp ones:
  // each block costs the launch about a nanosecond, exposed when there is little data).
  static constexpr int t1_small_max_warps_v = 4;
  static constexpr int t1_small_min_blocks_per_sm = 1;
  // Per layout and state width (f32 / 16-bit): lanes along K, rows per thread
  // (K-last: values; V-last: keys), and the register cap (launch bound).
  static constexpr int t1_klast_f32_lanes = 16, t1_klast_f32_rows = 4, t1_klast_f32_bound = 768;
  static constexpr int t1_klast_b16_lanes = 8, t1_klast_b16_rows = 4, t1_klast_b16_bound = 640;
  static constexpr int t1_vlast_f32_lanes = 4, t1_vlast_f32_rows = 8, t1_vlast_f32_bound = 896;
  static constexpr int t1_vlast_b16_lanes = 4, t1_vlast_b16_rows = 8, t1_vlast_b16_bound = 512;
  // V-last 16-bit state, t1 grid: lanes along V first (geometry::v_major_lanes).
  // NOTES.md v14, decode-ab, 3 rounds: bf16 state B=32 with PDL 24.92 -> 23.69
  // us, in graph 26.02 -> 24.90; fp32 state lost with it (B=32 with PDL 38.76
  // -> 39.52), so fp32 keeps the key lanes first.
  static constexpr bool t1_vlast_b16_v_major_lanes = true;
  static constexpr bool t1_stream_state = false;  // streaming cache hints on the state
  // bf16 q/k/v/output, K-last (decode_mode::t1_bf16io): the t1 tiles with
  // compile-time activation types and reduce-scattered sums. fp32 state at 72
  // registers (28 warps per SM): B=512 521 us against t1's 549 (64 registers
  // spill 8 bytes: 532; 80: 525); 16-bit state as t1 (within noise).
  // V-last fp32 state with bf16 activations: the t1 V-last body with
  // compile-time dtypes, NOTES.md v7 in graph: B=512 589.1 -> 583.3 us.
  static constexpr bool t1_bf16io = true;
  static constexpr int t1_bf16io_f32_bound = 896, t1_bf16io_b16_bound = 640;
  // fp32 state on grids under 2 heads per SM (fp32 B=8: 256 heads, 4096
  // one-warp blocks): decode_mode::t1_bf16io_smem, the tile in shared memory by
  // cp.async, at most 64 registers, 32 blocks per SM = one wave.
  // NOTES.md v8, decode-ab in graph: fp32 B=8 11.90 -> 11.78 us, with PDL 11.62
  // -> 11.48 (again at d91121f: 11.92 -> 11.68, PDL 11.62 -> 11.35); from B=32
  // on it lost (B=32 37.84 -> 38.36, B=512 534.6 -> 543.4). NOTES.md v9, the
  // sums column by column as the copies land: B=8 11.77 -> 11.54, PDL 11.43 -> 11.26;
  // and from then on larger grids gain too (decode-ab, 2 rounds, in graph / PDL:
  // B=32 38.07 / 37.70 -> 38.04 / 37.65, B=128 137.99 / 137.78 -> 137.68 /
  // 137.43, B=512 535.80 / 535.28 -> 534.72 / 534.46 us), so grids of at least
  // 4 heads per SM take it as well. In between (fp32 B=9-16 here) t1_bf16io
  // keeps its look-ahead over the last partial wave (not measured with _smem).
  static constexpr int t1_bf16io_smem_max_heads_per_sm = 2;
  static constexpr int t1_bf16io_smem_min_heads_per_sm = 4;
  // 16-bit state (bf16 I/O, K = 128) from 4 heads per SM: the same body instead
  // of t1_pipe, at <= 80 registers (80 used since NOTES.md v12, 76 before; 24
  // warps per SM). NOTES.md v10, decode-ab, 2 rounds, in graph: bf16 B=32
  // 26.18 -> 21.23 us, B=128 85.09 -> 74.38, B=512 293.39 -> 281.71 (64
  // registers spill 112 bytes: 372.5 at B=512; 72 spill 48 bytes: 284.4).
  static constexpr int t1_bf16io_smem_b16_min_heads_per_sm = 4, t1_bf16io_smem_b16_bound = 768;
  // V-last 16-bit state (bf16 I/O) from 4 heads per SM (8 before NOTES.md v24
  // run 7, where t1_pipe took over earlier): the t1 V-last body (4 warps along K) with its tile through
  // shared memory, its lanes along V first (v_major_lanes). NOTES.md v14,
  // decode-ab, 3 rounds, with PDL, pipe -> this: bf16 state B=128 88.29 ->
  // 83.23 us, B=512 317.16 -> 314.80 (B=32, on t1: 24.32 against the V-major
  // register tile's 23.69). Before the lane order, the same body lost 15-27 %
  // (NOTES.md v10 run 6, v14 run 1). With the tile's uniform address steps
  // (v24 run 4) it also beats the register tile at B=32 (7.8 heads per SM):
  // v24 run 7, decode-ab, 3 rounds, 8 -> 4, in graph 24.96 -> 24.62 us, with
  // PDL 23.67 -> 23.46, isolated 27.55 -> 26.91.
  static constexpr int t1_bf16io_smem_vlast_b16_min_heads_per_sm = 4;
  // V-last fp32 state (bf16 I/O) from 4 heads per SM (fp32 B >= 17), as K-last:
  // the same body with 2 warps along V (blocks of 8 warps, 256 bytes of every
  // key row: 32 KB tiles, 4 blocks per SM). NOTES.md v14 run 7, decode-ab, 3
  // rounds, with PDL, register tile / 1 / 2 / 4 warps along V: B=32 38.92 /
  // 39.12 / 38.44 / 38.48 us, B=128 146.96 / 147.18 / 142.17 / 146.05, B=512
  // 578.61 / 577.87 / 555.06 / 564.73. 16-bit state likewise 2 warps along V (a
  // whole bf16 head of K = V = 128 per block): run 8, 1 -> 2, with PDL, B=512
  // 314.74 -> 306.43 us, B=128 83.27 -> 83.38 (in graph 84.08 -> 84.54).
  static constexpr int t1_bf16io_smem_vlast_f32_min_heads_per_sm = 4;
  static constexpr int t1_bf16io_smem_vlast_f32_warps_v = 2, t1_bf16io_smem_vlast_b16_warps_v = 2;
  static constexpr int t1_bf16io_smem_bound = 1024;
  static constexpr int t1_bf16io_max_warps_v = 1;
  static constexpr int t1_max_warps_v = 1;
  // fp32 t1_bf16io grids of less than two waves (28 one-warp blocks resident
  // per SM; fp32 B=9-14 since t1_bf16io_smem takes B=8): the first thing a
  // block does is prefetch into L2 the tile of the block this many blocks per
  // SM later, i.e. the partial last wave's (0: off; keep it = the resident
  // blocks per SM). NOTES.md v7, A/B in graph at B=8 (then 1.1 waves of this
  // kernel): 12.33 -> 11.92 us, with PDL 12.00 -> 11.63.
  static constexpr int t1_bf16io_f32_lookahead_blocks_per_sm = 28;
  // V-last shared-memory T = 1 grids (t1_bf16io_smem, t1_per_key_smem) of
  // fewer blocks than this many waves: every block, once its own tile is
  // issued, prefetches into L2 the tile of the block one wave on (0: off).
  // NOTES.md v43 run 1, with PDL: 16-bit B=32 21.72 -> 20.63 us (2.6 waves),
  // B=128 77.92 -> 76.53 (10.3 waves), B=512 (41 waves) 293.99 -> 295.36 with
  // it; fp32 lost at every size (B=128 141.38 -> 153.98).
  static constexpr int t1_vlast_smem_f32_lookahead_waves = 0, t1_vlast_smem_b16_lookahead_waves = 16;
  // V-last: warps per block (warps_k = 4 of them split K: one warp along V).
  static constexpr int t1_vlast_max_warps_v = 4;
  // Programmatic launch (DK_OPTION_PROGRAMMATIC_LAUNCH): blocks of the t1_small
  // and general kernels prefetch their state tile and the lines of their
  // operands into L2 before the grid dependency wait when the call reads at
  // most this many state bytes per SM (every block; the t1 grids: the next
  // knob). dk_bench in graph, NOTES.md v5: B=1 fp32 3.94 -> 3.51 us, contest
  // 3.09 -> 2.71, bf16 B=8 (8 MiB) 8.50 -> 8.35; but fp32 B=8 (16 MiB) 12.31 -> 12.65,
  // B=32 37.6 -> 39.4, T=4 B=32 65.3 -> 74.6: the early blocks' prefetches
  // compete with the running kernel's own loads and leave L2 before use.
  // NOTES.md v6: even the operand lines alone (8 per block) cost fp32 B=8 on the
  // t1 grid 12.3 -> 15.7 us, B=32 +4 us, B=512 +22 us; triggering dependents
  // only once a block's state has arrived did not change that.
  static constexpr int programmatic_prefetch_max_bytes_per_sm = 64 * 1024;
  // Programmatic launch on the rotated t1 grids (t1, t1_bf16io, t1_bf16io_smem(_wide)):
  // the last this-many blocks per SM of the first wave prefetch their tile and
  // operand lines before the wait (0: none). NOTES.md v11, decode-ab, in graph
  // with PDL, 0 / 4 / 8 / 12: fp32 B=8 11.07 / 10.55 / 10.99 / 11.57 us, B=32
  // 37.39 / 36.71 / 37.02 / 37.56, B=512 535.52 / 534.90 / 534.95 / 535.29,
  // bf16 B=32 21.04 / 20.39 / 20.49 / 20.64, V-last fp32 B=32 40.42 / 39.98 /
  // 40.90 / 40.88; against 1 / 2 / 3 (another start): B=32 36.39 against 36.96
  // / 36.77 / 36.59, B=8 10.55 against 10.84 / 10.69 / 10.60. Without PDL
  // nothing changes.
  static constexpr int programmatic_late_prefetch_blocks_per_sm = 4;
  // The same for V-last state, whose t1 blocks are 4 warps (fp32: 16 KB of
  // state, 7 blocks per SM). NOTES.md v14 run 2, decode-ab, 3 rounds, with PDL,
  // 4 / 1 / 2 / 3: V-last fp32 B=32 39.12 / 38.50 / 38.51 / 38.80 us, B=128
  // 147.18 / 146.98 / 146.88 / 147.14, B=512 577.30 / 576.78 / 576.58 / 577.18,
  // bf16 state B=32 25.08 / 25.22 / 24.96 / 24.88; without PDL level. Measured
  // on the register tiles; the V-last shared-memory blocks that took over later
  // (8 warps, 4 per SM) ran only with 2 (runs 7-8).
  static constexpr int programmatic_late_prefetch_vlast_blocks_per_sm = 2;
  // T = 2..16 with bf16 I/O, K-last state (decode_mode::tn_bf16io): 16 lanes x
  // 8 keys x 4 rows per thread (the t1 fp32 tile, 4 KB per warp at fp32), at
  // most 96 registers (21 warps per SM; below). NOTES.md v22 run 1, decode-ab, 3
  // rounds, T = 4 with PDL, general / 80 registers (168-232 bytes spilled) / 96
  // (8-112) / 128 (none): fp32 B=1 12.22 / 6.82 / 6.66 / 6.31 us, B=8 23.29 /
  // 22.86 / 20.44 / 17.20, B=32 65.46 / 68.33 / 62.07 / 59.84, B=128 226.54 /
  // 249.34 / 221.78 / 224.71; bf16 state B=32 60.38 / 52.55 / 51.05 / 50.55,
  // B=128 213.32 / 190.42 / 187.73 / 187.93. With the decay factored out of
  // the tile (v23 run 1), 16-bit state gains from a bound of 576 threads
  // (ptxas: 96 registers, 40-48 bytes spilled): v23 run 2, decode-ab, 2
  // rounds, T = 4 with PDL, bound 512 / 576: bf16 state B=1 6.00 / 5.86, B=8
  // 14.70 / 15.36, B=32 50.22 / 46.29, B=128 186.81 / 171.14; fp32 state at 576
  // lost then (B=32 57.21 / 60.59, B=8 16.17 / 20.42). With the tile's
  // addresses kept as one per-lane offset and warp-uniform steps (v24 run 1)
  // both fit 96 registers without spilling (fp32 bound 640, 21 warps per SM):
  // decode-ab, 2 rounds, T = 4 with PDL, fp32 at 128 registers (115 used) / 96:
  // B=1 5.82 / 5.72 us, B=8 15.76 / 16.31, B=32 55.91 / 52.72, B=128 211.70 /
  // 195.69; 16-bit state at 96 no longer spills: B=32 46.36 -> 44.48, B=128
  // 171.20 -> 163.06. 16-bit state keeps 576: on sm_90a bound 640 gives it the
  // same SASS, but on sm_100a and sm_120a two of its instances spill 28 bytes
  // at 640 and none at 576 (ptxas, compiled only).
  static constexpr bool tn_bf16io = true;
  static constexpr int tn_bf16io_lanes = 16, tn_bf16io_rows = 4;
  static constexpr int tn_bf16io_bound = 640, tn_bf16io_bound16 = 576;
  // Grids of 1 to 4 heads per SM (T = 4: B=8 at HV=32, about two waves) lost
  // to the lower caps above: fp32 B=8 15.76 -> 16.31 us at 96 registers (v24
  // run 1), 16-bit state B=8 14.70 -> 15.36 at 576 (v23 run 2). There the
  // same kernel runs at 128 registers (decode_mode::tn_bf16io_mid; ptxas
  // 102-115, no spill). NOTES.md v26 run 1, decode-ab, 2 rounds, T = 4, B=8,
  // isolated / in graph / PDL, without -> with: fp32 19.89 / 17.06 / 16.44 ->
  // 19.86 / 17.00 / 15.85 us, bf16 state 19.10 / 15.60 / 15.35 -> 18.66 /
  // 15.22 / 14.50; B=1 (0.24 heads per SM), B=32 and B=128 level.
  static constexpr int tn_bf16io_mid_min_heads_per_sm = 1, tn_bf16io_mid_max_heads_per_sm = 4;
  static constexpr int tn_bf16io_mid_bound = 512;
  // T = 2..tn_mma_max_tokens with bf16 I/O, K-last state, gate none or scalar
  // (decode_mode::tn_mma, before tn_bf16io): the tokens at once on tensor cores
  // (decode_tn_mma.cuh), one warp per 16 value rows. NOTES.md v34 runs 1-2, a
  // standalone copy of the body, T = 4, launches back to back: fp32 state B=32
  // 42.2 us, B=128 150.9 (tn_bf16io in docs/perf at 77b35af, in graph: 53.7,
  // 196); bf16 state 24.3, 80.6 (45.0, 163). Bounds 384 (fp32: 166 registers)
  // and 512 (16-bit: 128 registers; the copy spilled 28 bytes, the library 24-48; at 448 no faster).
  // fp32 at 512 (128 registers, 88-96 bytes spilled; NOTES.md v35 run 6, T = 4
  // with PDL): K-last B=8 13.28 -> 12.69 us but B=1 4.70 -> 5.07, B=32 41.32
  // -> 42.94, B=128 152.57 -> 156.71, V-last 3-11 % slower at every B.
  static constexpr bool tn_mma = true;
  static constexpr int tn_mma_max_tokens = 4;
  static constexpr int tn_mma_f32_bound = 384, tn_mma_b16_bound = 512;
  // V-last state on the same body (its loads 8 or 4 bytes of 2 values a lane
  // and key): blocks of 4 warps along V, so that a block reads 128 (16-bit)
  // or 256 (fp32) contiguous bytes of each key row. NOTES.md v35 runs 1-2,
  // decode-ab, 2 rounds, T = 4 with PDL, tn_vlast -> this: fp32 state B=32
  // 66.87 -> 45.80 us, B=128 246.84 -> 171.08; bf16 state 62.42 -> 30.35,
  // 233.54 -> 111.17. 1 or 2 warps along V: level or up to 2 % slower for
  // fp32, 2-6 % slower for bf16 at B=32 / 128 (B=1 and B=8 take one warp per
  // block by min_blocks_per_sm anyway). 16-bit bound 384 (168 registers, 8
  // bytes spilled against 84 at 512, before the k reload below): bf16 B=8 to
  // B=128 8-10 % slower.
  static constexpr bool tn_mma_vlast = true;
  static constexpr int tn_mma_vlast_warps_v = 4;
  static constexpr int tn_mma_vlast_b16_bound = 512;
  // V-last bf16 state: the update's k loaded again (L1) instead of kept in
  // registers from the first products and shuffled: ptxas spill 84 -> 32
  // bytes; NOTES.md v35 run 4, decode-ab, 2 rounds, T = 4 with PDL: B=1 4.62
  // -> 3.79 us, B=8 10.45 -> 9.34, B=32 30.58 -> 28.80, B=128 112.14 ->
  // 99.74. The other instances lost 1-8 % with it (K-last fp32 B=32 41.63 ->
  // 42.48, bf16 24.90 -> 25.35; V-last fp32 46.43 -> 46.87); fp16 V-last state
  // (not in the benchmark) would spill more with it (40 -> 68 bytes), so off there.
  static constexpr bool tn_mma_vlast_bf16_reload_k = true;
  // T = 5..16 (gate none or scalar) on the same body in chunks of 4 tokens
  // (decode_mode::tn_mma_chunked, before tn_bf16io / tn_vlast): the tile is
  // held as fp32 between chunks, so every state dtype takes the fp32 cap.
  // NOTES.md v37 run 1, decode-ab, 2 rounds, T = 8 with PDL, tn_bf16io /
  // tn_vlast -> this: fp32 B=1 7.59 -> 7.23 us, B=8 21.98 -> 19.39, B=32
  // 72.38 -> 55.94, B=128 257.46 -> 200.25, V-last B=32 90.78 -> 63.79; bf16
  // 7.36 -> 6.54, 21.27 -> 15.94, 69.48 -> 45.40, 260.14 -> 166.22, V-last
  // 93.88 -> 49.69. 16-bit state at 512 (run 2): B=8 12 % faster, B=1 18 %
  // and B >= 32 2-5 % slower. With it up to 16 tokens, the scalar-gate
  // tn_bf16io(_mid) and tn_vlast instances take no call and are not built
  // (tn_mma_chunked_covers); tn_per_key still runs on their bodies.
  static constexpr bool tn_mma_chunked = true;
  static constexpr int tn_mma_chunked_max_tokens = 16, tn_mma_chunked_bound = 384;
  // Per-key gates (KDA) at T = 2..tn_mma_max_tokens on the same body
  // (decode_mode::tn_mma_per_key, before tn_per_key): the decays in the B
  // operands and the sums, staged in shared memory by the block's 4 warps
  // (one key a thread at K = 128; their loads before the tile's). NOTES.md v36
  // run 3, decode-ab, 2 rounds, Kimi Linear's heads at T = 4 with PDL,
  // tn_per_key -> this: K-last fp32 B=1 6.75 -> 6.49 us, B=32 69.50 -> 51.31,
  // B=128 252.07 -> 180.44; bf16 state 6.50 -> 5.81, 65.76 -> 33.26, 246.16
  // -> 123.88; V-last fp32 B=32 78.04 -> 54.75, B=128 289.08 -> 200.61; bf16
  // 7.06 -> 6.34, 79.17 -> 36.57, 293.97 -> 133.93; but V-last fp32 B=1
  // 6.42 -> 7.40 (32 heads: below one head per SM it stays on tn_per_key).
  // 2 warps (2 keys a thread): 2-16 % slower (run 2); the loads after the
  // tile's: 1-8 % slower (run 3).
  static constexpr bool tn_mma_per_key = true;
  static constexpr int tn_mma_per_key_warps_v = 4, tn_mma_per_key_vlast_f32_min_heads_per_sm = 1;
  // Its K-last blocks (4 warps, where the other K-last grids have one) that
  // prefetch their tiles before the programmatic wait, per SM: 4, as the
  // one-warp grids, lost 1-3 % against no programmatic launch; 1 (the same
  // warps) with PDL, NOTES.md v36 run 5: fp32 B=32 51.18 -> 49.76 us, B=128
  // 180.59 -> 179.66, bf16 B=128 124.28 -> 122.80, B=32 33.23 -> 33.41, B=1
  // level; none: the same but bf16 B=32 33.82. V-last keeps
  // programmatic_late_prefetch_vlast_blocks_per_sm (2; 1 level, none 0.2-2 % slower).
  static constexpr int tn_mma_per_key_late_prefetch_blocks_per_sm = 1;
  // Per-key gates at T = 5..tn_mma_chunked_max_tokens in chunks of 4 tokens
  // (decode_mode::tn_mma_per_key_chunked, before tn_per_key): the block stages
  // every chunk's decays and sums before the first, at tn_mma_chunked_bound.
  // NOTES.md v38 run 1, decode-ab, 2 rounds, Kimi Linear's heads at T = 8 with
  // PDL, tn_per_key -> this (then restaging before each chunk): K-last fp32
  // B=32 114.80 -> 84.65 us, B=128 429.66 -> 305.15; bf16 112.16 -> 76.07,
  // 425.32 -> 279.56; V-last B=32 fp32 127.65 -> 87.93, bf16 127.21 -> 78.78.
  // Every stage at once (v40 run 1): 3.1-6.6 % less again. With it up to 16 tokens, tn_per_key takes
  // only V-last fp32 state under tn_mma_per_key_vlast_f32_min_heads_per_sm; its
  // other instances are not built (tn_mma_per_key_chunked_covers).
  static constexpr bool tn_mma_per_key_chunked = true;
  // Every tn_mma block prefetches into L2 the tile of the block that takes
  // its place about a wave later (the resident warps per SM at the register
  // caps: fp32 12, 16-bit 16; 0 = off). NOTES.md v35 run 8, decode-ab, 2
  // rounds, T = 4 with PDL, off -> on: V-last fp32 B=8 15.39 -> 15.16 us, B=32
  // 46.63 -> 45.74, B=128 173.13 -> 167.18; but K-last bf16 B=32 24.41 ->
  // 25.71, B=128 85.64 -> 89.22, K-last fp32 B=32 / 128 +0.5 / +0.7 %,
  // V-last bf16 B=128 +1.4 %. Two waves ahead: 2-19 % slower everywhere.
  static constexpr int tn_mma_f32_lookahead_warps = 0, tn_mma_b16_lookahead_warps = 0;
  static constexpr int tn_mma_vlast_f32_lookahead_warps = 12, tn_mma_vlast_b16_lookahead_warps = 0;
  // T = 2..16 with per-key gates (KDA) and bf16 I/O, K-last state
  // (decode_mode::tn_per_key; no call here since tn_mma_per_key_chunked, not
  // built on NVIDIA targets): the tn_bf16io tile with its keys' decays, at
  // most 128 registers (ptxas 122-128, no spill; any cap above 512 threads
  // gives 96 and spills 24-92 bytes). NOTES.md v30 runs 1-2, decode-ab, 2
  // rounds, Kimi Linear's heads at T = 4 with PDL, general kernel -> this: fp32
  // state B=1 21.43 -> 7.81 us, B=32 80.43 -> 70.20, B=128 276.06 -> 255.55;
  // bf16 state 21.56 -> 7.44, 77.51 -> 66.00, 274.08 -> 247.34. At 96
  // registers (spilling): bf16 B=32 / 128 0.4 / 1.2 % faster, B=1 and fp32
  // state 0.6-13 % slower.
  static constexpr bool tn_per_key = true;
  static constexpr int tn_per_key_f32_bound = 512, tn_per_key_b16_bound = 512;
  // T = 2..16 with bf16 I/O on V-last state (decode_mode::tn_vlast): an fp32
  // tile per thread of 8 keys x 4 values (fp32 state, 16 lanes along K) or 4
  // keys x 8 values (16-bit state, 32 lanes: a 16-byte vector of values), so
  // that one warp holds all of K = 128 and a token's sums need no barrier, at
  // most 128 registers. NOTES.md v31 run 3, decode-ab, 2 rounds, T = 4 with
  // PDL, 4 warps along K (4 / 8 lanes) -> one: bf16 state B=1 7.30 -> 5.76 us,
  // B=8 23.37 -> 19.60, B=32 86.62 -> 66.92, B=128 328.93 -> 253.22; fp32
  // state 6.04 -> 5.48, 20.60 -> 19.97, 70.93 -> 70.78, 260.18 -> 265.17.
  // Since 8ddf085 / 77b35af the one-warp tile's sums are reduce-scattered
  // (fp32) or take one scatter stage (16-bit) (decode_tn_vlast.cuh, NOTES.md
  // v33): fp32 B=128 246.91, bf16 state 233.54 us, under the 4-warp tile's.
  static constexpr bool tn_vlast = true;
  static constexpr int tn_vlast_f32_lanes = 16, tn_vlast_f32_rows = 8;
  static constexpr int tn_vlast_b16_lanes = 32, tn_vlast_b16_rows = 4;
  static constexpr int tn_vlast_max_warps_v = 4, tn_vlast_bound = 512;
  // One scatter stage before the butterflies on the 16-bit tile (NOTES.md v33
  // run 5, T = 4 B=32 with PDL: none 66.98 us, one 62.36, two 75.94; the whole
  // scatter +12 %, run 2).
  static constexpr int tn_vlast_b16_scatter_stages = 1;
  // T = 2..16 with per-key gates (KDA) and bf16 I/O on V-last state
  // (decode_mode::tn_per_key on the tn_vlast body): each thread's keys take
  // their own decay, within tn_vlast_bound. fp32 state keeps 4 warps along K
  // (4 lanes x 8 keys): with one warp (16 lanes) each lane finishes 4 decays
  // per token, and B=32 / 128 took 11 / 9 % longer (NOTES.md v31 run 4).
  static constexpr bool tn_per_key_vlast = true;
  static constexpr int tn_per_key_vlast_f32_lanes = 4, tn_per_key_vlast_f32_rows = 8;
  static constexpr int tn_per_key_vlast_b16_lanes = 32, tn_per_key_vlast_b16_rows = 4;
  // T = 1 streaming kernel (K-last, large grids; bulk copies, sm_90+): 4 warps
  // per block, 3 blocks per SM, 3 stages of 4 KB per warp = 144 KB of shared
  // memory per SM, up to 96 KB of state in flight besides the tiles being computed
  // (3 stages against 4, NOTES.md v4: bf16 B=512 289.9 against 298.5 us with
  // in-order slots, 295.9 against 298.6 with dk_bench's shuffled slots).
  // Measured (NOTES.md): 16-bit state B=512 301 us against t1's 326, B=128 82
  // against 86; fp32 state stays on t1 (B=512 552 us against 569-577 for every
  // stage count 2-6 and 8-16 warps per SM tried). Chunks of 4 tiles dealt
  // round-robin beat one contiguous run per warp at >= 64 tiles per warp
  // (16-bit B=512 292 against 301) and lose below (load imbalance).
  static constexpr int t1_pipe_f32_min_heads_per_sm = 0;
  static constexpr int t1_pipe_b16_min_heads_per_sm = 4;
  static constexpr int t1_pipe_stages = 3;
  static constexpr int t1_pipe_warps = 4;
  static constexpr int t1_pipe_blocks_per_sm = 3;
  static constexpr int t1_pipe_chunk = 4;
  static constexpr int t1_pipe_chunk_min_tiles_per_warp = 64;
  // V-last 16-bit state: a block of 4 warps walks tiles of one
  // t1_pipe_vlast_row_bytes run of every key row: 256 bytes = a whole bf16
  // head (32 KB, one bulk copy from a compact pool), 2 stages, 3 blocks per SM
  // (~216 KB of shared memory). Measured: B=512 327 us (128-byte runs, 16 KB
  // tiles of 128 row copies each: 359; t1: 388), B=128 91.9 (99.3; 102); B=32
  // stays on t1 (29.9 against the pipe's 33.0), hence from 8 heads per SM.
  static constexpr int t1_pipe_vlast_b16_min_heads_per_sm = 8;
  static constexpr int t1_pipe_vlast_row_bytes = 256;
  static constexpr int t1_pipe_vlast_stages = 2;
  static constexpr int t1_pipe_vlast_warps = 4;
  static constexpr int t1_pipe_vlast_blocks_per_sm = 3;
};

}  // namespace dk::tuning
