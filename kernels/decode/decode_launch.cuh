// The kernel entry point decode_kernel (with its prefetch before the
// programmatic wait) and, host side, the launch shape of an instance and the
// mode a launch runs in (mode_for).
#pragma once
#include "decode_geometry.cuh"
#include "decode_body.cuh"
#include "decode_t1_body.cuh"
#include "decode_pipe.cuh"        // the t1_pipe bodies, on top of the T = 1 helpers
#include "decode_t1_bf16io.cuh"  // the t1_bf16io body, likewise
#include "decode_tn_bf16io.cuh"  // the tn_bf16io body (T > 1), on the t1_bf16io helpers
#include "decode_tn_vlast.cuh"   // the tn_vlast body (T > 1, V-last), on the t1 helpers
#include "decode_tn_mma.cuh"     // the tn_mma body (T = 2..4, tensor cores)

namespace dk::gpu::decode_detail {

#if DK_VENDOR_CUDA && DK_ARCH_CUDA >= 900
// Programmatic launch, before the wait: brings the block's state tile into L2
// (the body reads the slot again after the wait).
template <class G>
DK_DEVICE void prefetch_block_tile(const launch_params& lp) {
  prefetch_tile_l2<G>(lp, uint32_t(blockIdx.x));
}

// Programmatic launch, before the wait (with the tile, same calls): the lines
// of the block's slot index and of its first token's q and k (each half of
// the key vector), v, beta and gate go into L2, one lane each, so that the
// body's first trips after the wait hit L2. B=1 in graph 3.52 -> 3.24 us.
template <class G>
DK_DEVICE void prefetch_block_operands(const launch_params& lp) {
  const decode_problem& p = lp.p;
  const int lane = int(threadIdx.x);
  if (lane >= (G::per_key ? 24 : 8)) return;
  const block_place<G::rotated> at(lp);
  auto element = [](const operand& o, int64_t i) {
    return static_cast<const char*>(o.data) + i * dtype_size(o.type);
  };
  if constexpr (G::per_key) {
    // Per-key gates at T = 1: the rest of the head's g row (lane 7 takes its
    // first line) and its dt_bias row, lanes 8 - 15 and 16 - 23 (KDA B=1 with
    // PDL, bf16 state 3.38 -> 3.15 us; tn_per_key lost 1-2 % with it: NOTES.md v30 run 4).
    if (lane >= 8) {
      const bool bias = lane >= 16;
      const operand& o = bias ? p.dt_bias : p.g;
      const int64_t row = bias ? at.h * p.dt_bias.stride[0] : at.b * p.g.stride[0] + at.h * p.g.stride[2];
      const int64_t e = int64_t((lane & 7) + (bias ? 0 : 1)) * (128 / dtype_size(o.type));
      if (o.data && e < p.dk) prefetch_l2(element(o, row + e));
      return;
    }
  }
  const int qk_head = at.qk_head;
  const int half = lane & 1 ? 0 : p.dk / 2;  // lanes 1, 3: first half; 2, 4: second
  const char* line = nullptr;
  switch (lane) {
    case 0:
      if (p.indices.data)
        line = static_cast<const char*>(p.indices.data) +
               at.b * p.indices.stride[0] * dtype_size(p.indices.type);
      break;
    case 1:
    case 2: line = element(p.q, at.b * p.q.stride[0] + qk_head * p.q.stride[2] + half); break;
    case 3:
    case 4: line = element(p.k, at.b * p.k.stride[0] + qk_head * p.k.stride[2] + half); break;
    case 5: line = element(p.v, at.b * p.v.stride[0] + at.h * p.v.stride[2] + at.tile * lp.v_tile); break;
    case 6: line = element(p.beta, at.b * p.beta.stride[0] + at.h * p.beta.stride[2]); break;
    default:
      if (p.g.data) line = element(p.g, at.b * p.g.stride[0] + at.h * p.g.stride[2]);
  }
  if (line) prefetch_l2(line);
}
#endif

// One instance per (family, class, state dtype, layout, mode). Its body is
// compiled only in the device pass of its own family: the host never launches another.
template <int Family, decode_class C, dtype S, state_layout L, decode_mode M>
__global__ void __launch_bounds__((geometry<Family, C, S, L, M>::launch_bound))  // (()): HIP's macro splits on commas
    decode_kernel(const launch_params lp) {
  using G = geometry<Family, C, S, L, M>;
  if constexpr (G::device_family == DK_ARCH_FAMILY) {
#if DK_VENDOR_CUDA && DK_ARCH_CUDA >= 900
    // Programmatic launch (DK_OPTION_PROGRAMMATIC_LAUNCH): nothing but the L2
    // prefetch before the previous kernel completes; the next may launch once
    // every block is past the wait.
    if (lp.p.programmatic_launch) {
      if constexpr (!G::pipe) {
        // Small calls: every block; t1 grids: the last blocks of the first wave (launch_one).
        if (blockIdx.x >= lp.prefetch_first && blockIdx.x < lp.prefetch_end) {
          prefetch_block_operands<G>(lp);
          prefetch_block_tile<G>(lp);
        }
      }
      grid_dependency_wait();
      allow_dependent_launch();
    }
#endif
    if constexpr (G::pipe && G::k_last) decode_t1_pipe_body<G, S>(kernel_param(lp));
    else if constexpr (G::pipe) decode_t1_pipe_vlast_body<G, S>(kernel_param(lp));
    else if constexpr (G::tn) decode_tn_bf16io_body<G, S>(kernel_param(lp));
    else if constexpr (G::tnv) decode_tn_vlast_body<G, S>(kernel_param(lp));
    else if constexpr (G::tnm) decode_tn_mma_body<G, S>(kernel_param(lp));
    else if constexpr (G::bf16io && G::k_last) decode_t1_bf16io_body<G, S>(kernel_param(lp));
    else if constexpr (G::t1) decode_t1_body<G, S>(kernel_param(lp));
    else decode_body<G, S>(kernel_param(lp));
  } else {
    trap();
  }
}

// ---- launch shape (host) ----

// Warps along V: as many as the shape allows (and V needs), halved while the
// grid would give fewer than min_blocks_per_sm blocks to each SM.
template <class G>
int warps_along_v(int compute_units, const decode_problem& p) {
  int w = G::shape.max_warps_v;
  // tn_mma_per_key: the block's warps share its stage (decode_tn_mma_keys.cuh),
  // which is compiled for all of them, past V or not.
  if constexpr (!G::mma_per_key) {
    while (w > 1 && (w / 2) * G::v_per_warp >= p.dv) w /= 2;
    const int64_t heads = int64_t(p.batch) * p.hv;
    const int64_t want = int64_t(G::min_blocks_per_sm) * compute_units;
    while (w > 1) {
      const int tile = w * G::v_per_warp;
      if (heads * ((p.dv + tile - 1) / tile) >= want) break;
      w /= 2;
    }
  } else {
    (void)compute_units, (void)p;
  }
  return w;
}

// block_place's divisors, once v_tiles is known.
inline void set_divisors(launch_params& lp) {
  lp.by_v_tiles = fast_div(uint32_t(lp.v_tiles));
  lp.by_hv = fast_div(uint32_t(lp.p.hv));
  lp.by_group = fast_div(uint32_t(lp.p.hv / lp.p.hq));
}

// Everything one launch of instance G needs.
struct launch_shape {
  launch_params lp;
  int threads;
  int64_t blocks;
  size_t smem;  // dynamic shared memory, bytes
};
// t1_pipe: a persistent grid of at most pipe_blocks_per_sm blocks per SM, no
// more than there are tiles for; each walker (K-last: a warp; V-last: a block)
// with its shared-memory ring.
template <class G>
launch_shape pipe_shape_of(int compute_units, const decode_problem& p) {
  using table = typename G::table;
  launch_shape ls;
  ls.lp.p = p;
  ls.lp.v_tile = G::pipe_v_tile;
  ls.lp.v_shift = 0;
  while ((1 << ls.lp.v_shift) < ls.lp.v_tile) ++ls.lp.v_shift;
  ls.lp.v_tiles = (p.dv + ls.lp.v_tile - 1) / ls.lp.v_tile;
  set_divisors(ls.lp);
  ls.threads = kWarpSize * G::pipe_warps;
  const int64_t tiles = int64_t(p.batch) * p.hv * ls.lp.v_tiles;
  const int64_t resident = int64_t(G::pipe_blocks_per_sm) * compute_units;
  const int64_t wanted = G::k_last ? (tiles + G::pipe_warps - 1) / G::pipe_warps : tiles;
  ls.blocks = wanted < resident ? wanted : resident;
  ls.smem = size_t(G::pipe_block_bytes);
  const int64_t walkers = G::k_last ? ls.blocks * G::pipe_warps : ls.blocks;
  ls.lp.chunk = table::t1_pipe_chunk > 0 && tiles >= walkers * table::t1_pipe_chunk_min_tiles_per_warp
                    ? table::t1_pipe_chunk
                    : 0;
  // Persistent walkers: a prefetch would run far ahead of its use.
  ls.lp.prefetch_first = ls.lp.prefetch_end = 0;
  ls.lp.lookahead = 0;
  return ls;
}

template <class G>
launch_shape shape_of(int compute_units, const decode_problem& p) {
  if constexpr (G::pipe) return pipe_shape_of<G>(compute_units, p);
  launch_shape ls;
  const int wv = warps_along_v<G>(compute_units, p);
  ls.lp.p = p;
  ls.lp.v_tile = wv * G::v_per_warp;
  ls.lp.chunk = 0;
  ls.lp.v_shift = 0;
  while ((1 << ls.lp.v_shift) < ls.lp.v_tile) ++ls.lp.v_shift;
  ls.lp.v_tiles = (p.dv + ls.lp.v_tile - 1) / ls.lp.v_tile;
  set_divisors(ls.lp);
  ls.threads = kWarpSize * G::warps_k * wv;
  ls.blocks = int64_t(p.batch) * p.hv * ls.lp.v_tiles;
  const int64_t state_bytes = int64_t(p.batch) * p.hv * p.dk * p.dv * G::esize;
  // Every block of small calls on the t1_small and general grids, and on the
  // grids of that size that have no small-grid variant: per-key T = 1, the
  // T > 1 kernels and the shared-memory tile (KDA B=1 with PDL 4.03 -> 3.57
  // us, but bf16 B=8 8.07 -> 8.47: NOTES.md v29 run 5; T = 4 B=1 8-14 %
  // faster: v30 run 4; the contest shape: v32 run 2). Prefetching in
  // every block of larger grids was slower in every run (NOTES.md v6); the
  // other rotated grids get a range of late first-wave blocks from launch_one.
  const bool small_unvaried = (G::per_key || G::tn || G::tnv || G::tnm || G::smem_state) &&
                              int64_t(p.batch) * p.hv < int64_t(G::table::t1_small_heads_per_sm) * compute_units;
  const bool prefetch_all = p.programmatic_launch && (G::small || small_unvaried || G::mode == decode_mode::general) &&
                            state_bytes <= int64_t(G::table::programmatic_prefetch_max_bytes_per_sm) * compute_units;
  ls.lp.prefetch_first = 0;
  ls.lp.prefetch_end = prefetch_all ? uint32_t(ls.blocks) : 0u;
  // fp32 bf16io grids of less than two waves: the first wave prefetches the last.
  const int64_t lead = int64_t(G::table::t1_bf16io_f32_lookahead_blocks_per_sm) * compute_units;
  ls.lp.lookahead =
      G::bf16io && !G::smem_state && G::k_last && G::esize == 4 && lead > 0 && ls.blocks < 2 * lead ? int(lead) : 0;
  // V-last shared-memory grids of few waves: every block prefetches the tile
  // one wave on (a wave: the blocks the launch bound keeps resident).
  if constexpr (G::smem_state && !G::k_last) {
    const int waves = G::esize == 4 ? G::table::t1_vlast_smem_f32_lookahead_waves
                                    : G::table::t1_vlast_smem_b16_lookahead_waves;
    const int64_t wave = int64_t(G::launch_bound / ls.threads) * compute_units;
    if (wave > 0 && ls.blocks < int64_t(waves) * wave) ls.lp.lookahead = int(wave);
  }
  // tn_mma: every block prefetches the tile of the block about one wave on
  // (the table's resident warps per SM over the block's warps), whatever the grid.
  if constexpr (G::tnm) {
    using tb = typename G::table;
    const int warps = G::k_last ? (G::esize == 4 ? tb::tn_mma_f32_lookahead_warps : tb::tn_mma_b16_lookahead_warps)
                                : (G::esize == 4 ? tb::tn_mma_vlast_f32_lookahead_warps
                                                 : tb::tn_mma_vlast_b16_lookahead_warps);
    ls.lp.lookahead = int(int64_t(warps / wv) * compute_units);
  }
  const bool per_key = p.r.gate == gate_kind::per_key;
  // (K-last per-key: each warp's staged gate rows after the tiles,
  // decode_t1_bf16io_body.)
  ls.smem = G::smem_state ? 16 * (size_t(t1_red_vectors(G::warps_k, ls.lp.v_tile)) +
                                  size_t(ls.threads) * G::shape.rows * G::shape.vec_chunks +
                                  (G::per_key && G::k_last ? size_t(ls.threads / kWarpSize) * (kGateStageBytes / 16) : 0))
            : G::mode != decode_mode::general
                ? (G::warps_k > 1 ? (G::tnv ? 2 : 1) * sizeof(float) * size_t(G::warps_k) * (2 * ls.lp.v_tile + 4) : 0)
                    : sizeof(float) * size_t(make_smem_layout(p.tokens, G::k_cover, per_key, ls.lp.v_tile,
                                                            G::warps_k).total);
  // tn_mma_per_key: the block's stage (decode_tn_mma_keys.cuh), with per-token
  // slots every token's state parts (of a chunk: at most 4), else the last token's;
  // tn_mma_per_key_chunked: one per chunk of 4 tokens.
  if constexpr (G::mma_per_key) {
    using stage = mma_key_stage<G::k_cover, tn_mma_run_keys(G::k_last, G::esize), G::shape.max_warps_v>;
    const int staged = p.token_indices.data ? (p.tokens < stage::kMaxT ? p.tokens : stage::kMaxT) : 1;
    const int chunks = G::mma_chunked ? (p.tokens + stage::kMaxT - 1) / stage::kMaxT : 1;
    ls.smem = sizeof(float) * size_t(stage::block_floats(staged)) * size_t(chunks);
  }
  return ls;
}

// The mode a launch of `p` runs in family F (decode_mode in tuning/decode_shape.hpp).
template <int F>
decode_mode mode_for(int compute_units, const decode_problem& p, decode_class c) {
  using table = tuning::decode_tuning<F>;
  if (c == decode_class::generic) return decode_mode::general;
  const bool bf16_activations = p.q.type == dtype::bf16 && p.k.type == dtype::bf16 &&
                                p.v.type == dtype::bf16 && p.out.type == dtype::bf16;
  const int64_t heads = int64_t(p.batch) * p.hv;
  if (p.r.gate == gate_kind::per_key) {
    const bool k_last = p.r.layout == state_layout::k_last;
    if (p.tokens != 1) {
      if (!bf16_activations) return decode_mode::general;
      // V-last fp32 state on small grids stays on tn_per_key (the table's
      // tn_mma_per_key_vlast_f32_min_heads_per_sm).
      const bool small_vlast_f32 =
          !k_last && p.pool.type == dtype::f32 &&
          heads < int64_t(table::tn_mma_per_key_vlast_f32_min_heads_per_sm) * compute_units;
      if (!small_vlast_f32) {
        if (tuning::tn_mma_per_key_takes<table>(k_last) && p.tokens <= table::tn_mma_max_tokens)
          return decode_mode::tn_mma_per_key;
        if (tuning::tn_mma_per_key_chunked_takes<table>(k_last) && p.tokens <= table::tn_mma_chunked_max_tokens)
          return decode_mode::tn_mma_per_key_chunked;
      }
      return tuning::tn_per_key_takes<table>(k_last) ? decode_mode::tn_per_key : decode_mode::general;
    }
    if (!tuning::t1_per_key_takes<table>()) return decode_mode::general;
    const int state_bytes = p.pool.type == dtype::f32 ? 4 : 2;
    if (tuning::t1_small_per_key_takes<table>(k_last, state_bytes) &&
        heads < int64_t(table::t1_small_heads_per_sm) * compute_units)
      return decode_mode::t1_small_per_key;
    // K-last: every grid; V-last: where the scalar gate takes the V-last shared-memory body.
    const int vlast_min = tuning::t1_bf16io_smem_vlast_min_heads_of<table>(state_bytes);
    const bool smem = bf16_activations && tuning::t1_per_key_smem_takes<table>(k_last) &&
                      (k_last ? tuning::t1_bf16io_klast_fits<table>(c, state_bytes)
                              : vlast_min > 0 && heads >= int64_t(vlast_min) * compute_units);
    return smem ? decode_mode::t1_per_key_smem : decode_mode::t1_per_key;
  }
  if (p.tokens != 1) {
    const bool k_last = p.r.layout == state_layout::k_last;
    if (!bf16_activations) return decode_mode::general;
    if (tuning::tn_mma_takes<table>(k_last) && p.tokens <= table::tn_mma_max_tokens) return decode_mode::tn_mma;
    if (tuning::tn_mma_chunked_takes<table>(k_last) && p.tokens <= table::tn_mma_chunked_max_tokens)
      return decode_mode::tn_mma_chunked;
    if (tuning::tn_vlast_takes<table>(k_last)) return decode_mode::tn_vlast;
    if (!tuning::tn_bf16io_takes<table>(k_last)) return decode_mode::general;
    const bool mid = tuning::tn_bf16io_mid_takes<table>(k_last) &&
                     heads >= int64_t(table::tn_bf16io_mid_min_heads_per_sm) * compute_units &&
                     heads < int64_t(table::tn_bf16io_mid_max_heads_per_sm) * compute_units;
    return mid ? decode_mode::tn_bf16io_mid : decode_mode::tn_bf16io;
  }
  if (!table::t1_kernels) return decode_mode::general;
  const bool bf16_io = table::t1_bf16io && bf16_activations;
  // K-last 16-bit state with bf16 activations on large grids: the shared-memory
  // tile body rather than t1_pipe (where the tile suits the bf16-I/O body).
  if (bf16_io && p.r.layout == state_layout::k_last && p.pool.type != dtype::f32 &&
      table::t1_bf16io_smem_b16_min_heads_per_sm > 0 && tuning::t1_bf16io_klast_fits<table>(c, 2) &&
      heads >= int64_t(table::t1_bf16io_smem_b16_min_heads_per_sm) * compute_units)
    return decode_mode::t1_bf16io_smem;
  // V-last state with bf16 activations likewise: the t1 V-last body with its
  // tile in shared memory (blocks of t1_bf16io_smem_vlast_*_warps_v warps along V;
  // 16-bit state rather than t1_pipe, fp32 rather than the register tile).
  const int vlast_smem_min = tuning::t1_bf16io_smem_vlast_min_heads_of<table>(p.pool.type == dtype::f32 ? 4 : 2);
  if (bf16_io && p.r.layout == state_layout::v_last && vlast_smem_min > 0 &&
      heads >= int64_t(vlast_smem_min) * compute_units)
    return decode_mode::t1_bf16io_smem;
  const int pipe_min = tuning::t1_pipe_min_heads_of<table>(p.r.layout == state_layout::k_last,
                                                          p.pool.type == dtype::f32 ? 4 : 2);
  if (pipe_min > 0 && heads >= int64_t(pipe_min) * compute_units) return decode_mode::t1_pipe;
  if (heads < int64_t(table::t1_small_heads_per_sm) * compute_units) {
    // fp32 K-last state, bf16 activations, a few heads (tensor-parallel shards
    // at B = 1-2): the shared-memory tile (under programmatic launch every block
    // prefetching) beats t1_small (NOTES.md v32 run 2). Not chosen by the
    // option, so that turning it on or off changes no result bit.
    if (bf16_io && p.r.layout == state_layout::k_last && p.pool.type == dtype::f32 &&
        table::t1_bf16io_smem_small_sms_per_head > 0 && tuning::t1_bf16io_smem_on<table>(true) &&
        tuning::t1_bf16io_klast_fits<table>(c, 4) &&
        heads * table::t1_bf16io_smem_small_sms_per_head <= int64_t(compute_units))
      return decode_mode::t1_bf16io_smem;
    return bf16_activations && tuning::t1_small_bf16io_takes<table>(p.r.layout == state_layout::k_last,
                                                                    p.pool.type == dtype::f32 ? 4 : 2)
               ? decode_mode::t1_small_bf16io
               : decode_mode::t1_small;
  }
  // bf16 activations: K-last the bf16-I/O body (fp32 state on grids of up to
  // one wave of its 32 blocks per SM, or of many waves: its shared-memory
  // variant, fewer registers; in between the register tile keeps its
  // look-ahead over the last partial wave), V-last fp32 state the t1 body
  // with compile-time dtypes (the kernel table falls back to t1 where neither
  // applies). Small grids keep t1_small: there the chain of dependent shuffles
  // is the critical path, and the reduce-scatter lengthens it.
  if (bf16_io) {
    const int64_t smem_below = int64_t(table::t1_bf16io_smem_max_heads_per_sm) * compute_units;
    const int64_t smem_from = int64_t(table::t1_bf16io_smem_min_heads_per_sm) * compute_units;
    if (p.r.layout == state_layout::k_last && p.pool.type == dtype::f32) {
      if (heads < smem_below) return decode_mode::t1_bf16io_smem;
      if (smem_from > 0 && heads >= smem_from) return decode_mode::t1_bf16io_smem_wide;
    }
    return decode_mode::t1_bf16io;
  }
  return decode_mode::t1;
}

}  // namespace dk::gpu::decode_detail
