// The compile-time shape of a decode kernel instance: what the kernel
// receives (launch_params), its geometry (tile, lanes, warps, launch bound,
// from the tuning tables) and the general body's shared-memory layout.
#pragma once
#include <stdint.h>

#include "common/vendor.cuh"
#include "common/fast_div.hpp"  // after vendor.cuh: DK_HOST_DEVICE
#include "dk/problem.hpp"
#include "tuning/tuning.hpp"

namespace dk::gpu::decode_detail {

using tuning::decode_class;
using tuning::decode_mode;
using tuning::decode_shape;

// What the kernel receives by value.
struct launch_params {
  decode_problem p;
  int v_tiles;  // V tiles per (sequence, head)
  int v_tile;   // values per block (t1_pipe: per tile): warps along V * v_per_warp (a power of two)
  int v_shift;  // log2(v_tile) (not used by t1_pipe)
  int chunk;    // t1_pipe: tiles dealt to a walker at a time (0: one contiguous run)
  // Programmatic launch: blocks prefetch_first .. prefetch_end - 1 prefetch their
  // state tile and operand lines into L2 before the wait (none when first == end).
  uint32_t prefetch_first, prefetch_end;
  int lookahead;  // t1_bf16io grids under 2 waves, V-last smem grids of few waves, tn_mma grids: block i < blocks - lookahead prefetches block i + lookahead's tile (0: none)
  // block_place's divisors (V tiles, HV, value heads per q/k head), set by set_divisors.
  fast_div by_v_tiles, by_hv, by_group;
};

// Compile-time geometry of one kernel instance (see tuning/decode_shape.hpp).
template <int Family, decode_class C, dtype S, state_layout L, decode_mode M = decode_mode::general>
struct geometry {
  using table = tuning::decode_tuning<Family>;
  static constexpr decode_mode mode = M;
  static constexpr bool k_last = L == state_layout::k_last;
  // tn_bf16io (T > 1) runs its own body on a t1-like grid; `t1` means T = 1.
  // tn_bf16io_mid is the same kernel under another register cap.
  // tn_per_key is its body with a decay per key (K-last), or tn_vlast's (V-last).
  static constexpr bool tn_per_key = M == decode_mode::tn_per_key;
  static constexpr bool tn = M == decode_mode::tn_bf16io || M == decode_mode::tn_bf16io_mid || (tn_per_key && k_last);
  // tn_vlast (T > 1, V-last state) runs its own body on the t1 V-last grid.
  static constexpr bool tnv = M == decode_mode::tn_vlast || (tn_per_key && !k_last);
  // tn_mma (T = 2..4) runs its own body on the tensor cores, 16 values a warp;
  // tn_mma_per_key is that body with a decay per key; tn_mma_chunked the body
  // over T > 4 in chunks of 4 tokens, its tile held as fp32 between them;
  // tn_mma_per_key_chunked both.
  static constexpr bool mma_per_key = M == decode_mode::tn_mma_per_key || M == decode_mode::tn_mma_per_key_chunked;
  static constexpr bool mma_chunked = M == decode_mode::tn_mma_chunked || M == decode_mode::tn_mma_per_key_chunked;
  static constexpr bool tnm = M == decode_mode::tn_mma || mma_per_key || mma_chunked;
  static constexpr bool t1 = M != decode_mode::general && !tn && !tnv && !tnm;
  static constexpr bool pipe = M == decode_mode::t1_pipe;
  // t1_per_key: the t1 body with a decay per key (KDA), on the t1 tiles;
  // t1_small_per_key: the same on t1_small's; t1_per_key_smem: the
  // t1_bf16io_smem body with them.
  static constexpr bool per_key = M == decode_mode::t1_per_key || M == decode_mode::t1_small_per_key ||
                                  M == decode_mode::t1_per_key_smem;
  static constexpr bool small =
      M == decode_mode::t1_small || M == decode_mode::t1_small_bf16io || M == decode_mode::t1_small_per_key;
  static constexpr bool bf16io = M == decode_mode::t1_bf16io || M == decode_mode::t1_bf16io_smem ||
                                 M == decode_mode::t1_bf16io_smem_wide || M == decode_mode::t1_per_key_smem;
  // q, k, v and the output are bf16 at compile time (io_operand): the bf16-I/O
  // modes and t1_small_bf16io (the t1 body on small grids).
  static constexpr bool typed_io = bf16io || M == decode_mode::t1_small_bf16io || tnv;
  // Blocks take each sequence's tiles from a rotated start (block_place): the
  // multi-wave T = 1 grids. t1_small's grids are under a wave (the rotation
  // would only lengthen the path to the slot load); t1_pipe rotates its walk.
  static constexpr bool rotated = (t1 && !small && !pipe) || tn || tnv || tnm;
  static constexpr int esize = S == dtype::f32 ? 4 : 2;
  // t1_bf16io_smem (K-last): the state tile arrives in shared memory by
  // cp.async instead of in registers.
  static constexpr bool smem_state = M == decode_mode::t1_bf16io_smem || M == decode_mode::t1_bf16io_smem_wide ||
                                     M == decode_mode::t1_per_key_smem;
  // t1_bf16io_smem_wide (fp32 grids of many waves): the gate finished after
  // the sums (decode_t1_bf16io_body).
  static constexpr bool wide = M == decode_mode::t1_bf16io_smem_wide;
  // The slot index read as two 32-bit words (slot_of): the wide instance and
  // the V-last bf16-I/O ones; B=8 and 16-bit state were slower with it (NOTES.md
  // v12 run 15, v13 runs 4 and 9).
  static constexpr bool slot_words = wide || (!k_last && bf16io);
  // V-last t1_bf16io_smem (its cp.async copies coalesce only across
  // consecutive lanes, NOTES.md v14) and 16-bit V-last state on the t1 grid: a
  // warp's lanes run along V first (lane = key lane * lanes_v + value lane),
  // so that consecutive lanes read one 128-byte run of a key row.
  static constexpr bool v_major_lanes =
      !k_last && t1 && !small && !pipe && (smem_state || (esize == 2 && table::t1_vlast_b16_v_major_lanes));
  static constexpr decode_shape shape =
      tnm   ? dk::tuning::tn_mma_shape_of<table>(C, k_last, esize, mma_per_key)
      : tn  ? dk::tuning::tn_shape_of<table>(C, esize)
      : tnv ? dk::tuning::tn_vlast_shape_of<table>(C, esize, tn_per_key)
      : t1  ? dk::tuning::t1_shape_of<table>(C, k_last, esize, small, bf16io, smem_state)
           : table::shape(C, k_last, esize);
  static constexpr int vec = 16 / esize;  // state elements per 16-byte vector
  static constexpr int lanes_k = shape.lanes_k;
  static constexpr int lanes_v = kWarpSize / lanes_k;
  static constexpr int warps_k = shape.warps_k;
  static constexpr int nk = k_last ? shape.vec_chunks * vec : shape.rows;  // keys per thread
  static constexpr int nv = k_last ? shape.rows : shape.vec_chunks * vec;  // values per thread
  static constexpr int k_cover = nk * lanes_k * warps_k;
  static constexpr int v_per_warp = nv * lanes_v;
  // t1_pipe (decode_pipe.cuh): warps per block, resident blocks per SM, tiles
  // in flight per walker (K-last: a warp; V-last: the block); values per tile
  // (K-last: the t1 warp tile's rows; V-last: one run of every key row); bytes
  // of a tile, of each part of a walker's shared memory (stage barriers, the
  // head's v, V-last the head's q/k and the per-warp partial sums, then the
  // ring of tiles) and of a block's.
  static constexpr int pipe_keys = C == decode_class::k64 ? 64 : 128;
  static constexpr int pipe_warps = k_last ? table::t1_pipe_warps : table::t1_pipe_vlast_warps;
  static constexpr int pipe_blocks_per_sm = k_last ? table::t1_pipe_blocks_per_sm : table::t1_pipe_vlast_blocks_per_sm;
  static constexpr int pipe_stages = k_last ? table::t1_pipe_stages : table::t1_pipe_vlast_stages;
  static constexpr int pipe_vlast_row = table::t1_pipe_vlast_row_bytes;
  static constexpr int pipe_v_tile = k_last ? v_per_warp : pipe_vlast_row / esize;
  static constexpr int pipe_tile_bytes =
      k_last ? kWarpSize * shape.rows * shape.vec_chunks * 16 : pipe_keys * pipe_vlast_row;
  static constexpr int pipe_barrier_bytes = 128;
  static constexpr int pipe_vhead_bytes = 256 * 4;  // v of one head as fp32 (V <= 256)
  static constexpr int pipe_qk_bytes =
      k_last ? 0 : 2 * (pipe_keys + 4 * pipe_warps * (kWarpSize * 16 / pipe_vlast_row)) * 4;
  static constexpr int pipe_red_bytes = k_last ? 0 : pipe_warps * 2 * pipe_v_tile * 4;
  static constexpr int pipe_warp_bytes =
      pipe_barrier_bytes + pipe_vhead_bytes + pipe_qk_bytes + pipe_red_bytes + pipe_stages * pipe_tile_bytes;
  static constexpr int pipe_block_bytes = k_last ? pipe_warps * pipe_warp_bytes : pipe_warp_bytes;
  static constexpr int max_threads = pipe ? kWarpSize * pipe_warps : kWarpSize * warps_k * shape.max_warps_v;
  static constexpr int min_blocks_per_sm = small ? table::t1_small_min_blocks_per_sm
                                          : t1 || tn || tnm             ? table::t1_min_blocks_per_sm
                                                                        : table::min_blocks_per_sm;
  // Elements per thread of each staged operand in flight at once (general kernels).
  static constexpr int stage_rounds = table::stage_rounds;
  // T = 1: state loads and stores with streaming (evict-first) cache hints.
  static constexpr bool stream_state = t1 && table::t1_stream_state;
  // What __launch_bounds__ promises: at least the largest block, or more to cap
  // registers (64K / this per thread) so that more blocks stay resident.
  // (t1_pipe: the cap that keeps t1_pipe_blocks_per_sm blocks resident.)
  static constexpr int table_bound = pipe ? max_threads * pipe_blocks_per_sm
                                    : M == decode_mode::tn_bf16io_mid ? table::tn_bf16io_mid_bound
                                    : tnv ? table::tn_vlast_bound
                                    : mma_chunked ? table::tn_mma_chunked_bound
                                    : tnm ? (esize == 4   ? table::tn_mma_f32_bound
                                             : k_last ? table::tn_mma_b16_bound
                                                      : table::tn_mma_vlast_b16_bound)
                                    : tn_per_key ? (esize == 4 ? table::tn_per_key_f32_bound : table::tn_per_key_b16_bound)
                                    : tn ? (esize == 4 ? table::tn_bf16io_bound : table::tn_bf16io_bound16)
                                    : per_key ? dk::tuning::t1_per_key_bound_of<table>(k_last, esize, smem_state)
                                    : t1 ? dk::tuning::t1_launch_bound_of<table>(k_last, esize, bf16io, smem_state)
                                         : table::launch_bound;
  static constexpr int launch_bound = table_bound > max_threads ? table_bound : max_threads;
  static constexpr bool exact_k = C != decode_class::generic;  // the host guarantees K == k_cover
  // The device pass that compiles this instance's body.
  static constexpr int device_family = tuning::decode_device_family<Family>::value;

  static_assert(lanes_k >= 1 && lanes_k <= kWarpSize && (lanes_k & (lanes_k - 1)) == 0,
                "lanes_k must be a power of two within a warp");
  static_assert(!k_last || warps_k == 1, "K-last tiles keep K inside one warp");
  static_assert(nk % 4 == 0, "keys per thread are read from shared memory 4 at a time");
  static_assert((v_per_warp & (v_per_warp - 1)) == 0, "V tiles are powers of two");
  static_assert(C != decode_class::k128 || k_cover == 128, "k128 shape must cover K = 128");
  static_assert(C != decode_class::k64 || k_cover == 64, "k64 shape must cover K = 64");
  static_assert(C != decode_class::generic || k_cover >= 256, "generic shape must reach K = 256");
  static_assert(launch_bound <= 1024, "block too large");
  static_assert(!t1 || exact_k, "T = 1 kernels: K = 64 or 128");
  static_assert(!tn || (exact_k && k_last), "tn_bf16io: K-last, K = 64 or 128");
  static_assert(!tnm || (exact_k && v_per_warp == 16), "tn_mma: K = 64 or 128, 16 values a warp");
  static_assert(!pipe || !k_last || shape.max_warps_v == 1, "t1_pipe: K-last, one warp per tile");
  static_assert(!pipe || pipe_stages * 8 <= pipe_barrier_bytes, "t1_pipe: stage barriers overflow");
  static_assert(!t1 || k_last || (nk == 4 || nk == 8 || nk == 16),
                "V-last T = 1 keys per thread are read as one run of 4, 8 or 16");
};

// Shared-memory carve-up (in floats), computed identically on host and device.
struct smem_layout {
  int q, k, gate, v, scalars, red, total;
};
DK_HOST_DEVICE smem_layout make_smem_layout(int tokens, int k_cover, bool per_key, int v_tile,
                                            int warps_k) {
  smem_layout s;
  s.q = 0;
  s.k = tokens * k_cover;
  s.gate = 2 * tokens * k_cover;
  s.v = s.gate + (per_key ? tokens * k_cover : 0);
  s.scalars = s.v + ((tokens * v_tile + 3) & ~3);
  // Per token, 8 floats: beta, scalar decay, -, -, the per-token slot (int64), -, -.
  s.red = s.scalars + 8 * tokens;
  s.total = s.red + (warps_k > 1 ? 2 * warps_k * (2 * v_tile + 4) : 0);
  return s;
}

}  // namespace dk::gpu::decode_detail
