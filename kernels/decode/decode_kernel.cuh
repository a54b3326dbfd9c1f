// The decode kernels (SPEC §2). Six bodies (tuning/decode_shape.hpp, decode_mode):
// decode_body (everything; described here), decode_t1_body (T = 1, gate
// none/scalar, K = 64/128: no staging, 16-bit state packed in registers) and
// decode_t1_bf16io_body (its K-last variant for bf16 activations,
// decode_t1_bf16io.cuh, with the state tile in registers or, t1_bf16io_smem,
// in shared memory; V-last bf16 activations run decode_t1_body with the
// dtypes fixed, and on large grids its tile in shared memory), one block
// per (sequence, value head, V tile); decode_tn_bf16io_body (T > 1 with bf16
// activations, K-last, gate none/scalar: decode_tn_bf16io.cuh, the
// t1_bf16io tile in fp32 registers over the tokens); and the
// two t1_pipe bodies (K-last, V-last: decode_pipe.cuh), a persistent grid
// streaming tiles through shared memory.
// The block reads its tile of the state once into registers, runs the T <= 16
// tokens on it, and writes it back once (or after every token, for per-token
// slots). q, k, v, beta and the gates (as decays) of all T tokens are staged
// once in shared memory as fp32, so the token loop touches global memory only
// for the outputs. Every load that does not depend on the slot index is issued
// before the slot is known: a block waits on global memory about twice.
//
// Per token, with the state S held as a (keys x values) patch per thread and
// raw q, k (rk, rq: the l2-norm factors, 1 without l2norm; rq carries scale):
//   S *= decay                            (scalar or per key)
//   sk = S^T k, sq = S^T q, k.k, q.q, k.q (partial sums, butterflies over the
//                                          lanes_k lanes, then over warps_k
//                                          warps through shared memory)
//   u  = beta * (v - rk sk)
//   o  = rq sq + u (rk rq k.q)            (= S_new^T q_hat)
//   S += (rk k) u^T
#pragma once
#include <stdint.h>

#include "common/bulk_copy.cuh"
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
  int lookahead;  // t1_bf16io grids under 2 waves: block i < blocks - lookahead prefetches block i + lookahead's tile (0: none)
  // block_place's divisors (V tiles, HV, value heads per q/k head), set by set_divisors.
  fast_div by_v_tiles, by_hv, by_group;
};

// Compile-time geometry of one kernel instance (see tuning/decode_shape.hpp).
template <int Family, decode_class C, dtype S, state_layout L, decode_mode M = decode_mode::general>
struct geometry {
  using table = tuning::decode_tuning<Family>;
  static constexpr decode_mode mode = M;
  // tn_bf16io (T > 1) runs its own body on a t1-like grid; `t1` means T = 1.
  static constexpr bool tn = M == decode_mode::tn_bf16io;
  static constexpr bool t1 = M != decode_mode::general && !tn;
  static constexpr bool pipe = M == decode_mode::t1_pipe;
  static constexpr bool small = M == decode_mode::t1_small;
  static constexpr bool bf16io =
      M == decode_mode::t1_bf16io || M == decode_mode::t1_bf16io_smem || M == decode_mode::t1_bf16io_smem_wide;
  // Blocks take each sequence's tiles from a rotated start (block_place): the
  // multi-wave T = 1 grids. t1_small's grids are under a wave (the rotation
  // would only lengthen the path to the slot load); t1_pipe rotates its walk.
  static constexpr bool rotated = (t1 && !small && !pipe) || tn;
  static constexpr int esize = S == dtype::f32 ? 4 : 2;
  static constexpr bool k_last = L == state_layout::k_last;
  // t1_bf16io_smem (K-last): the state tile arrives in shared memory by
  // cp.async instead of in registers.
  static constexpr bool smem_state = M == decode_mode::t1_bf16io_smem || M == decode_mode::t1_bf16io_smem_wide;
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
      tn   ? dk::tuning::tn_shape_of<table>(C, esize)
      : t1 ? dk::tuning::t1_shape_of<table>(C, k_last, esize, small, bf16io, smem_state)
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
                                          : t1 || tn                    ? table::t1_min_blocks_per_sm
                                                                        : table::min_blocks_per_sm;
  // Elements per thread of each staged operand in flight at once (general kernels).
  static constexpr int stage_rounds = table::stage_rounds;
  // T = 1: state loads and stores with streaming (evict-first) cache hints.
  static constexpr bool stream_state = t1 && table::t1_stream_state;
  // What __launch_bounds__ promises: at least the largest block, or more to cap
  // registers (64K / this per thread) so that more blocks stay resident.
  // (t1_pipe: the cap that keeps t1_pipe_blocks_per_sm blocks resident.)
  static constexpr int table_bound = pipe ? max_threads * pipe_blocks_per_sm
                                    : tn ? (esize == 4 ? table::tn_bf16io_bound : table::tn_bf16io_bound16)
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

// ---- the small operands: runtime dtypes (uniform branches) ----
// load_bits() only issues the load; the conversion (bits_to_f) comes later.
// A conversion right after each load would make every load wait for the one
// before it (serial DRAM latencies); this way a thread has all of them in flight.
DK_DEVICE uint32_t load_bits(const operand& o, int64_t i) {
  return o.type == dtype::f32 ? static_cast<const uint32_t*>(o.data)[i]
                              : uint32_t(static_cast<const uint16_t*>(o.data)[i]);
}
// Branch-free (selects): 0 bits are 0.0 in every dtype.
DK_DEVICE float bits_to_f(uint32_t bits, dtype t) {
  const float as_f32 = bits_to_float(bits);
  const float as_bf16 = bits_to_float(bits << 16);
  const float as_f16 = f16_bits_to_float(uint16_t(bits));
  return t == dtype::f32 ? as_f32 : t == dtype::bf16 ? as_bf16 : as_f16;
}
DK_DEVICE void store_f(const operand& o, int64_t i, float x) {
  void* d = const_cast<void*>(o.data);
  switch (o.type) {
    case dtype::bf16: static_cast<uint16_t*>(d)[i] = float_to_bf16_bits(x); break;
    case dtype::f16: static_cast<uint16_t*>(d)[i] = float_to_f16_bits(x); break;
    default: static_cast<float*>(d)[i] = x; break;
  }
}
DK_DEVICE int64_t load_index(const operand& o, int64_t i) {
  return o.type == dtype::i64 ? static_cast<const int64_t*>(o.data)[i]
                              : int64_t(static_cast<const int32_t*>(o.data)[i]);
}
// The same as two unconditional 32-bit loads (int32: the same word twice), so
// that a range check waits for the index alone: load_index's predicated-off
// 64-bit load shared a scoreboard with the body's v, q and k loads (SASS).
DK_DEVICE int64_t load_index_words(const operand& o, int64_t i) {
  const bool is_i64 = o.type == dtype::i64;
  const uint32_t* const w = static_cast<const uint32_t*>(o.data) + i * (is_i64 ? 2 : 1);
  const uint32_t lo = w[0], upper = w[is_i64 ? 1 : 0];
  const uint32_t hi = is_i64 ? upper : uint32_t(int32_t(lo) >> 31);
  return int64_t((uint64_t(hi) << 32) | lo);
}
// Sequence b's state slot (b itself without an index array), as instance G reads it.
template <class G>
DK_DEVICE int64_t slot_of(const decode_problem& p, int64_t b) {
  if (!p.indices.data) return b;
  const int64_t i = b * p.indices.stride[0];
  if constexpr (G::slot_words) return load_index_words(p.indices, i);
  else return load_index(p.indices, i);
}

DK_DEVICE float softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }

// exp(gamma) from the gate value; raw: gamma = -exp(A_log) * softplus(a + dt_bias).
DK_DEVICE float decay_of(float g, float dt_bias, float a_log, bool raw) {
  if (raw) g = -expf(a_log) * softplus(g + dt_bias);
  return expf(g);
}

// The scalar gate's inputs and beta of one (sequence, head) at T = 1: issue()
// starts the loads (they join the caller's other loads in one trip to memory),
// finish() converts them to the decay and beta.
struct head_gate {
  uint32_t beta_bits, gate_bits, a_log_bits, bias_bits;
  DK_DEVICE void issue(const decode_problem& p, int64_t b, int h) {
    const bool scalar_gate = p.r.gate == gate_kind::scalar, raw = p.r.gate_raw && scalar_gate;
    beta_bits = load_bits(p.beta, b * p.beta.stride[0] + h * p.beta.stride[2]);
    gate_bits = scalar_gate ? load_bits(p.g, b * p.g.stride[0] + h * p.g.stride[2]) : 0u;
    a_log_bits = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
    bias_bits = raw && p.dt_bias.data ? load_bits(p.dt_bias, h * p.dt_bias.stride[0]) : 0u;
  }
  DK_DEVICE void finish(const decode_problem& p, float& d, float& beta) const {
    const bool scalar_gate = p.r.gate == gate_kind::scalar, raw = p.r.gate_raw && scalar_gate;
    d = scalar_gate ? decay_of(bits_to_f(gate_bits, p.g.type), bits_to_f(bias_bits, p.dt_bias.type),
                               bits_to_f(a_log_bits, p.a_log.type), raw)
                    : 1.f;
    beta = bits_to_f(beta_bits, p.beta.type);
    if (p.r.beta_logit) beta = 1.f / (1.f + expf(-beta));
  }
};

// The sum over a row's W lanes, which sit STRIDE lanes apart.
template <int W, int STRIDE = 1>
DK_DEVICE float lanes_sum(float v) {
  if constexpr (STRIDE == 1) {
    return group_sum<W>(v);
  } else {
#pragma unroll
    for (int m = STRIDE; m < STRIDE * W; m <<= 1) v += shfl_xor(v, m);
    return v;
  }
}
// T = 1: k.q, and k.k and q.q when the norms are needed, from a thread's
// partial sums to the sums over its row's W lanes.
template <int W, int STRIDE = 1>
DK_DEVICE void finish_qk_sums(const decode_problem& p, float& kk, float& qq, float& kq) {
  kq = lanes_sum<W, STRIDE>(kq);
  if (p.r.qk_l2norm) {
    kk = lanes_sum<W, STRIDE>(kk);
    qq = lanes_sum<W, STRIDE>(qq);
  }
}

// ---- 16-byte vectors of state elements <-> fp32 ----
template <dtype S>
DK_DEVICE float elem_to_float(const void* base, int e) {
  if constexpr (S == dtype::f32) return static_cast<const float*>(base)[e];
  else if constexpr (S == dtype::bf16) return bf16_bits_to_float(static_cast<const uint16_t*>(base)[e]);
  else return f16_bits_to_float(static_cast<const uint16_t*>(base)[e]);
}
template <dtype S>
DK_DEVICE void float_to_elem(void* base, int e, float x) {
  if constexpr (S == dtype::f32) static_cast<float*>(base)[e] = x;
  else if constexpr (S == dtype::bf16) static_cast<uint16_t*>(base)[e] = float_to_bf16_bits(x);
  else static_cast<uint16_t*>(base)[e] = float_to_f16_bits(x);
}
template <dtype S>
DK_DEVICE float half_to_float(uint32_t bits) {
  if constexpr (S == dtype::bf16) return bf16_bits_to_float(uint16_t(bits));
  else return f16_bits_to_float(uint16_t(bits));
}
template <dtype S>
DK_DEVICE uint32_t pack_halves(float lo, float hi) {
  if constexpr (S == dtype::bf16) return pack_bf16x2(lo, hi);
  else return pack_f16x2(lo, hi);
}

// Loads the 16 bytes at p into f[0 .. 16/esize): one 128-bit load when aligned.
template <dtype S>
DK_DEVICE void load_vec(const char* p, bool aligned, float* f) {
  constexpr int n = S == dtype::f32 ? 4 : 8;
  if (aligned) {
    const u32x4 w = load16(p);
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
    if constexpr (S == dtype::f32) {
#pragma unroll
      for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(words[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        f[2 * i] = half_to_float<S>(words[i] & 0xffffu);
        f[2 * i + 1] = half_to_float<S>(words[i] >> 16);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < n; ++i) f[i] = elem_to_float<S>(p, i);
  }
}
template <dtype S>
DK_DEVICE void store_vec(char* p, bool aligned, const float* f) {
  constexpr int n = S == dtype::f32 ? 4 : 8;
  if (aligned) {
    uint32_t words[4];
    if constexpr (S == dtype::f32) {
#pragma unroll
      for (int i = 0; i < 4; ++i) words[i] = __float_as_uint(f[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) words[i] = pack_halves<S>(f[2 * i], f[2 * i + 1]);
    }
    store16(p, u32x4{words[0], words[1], words[2], words[3]});
  } else {
#pragma unroll
    for (int i = 0; i < n; ++i) float_to_elem<S>(p, i, f[i]);
  }
}

// One operand of one (sequence, head) as the general kernel stages it: element
// (t, i) is at base + (t * tstride + i) << shift (inner dims contiguous).
// Base and token stride are per-block constants kept in vector registers
// (dk::vector_reg): on gfx906 the five streams would otherwise hold ~25 of its
// ~100 scalar registers across the staging loops and spill.
struct stream {
  const char* base;
  int64_t tstride;
  dtype type;
  int shift;
  DK_DEVICE uint32_t load(int t, int i) const {
    const char* at = base + ((t * tstride + i) << shift);
    return shift == 2 ? *reinterpret_cast<const uint32_t*>(at)
                      : uint32_t(*reinterpret_cast<const uint16_t*>(at));
  }
};
DK_DEVICE stream stream_of(const operand& o, int64_t offset, int64_t tstride) {
  const int shift = o.type == dtype::f32 ? 2 : 1;
  return {vector_reg(static_cast<const char*>(o.data) + (offset << shift)), vector_reg(tstride), o.type,
          shift};
}

template <class G, dtype S>
DK_DEVICE void decode_body(const launch_params& lp) {
  constexpr int NK = G::nk, NV = G::nv, LK = G::lanes_k, LV = G::lanes_v, WK = G::warps_k;
  constexpr int VEC = G::vec, KC = G::k_cover, ES = G::esize;
  extern __shared__ f32x4 smem_vec[];
  float* const smem = reinterpret_cast<float*>(smem_vec);

  const decode_problem& p = lp.p;
  const int tid = int(threadIdx.x);
  const int nthreads = int(blockDim.x);
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int kl = lane % LK, vl = lane / LK;  // lane's place along K and along V
  const int kw = warp % WK, wv = warp / WK;  // warp's place along K and along V
  const int v_tile = lp.v_tile;  // a power of two
  const int v_shift = lp.v_shift;

  // blockIdx.x = (b * HV + h) * v_tiles + tile; 32-bit unsigned division (the
  // host keeps the grid below 2^31), far cheaper than 64-bit.
  const uint32_t bh = uint32_t(blockIdx.x) / uint32_t(lp.v_tiles);
  const int tile = int(uint32_t(blockIdx.x) - bh * uint32_t(lp.v_tiles));
  const int64_t b = int64_t(bh / uint32_t(p.hv));
  const int h = int(bh - uint32_t(b) * uint32_t(p.hv));
  const int T = p.tokens, K = p.dk, V = p.dv;
  const int v0 = tile * v_tile;                // block's first value index
  const int vw = v0 + wv * G::v_per_warp;      // warp's first value index
  const operand& out = p.out;
  const int64_t out_bh = b * out.stride[0] + h * out.stride[2];

  // Every load that does not depend on the slot is issued before the slot is
  // used, so the block waits for global memory about twice (slot, then state)
  // rather than once per operand.
  const int64_t slot = p.indices.data ? load_index(p.indices, b * p.indices.stride[0]) : b;
  const bool per_token = p.token_indices.data != nullptr;
  const int64_t out_slot_raw =
      p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0]) : slot;

  // The T tokens' inputs, to be staged in shared memory. Round 0 (R elements
  // per thread of q/k/per-key gates, and of v) is loaded now, into registers.
  const bool per_key = p.r.gate == gate_kind::per_key;
  const bool scalar_gate = p.r.gate == gate_kind::scalar;
  const bool raw = p.r.gate_raw && p.r.gate != gate_kind::none;
  const bool has_bias = raw && p.dt_bias.data != nullptr;
  const operand &qo = p.q, &ko = p.k, &vo = p.v, &go = p.g, &dto = p.dt_bias;
  const int qk_head = h / (p.hv / p.hq);
  // Each staged operand as (this block's base pointer, token stride, dtype):
  // last dims are contiguous (validation), so no inner strides; few 64-bit
  // values stay live across the staging loop (gfx906 has ~100 SGPRs).
  const stream qst = stream_of(qo, b * qo.stride[0] + qk_head * qo.stride[2], qo.stride[1]);
  const stream kst = stream_of(ko, b * ko.stride[0] + qk_head * ko.stride[2], ko.stride[1]);
  const stream vst = stream_of(vo, b * vo.stride[0] + h * vo.stride[2] + v0, vo.stride[1]);
  const int64_t g_b = b * go.stride[0] + h * go.stride[2];
  const stream gst = stream_of(go, per_key ? g_b : 0, go.stride[1]);
  const stream dst_ = stream_of(dto, per_key && has_bias ? h * dto.stride[0] : 0, 0);
  const int n_qk = T * KC, n_v = T * v_tile;
  constexpr int R = G::stage_rounds;
  uint32_t qb[R], kb[R], gb[R], db[R], vb[R];
  // Issues R elements per thread of the chosen operands (the flags are
  // constants at every call: each later staging loop keeps only its own
  // operands' pointers live).
  auto issue = [&](int i0, bool qk, bool gates, bool vals) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = i0 + r * nthreads;
      qb[r] = kb[r] = gb[r] = db[r] = vb[r] = 0u;
      if (i < n_qk) {
        const int t = i / KC, key = i % KC;
        if (G::exact_k || key < K) {
          if (qk) {
            qb[r] = qst.load(t, key);
            kb[r] = kst.load(t, key);
          }
          if (gates && per_key) {
            gb[r] = gst.load(t, key);
            if (has_bias) db[r] = dst_.load(0, key);
          }
        }
      }
      if (vals && i < n_v) {
        const int t = i >> v_shift, val = i & (v_tile - 1);
        if (v0 + val < V) vb[r] = vst.load(t, val);
      }
    }
  };
  issue(tid, true, true, true);
  const uint32_t a_log_bits = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
  // Per-token scalars, thread t for token t (T <= 16 <= threads).
  uint32_t beta_bits = 0u, gate_bits = 0u, bias_bits = 0u;
  int64_t token_slot = -1;
  if (tid < T) {
    const operand& be = p.beta;
    beta_bits = load_bits(be, b * be.stride[0] + tid * be.stride[1] + h * be.stride[2]);
    if (scalar_gate) {
      gate_bits = load_bits(go, g_b + tid * go.stride[1]);
      if (has_bias) bias_bits = load_bits(dto, h * dto.stride[0]);
    }
    if (per_token) {
      const operand& ti = p.token_indices;
      token_slot = load_index(ti, b * ti.stride[0] + tid * ti.stride[1]);
    }
  }

  // Slot -1 or out of range: padding, the output is zero, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {
    for (int i = tid; i < T * v_tile; i += nthreads) {
      const int t = i / v_tile, val = v0 + i % v_tile;
      if (val < V) store_f(out, out_bh + t * out.stride[1] + val, 0.f);
    }
    return;
  }

  // This thread's keys and values: a -> key, j -> value.
  auto key_of = [&](int a) {
    if constexpr (G::k_last) return ((a / VEC) * LK + kl) * VEC + a % VEC;
    else return kw * (NK * LK) + kl * NK + a;
  };
  auto value_of = [&](int j) {
    if constexpr (G::k_last) return vw + j * LV + vl;
    else return vw + ((j / VEC) * LV + vl) * VEC + j % VEC;
  };

  const operand& pool = p.pool;
  const int64_t row_stride = vector_reg(pool.stride[2]);
  auto head_ptr = [&](int64_t sl) {
    return vector_reg(static_cast<const char*>(pool.data) +
                      (sl * pool.stride[0] + int64_t(h) * pool.stride[1]) * ES);
  };
  // Pool rows are 16-byte aligned: validation requires a 16-byte aligned base
  // and outer strides, and the rows (K or V elements, multiples of 16) are compact.
  auto aligned = [](const char*) { return true; };

  // ---- the state tile, read once ----
  float s[NV][NK];
  {
    const char* hp = head_ptr(slot);
    const bool al = aligned(hp);
    if constexpr (G::k_last) {
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int v = value_of(j);
#pragma unroll
        for (int c = 0; c < NK / VEC; ++c) {
          const int k = (c * LK + kl) * VEC;
          if (v < V && (G::exact_k || k < K)) {
            load_vec<S>(hp + (int64_t(v) * row_stride + k) * ES, al, &s[j][c * VEC]);
          } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) s[j][c * VEC + e] = 0.f;
          }
        }
      }
    } else {
#pragma unroll
      for (int a = 0; a < NK; ++a) {
        const int k = key_of(a);
#pragma unroll
        for (int c = 0; c < NV / VEC; ++c) {
          const int v = vw + (c * LV + vl) * VEC;
          float f[VEC];
          if ((G::exact_k || k < K) && v < V) {
            load_vec<S>(hp + (int64_t(k) * row_stride + v) * ES, al, f);
          } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) f[e] = 0.f;
          }
#pragma unroll
          for (int e = 0; e < VEC; ++e) s[c * VEC + e][a] = f[e];
        }
      }
    }
  }
  auto store_state = [&](int64_t sl) {
    char* hp = const_cast<char*>(head_ptr(sl));
    const bool al = aligned(hp);
    // Bounds re-read into vector registers: the store's predicates are then
    // recomputed here instead of the load's being kept live (on wave64 each is
    // a 64-bit lane mask in scalar registers).
    const int V = vector_reg(p.dv), K = vector_reg(p.dk);
    if constexpr (G::k_last) {
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int v = value_of(j);
#pragma unroll
        for (int c = 0; c < NK / VEC; ++c) {
          const int k = (c * LK + kl) * VEC;
          if (v < V && (G::exact_k || k < K))
            store_vec<S>(hp + (int64_t(v) * row_stride + k) * ES, al, &s[j][c * VEC]);
        }
      }
    } else {
#pragma unroll
      for (int a = 0; a < NK; ++a) {
        const int k = key_of(a);
#pragma unroll
        for (int c = 0; c < NV / VEC; ++c) {
          const int v = vw + (c * LV + vl) * VEC;
          float f[VEC];
#pragma unroll
          for (int e = 0; e < VEC; ++e) f[e] = s[c * VEC + e][a];
          if ((G::exact_k || k < K) && v < V)
            store_vec<S>(hp + (int64_t(k) * row_stride + v) * ES, al, f);
        }
      }
    }
  };

  // ---- stage the T tokens' inputs in shared memory ----
  const smem_layout lay = make_smem_layout(T, KC, per_key, v_tile, WK);
  float* const qs = smem + lay.q;
  float* const ks = smem + lay.k;
  float* const gs = smem + lay.gate;
  float* const vs = smem + lay.v;
  float* const sc = smem + lay.scalars;
  float* const red = smem + lay.red;
  {
    const float a_log = bits_to_f(a_log_bits, p.a_log.type);
    auto commit = [&](int i0, bool qk, bool gates, bool vals) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int i = i0 + r * nthreads;
        if (i < n_qk) {
          if (qk) {
            qs[i] = bits_to_f(qb[r], qst.type);
            ks[i] = bits_to_f(kb[r], kst.type);
          }
          if (gates && per_key) {
            const int key = i % KC;
            gs[i] = (G::exact_k || key < K)
                        ? decay_of(bits_to_f(gb[r], gst.type), bits_to_f(db[r], dst_.type), a_log, raw)
                        : 1.f;
          }
        }
        if (vals && i < n_v) vs[i] = bits_to_f(vb[r], vst.type);
      }
    };
    commit(tid, true, true, true);
    // The rest (T > 1 or small blocks), one operand group per loop.
    for (int i0 = tid + R * nthreads; i0 < n_qk; i0 += R * nthreads) {
      issue(i0, true, false, false);
      commit(i0, true, false, false);
    }
    if (per_key) {
      for (int i0 = tid + R * nthreads; i0 < n_qk; i0 += R * nthreads) {
        issue(i0, false, true, false);
        commit(i0, false, true, false);
      }
    }
    for (int i0 = tid + R * nthreads; i0 < n_v; i0 += R * nthreads) {
      issue(i0, false, false, true);
      commit(i0, false, false, true);
    }
    if (tid < T) {
      float bt = bits_to_f(beta_bits, p.beta.type);
      if (p.r.beta_logit) bt = 1.f / (1.f + expf(-bt));
      sc[8 * tid + 0] = bt;
      sc[8 * tid + 1] = scalar_gate ? decay_of(bits_to_f(gate_bits, go.type),
                                               bits_to_f(bias_bits, dto.type), a_log, raw)
                                    : 1.f;
      *reinterpret_cast<int64_t*>(sc + 8 * tid + 4) = token_slot;
    }
  }
  block_sync();

  // Reads this thread's NK keys of a staged row (16-byte shared-memory reads).
  auto read_keys = [&](const float* row, float* x) {
#pragma unroll
    for (int c = 0; c < NK / 4; ++c) {
      int at;
      if constexpr (G::k_last) at = ((c * 4 / VEC) * LK + kl) * VEC + (c * 4) % VEC;
      else at = kw * (NK * LK) + kl * NK + c * 4;
      const f32x4 w = load16f(row + at);
      x[4 * c + 0] = w.x;
      x[4 * c + 1] = w.y;
      x[4 * c + 2] = w.z;
      x[4 * c + 3] = w.w;
    }
  };

  // ---- the tokens ----
  const bool l2norm = p.r.qk_l2norm;
  const float scale = p.r.scale;
  for (int t = 0; t < T; ++t) {
    float kr[NK], qr[NK];
    read_keys(ks + t * KC, kr);
    read_keys(qs + t * KC, qr);
    if (per_key) {
      float dr[NK];
      read_keys(gs + t * KC, dr);
#pragma unroll
      for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int a = 0; a < NK; ++a) s[j][a] *= dr[a];
    } else if (p.r.gate == gate_kind::scalar) {
      const float d = sc[8 * t + 1];
#pragma unroll
      for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int a = 0; a < NK; ++a) s[j][a] *= d;
    }
    // Dots with the raw (staged) k and q; the l2 norms and the output scale are
    // applied to the sums, and k.k, q.q, k.q ride along in the same butterflies.
    float sk[NV], sq[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      float x = 0.f, y = 0.f;
#pragma unroll
      for (int a = 0; a < NK; ++a) {
        x = fmaf(s[j][a], kr[a], x);
        y = fmaf(s[j][a], qr[a], y);
      }
      sk[j] = x;
      sq[j] = y;
    }
    float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
    for (int a = 0; a < NK; ++a) {
      kk = fmaf(kr[a], kr[a], kk);
      qq = fmaf(qr[a], qr[a], qq);
      kq = fmaf(kr[a], qr[a], kq);
    }
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      sk[j] = group_sum<LK>(sk[j]);
      sq[j] = group_sum<LK>(sq[j]);
    }
    kq = group_sum<LK>(kq);
    if (l2norm) {
      kk = group_sum<LK>(kk);
      qq = group_sum<LK>(qq);
    }
    if constexpr (WK > 1) {
      // Finish the sums over K across warps; double-buffered by token parity,
      // so one barrier per token suffices.
      float* rb = red + (t & 1) * (WK * (2 * v_tile + 4));
      float* rs = rb + WK * 2 * v_tile;  // per warp: k.k, q.q, k.q
      if (kl == 0) {
#pragma unroll
        for (int j = 0; j < NV; ++j) {
          const int lv = value_of(j) - v0;
          rb[(kw * 2 + 0) * v_tile + lv] = sk[j];
          rb[(kw * 2 + 1) * v_tile + lv] = sq[j];
        }
        if (vl == 0 && wv == 0) {
          rs[kw * 4 + 0] = kk;
          rs[kw * 4 + 1] = qq;
          rs[kw * 4 + 2] = kq;
        }
      }
      block_sync();
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int lv = value_of(j) - v0;
        float x = 0.f, y = 0.f;
#pragma unroll
        for (int w = 0; w < WK; ++w) {
          x += rb[(w * 2 + 0) * v_tile + lv];
          y += rb[(w * 2 + 1) * v_tile + lv];
        }
        sk[j] = x;
        sq[j] = y;
      }
      kk = qq = kq = 0.f;
#pragma unroll
      for (int w = 0; w < WK; ++w) {
        kk += rs[w * 4 + 0];
        qq += rs[w * 4 + 1];
        kq += rs[w * 4 + 2];
      }
    }
    float rk = 1.f, rq = scale;
    if (l2norm) {
      rk = rsqrtf(kk + 1e-6f);
      rq *= rsqrtf(qq + 1e-6f);
    }
    const float bt = sc[8 * t + 0], kqn = kq * rk * rq;
    const int64_t out_t = vector_reg(out_bh + t * out.stride[1]);
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int v = value_of(j);
      const float u = bt * (vs[t * v_tile + (v - v0)] - rk * sk[j]);
      if (kl == 0 && kw == 0 && v < V)
        store_f(out, out_t + v, fmaf(u, kqn, rq * sq[j]));
      const float uk = u * rk;  // S += (rk k) u^T
#pragma unroll
      for (int a = 0; a < NK; ++a) s[j][a] = fmaf(kr[a], uk, s[j][a]);
    }
    if (per_token) {
      const int64_t sl = *reinterpret_cast<const int64_t*>(sc + 8 * t + 4);
      if (sl >= 0 && sl < p.pool_slots) store_state(sl);
    }
  }

  // ---- the state tile, written once ----
  if (!per_token && out_slot_raw >= 0 && out_slot_raw < p.pool_slots) store_state(out_slot_raw);
}

// ---- T = 1: inputs straight into registers, 16-bit state packed ----
//
// Runs of N contiguous q/k/v/out elements (N = 4, 8 or 16) of a runtime dtype.
// q/k/v/out rows are 16-byte aligned with a contiguous last dim (validation
// guarantees it) and runs start at multiples of N, so a run is one to four
// vector accesses. load_run only issues the loads; run_to_float converts later
// (all of a thread's loads are in flight before the first use). Both assign
// every element unconditionally (values chosen by selects): stores into an
// array from both arms of a dtype branch get merged into dynamically indexed
// stores, which moves the array to scratch memory (seen on gfx906).
template <int N>
DK_DEVICE void load_run(const operand& o, int64_t off, bool valid, uint32_t (&w)[N]) {
  static_assert(N == 4 || N == 8 || N == 16, "runs of 4, 8 or 16 elements");
  const bool f32 = o.type == dtype::f32;
  const char* ptr = static_cast<const char*>(o.data) + off * (f32 ? 4 : 2);
  const u32x4 zero{0u, 0u, 0u, 0u};
#pragma unroll
  for (int i = 0; i < N / 4; ++i) {
    // Vector i (16 bytes at ptr + 16 i): words 4i..4i+3 of an fp32 run; a
    // 16-bit run is N/8 vectors (N = 4: one 8-byte access).
    u32x4 x = zero;
    if (N == 4 && !f32) {
      if (valid) {
        const u32x2 h = load8(ptr);
        x = u32x4{h.x, h.y, 0u, 0u};
      }
    } else if (valid && (i < N / 8 || f32)) {
      x = load16(ptr + 16 * i);
    }
    w[4 * i] = x.x;
    w[4 * i + 1] = x.y;
    w[4 * i + 2] = x.z;
    w[4 * i + 3] = x.w;
  }
}
template <int N>
DK_DEVICE void run_to_float(const uint32_t (&w)[N], dtype t, float (&f)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const uint32_t h = w[i >> 1];
    const float as_f32 = bits_to_float(w[i]);
    const float as_bf16 = bits_to_float((i & 1) ? (h & 0xffff0000u) : (h << 16));
    const float as_f16 = f16_bits_to_float(uint16_t((i & 1) ? (h >> 16) : (h & 0xffffu)));
    f[i] = t == dtype::f32 ? as_f32 : t == dtype::bf16 ? as_bf16 : as_f16;
  }
}
// R runs of N elements (as load_run left them) to one fp32 array, run after run.
template <int R, int N>
DK_DEVICE void runs_to_float(const uint32_t (&w)[R][N], dtype t, float (&f)[R * N]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float x[N];
    run_to_float<N>(w[r], t, x);
#pragma unroll
    for (int e = 0; e < N; ++e) f[r * N + e] = x[e];
  }
}
template <int N>
DK_DEVICE void store_run(const operand& o, int64_t off, const float (&f)[N]) {
  char* base = static_cast<char*>(const_cast<void*>(o.data));
  if (o.type == dtype::f32) {
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      store16(base + (off + 4 * i) * 4,
              u32x4{float_to_bits(f[4 * i]), float_to_bits(f[4 * i + 1]),
                    float_to_bits(f[4 * i + 2]), float_to_bits(f[4 * i + 3])});
    return;
  }
  uint32_t w[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    w[i] = o.type == dtype::bf16 ? pack_bf16x2(f[2 * i], f[2 * i + 1]) : pack_f16x2(f[2 * i], f[2 * i + 1]);
  if constexpr (N >= 8) {
#pragma unroll
    for (int i = 0; i < N / 8; ++i)
      store16(base + (off + 8 * i) * 2, u32x4{w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]});
  } else {
    store8(base + off * 2, u32x2{w[0], w[1]});
  }
}

// Element i of a row of the register tile held as 32-bit words: fp32 one per
// word, 16-bit two per word (element 2j in the low half of word j).
template <dtype S, int W>
DK_DEVICE float tile_elem(const uint32_t (&row)[W], int i) {
  if constexpr (S == dtype::f32) {
    return bits_to_float(row[i]);
  } else if constexpr (S == dtype::bf16) {
    const uint32_t w = row[i >> 1];
    return bits_to_float((i & 1) ? (w & 0xffff0000u) : (w << 16));
  } else {
    const uint32_t w = row[i >> 1];
    return f16_bits_to_float(uint16_t((i & 1) ? (w >> 16) : (w & 0xffffu)));
  }
}

// Where sequence b starts its walk over its n (head, tile) pairs: a
// Fibonacci-hash fraction of n, in [0, n). Slots far apart in the pool,
// read at the same offsets at the same time, cost a tile stream 2.6 % at
// B=512 (NOTES.md v9); starting each sequence elsewhere spreads the offsets.
DK_DEVICE uint32_t sequence_rotation(uint32_t b, uint32_t n) {
  return uint32_t((uint64_t(b * 2654435761u) * n) >> 32);
}

// The (sequence, value head, V tile) of a block of the one-tile-per-block grids
// (blocks run tiles fastest, then heads), and its q/k head. The divisions are
// multiply-shifts (fast_div): they precede the slot load, the first link of
// every block's critical path. Rotate (the t1 grids): sequence b's blocks take
// its (head, tile) pairs from sequence_rotation(b, HV * v_tiles) on, wrapping.
// B=512 in graph 534.75 -> 533.45 us (NOTES.md v9 run 6).
template <bool Rotate>
struct block_place {
  int64_t b;
  int h, tile, qk_head;
  DK_DEVICE explicit block_place(const launch_params& lp) : block_place(lp, uint32_t(blockIdx.x)) {}
  DK_DEVICE block_place(const launch_params& lp, uint32_t block) {
    if constexpr (Rotate) {
      const uint32_t per_sequence = uint32_t(lp.v_tiles) * uint32_t(lp.p.hv);
      const uint32_t bu = lp.by_hv(lp.by_v_tiles(block));
      uint32_t i = block - bu * per_sequence + sequence_rotation(bu, per_sequence);
      if (i >= per_sequence) i -= per_sequence;
      const uint32_t head = lp.by_v_tiles(i);
      tile = int(i - head * uint32_t(lp.v_tiles));
      h = int(head);
      b = int64_t(bu);
    } else {
      const uint32_t bh = lp.by_v_tiles(block);
      tile = int(block - bh * uint32_t(lp.v_tiles));
      const uint32_t bu = lp.by_hv(bh);
      h = int(bh - bu * uint32_t(lp.p.hv));
      b = int64_t(bu);
    }
    qk_head = int(lp.by_group(uint32_t(h)));
  }
};

// Brings the state tile of one-tile-grid block `block` into L2, its lines
// spread over the block's threads. The slot is read through L2 (it may be
// stale before a programmatic wait: then only the prefetch is wasted).
template <class G>
DK_DEVICE void prefetch_tile_l2(const launch_params& lp, uint32_t block) {
  const decode_problem& p = lp.p;
  const block_place<G::rotated> at(lp, block);
  int64_t slot = at.b;
  if (p.indices.data) {
    const int64_t i = at.b * p.indices.stride[0];
    slot = p.indices.type == dtype::i64 ? load_l2(static_cast<const int64_t*>(p.indices.data) + i)
                                        : load_l2(static_cast<const int32_t*>(p.indices.data) + i);
  }
  if (slot < 0 || slot >= p.pool_slots) return;
  const operand& pool = p.pool;
  const int v0 = at.tile * lp.v_tile;
  const int v_end = min(v0 + lp.v_tile, p.dv);
  // K-last: rows v0 .. v_end, each K elements; V-last: K rows, each [v0, v_end).
  const int rows = G::k_last ? v_end - v0 : p.dk;
  const int64_t run_bytes = int64_t(G::k_last ? p.dk : v_end - v0) * G::esize;
  const int lines = int((run_bytes + 127) / 128);
  const char* base = static_cast<const char*>(pool.data) +
                     (slot * pool.stride[0] + int64_t(at.h) * pool.stride[1] +
                      (G::k_last ? int64_t(v0) * pool.stride[2] : int64_t(v0))) * G::esize;
  for (int i = int(threadIdx.x); i < rows * lines; i += int(blockDim.x)) {
    const int r = i / lines, l = i - r * lines;
    const int64_t at_byte = int64_t(l) * 128 < run_bytes ? int64_t(l) * 128 : run_bytes - 1;
    prefetch_l2(base + int64_t(r) * pool.stride[2] * G::esize + at_byte);
  }
}

// Look-ahead (lp.lookahead > 0, set by the host for grids of less than two
// waves, lookahead = the resident blocks): first thing, a block of the first
// wave prefetches into L2 the tile of the block that will take its place, so
// the last, partial wave finds its state there. Only for such grids: on larger
// ones the prefetching blocks start later by the slot read, and prefetching
// one or two waves ahead in every block loses its lines from L2 before use
// (NOTES.md v7).
template <class G>
DK_DEVICE void prefetch_ahead(const launch_params& lp) {
  const uint32_t ahead = uint32_t(blockIdx.x) + uint32_t(lp.lookahead);
  if (ahead < gridDim.x) prefetch_tile_l2<G>(lp, ahead);
}

// An activation operand (q, k, v, out) as a T = 1 body reads it: in t1_bf16io
// instances its dtype is bf16 at compile time (the runtime dtype branches fold
// away); elsewhere the operand itself.
template <class G>
DK_DEVICE decltype(auto) io_operand(const operand& o) {
  if constexpr (G::bf16io) {
    operand typed = o;
    typed.type = dtype::bf16;
    return typed;
  } else {
    return (o);
  }
}

// A thread's NR x NC state vectors into its shared-memory slots by cp.async,
// slot (r, c) at mine[(r * NC + c) * 32] (a warp's copies to one slot are
// contiguous, and each thread reads back only its own), one commit group per
// row (ByRow) or per column, so that the sums can start as the first group
// lands. at(r, c) gives whether the vector is in range (else it is zero-filled
// from `fallback`, which is never read) and its address.
struct tile_source {
  bool valid;
  const char* at;
};
template <int NR, int NC, bool ByRow, class At>
DK_DEVICE void copy_tile_async(u32x4* mine, const char* fallback, At&& at) {
  constexpr int NO = ByRow ? NR : NC, NI = ByRow ? NC : NR;
#pragma unroll
  for (int o = 0; o < NO; ++o) {
#pragma unroll
    for (int i = 0; i < NI; ++i) {
      const int r = ByRow ? o : i, c = ByRow ? i : o;
      const tile_source v = at(r, c);
      copy16_async(mine + (r * NC + c) * kWarpSize, v.valid ? v.at : fallback, v.valid);
    }
    copy16_async_commit();
  }
}

// Slot i of a thread's shared-memory tile (mine[i * 32]) as its 4 state words.
DK_DEVICE void read_slot(const u32x4* mine, int i, uint32_t (&w)[4]) {
  const u32x4 v = mine[i * kWarpSize];
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
}
// The rank-1 update of one 16-byte vector of state S: element e becomes
// d * S_e + add(e) in fp32, rounded once to S and repacked for the store.
template <dtype S, class Add>
DK_DEVICE u32x4 decay_add(const uint32_t (&w)[4], float d, Add&& add) {
  uint32_t n[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (S == dtype::f32) {
      n[j] = float_to_bits(fmaf(bits_to_float(w[j]), d, add(j)));
    } else {
      n[j] = pack_halves<S>(fmaf(tile_elem<S, 4>(w, 2 * j), d, add(2 * j)),
                            fmaf(tile_elem<S, 4>(w, 2 * j + 1), d, add(2 * j + 1)));
    }
  }
  return u32x4{n[0], n[1], n[2], n[3]};
}

// The t1 V-last body's shared memory: WK warps' x, y (v_tile each) and 4
// sums, in 16-byte vectors; its shared-memory tiles (t1_bf16io_smem) follow.
DK_HOST_DEVICE constexpr int t1_red_vectors(int warps_k, int v_tile) {
  return warps_k > 1 ? (warps_k * (2 * v_tile + 4) + 3) / 4 : 0;
}

// One block per (sequence, value head, V tile), T = 1, gate none or scalar,
// K = k_cover exactly (K-last: warps_k 1; V-last may split K over warps_k
// warps, finished through shared memory). A thread holds `rows` x (vec_chunks x 16 B)
// of the state as raw words (V-last t1_bf16io_smem: in shared memory);
// everything it needs besides the state (q/k keys,
// v values, beta, gate) is loaded into its own registers before the slot index
// is waited on, and the q/k norms and the gate are computed while the state
// loads are in flight. With d the decay, rk/rq the l2-norm factors (rq
// carrying the scale) and raw k, q:
//   x = S^T k, y = S^T q                     (in-thread, then butterflies)
//   u = beta (v - d rk x)
//   o = d rq y + u (rk rq k.q)               (= S_new^T q_hat)
//   S_new = d S + k (rk u)^T                 (rounded to 16 bits at the store)
template <class G, dtype S>
DK_DEVICE void decode_t1_body(const launch_params& lp) {
  constexpr int LK = G::lanes_k, LV = G::lanes_v, VEC = G::vec, ES = G::esize;
  constexpr int NR = G::shape.rows, NC = G::shape.vec_chunks;
  constexpr bool KL = G::k_last;
  constexpr int NCOL = NC * VEC;            // elements per row along the contiguous dim
  constexpr int W = 4 * NC;                 // 32-bit words per row
  constexpr int NK = G::nk, NV = G::nv;     // keys, values per thread
  constexpr int KRUNS = KL ? NC : 1;        // contiguous runs of keys per thread
  constexpr int KRUN = KL ? VEC : NR;       // keys per run
  constexpr int WK = G::warps_k;            // V-last: warps along K (sums finished in shared memory)

  const decode_problem& p = lp.p;
  const int tid = int(threadIdx.x);
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  constexpr int KSTRIDE = G::v_major_lanes ? LV : 1;  // lanes between a row's key lanes
  const int kl = G::v_major_lanes ? lane / LV : lane % LK, vl = G::v_major_lanes ? lane % LV : lane / LK;
  const int kwp = warp % WK, wv = warp / WK;  // warp's place along K and along V
  const block_place<G::rotated> at(lp);
  const int64_t b = at.b;
  const int h = at.h, V = p.dv;
  const int v0 = at.tile * lp.v_tile;              // block's first value
  const int vw = v0 + wv * G::v_per_warp;          // warp's first value

  // 1. The slot, first: the state loads wait for it.
  const int64_t slot = slot_of<G>(p, b);

  // 2. Everything else this thread needs, issued before the slot is used.
  auto key0 = [&](int r) { return KL ? (r * LK + kl) * VEC : (kwp * LK + kl) * NR; };  // first key of run r
  const int qk_head = at.qk_head;
  auto&& q_io = io_operand<G>(p.q);
  auto&& k_io = io_operand<G>(p.k);
  auto&& v_io = io_operand<G>(p.v);
  uint32_t qw[KRUNS][KRUN], kw[KRUNS][KRUN];
  {
    const int64_t qb = b * p.q.stride[0] + qk_head * p.q.stride[2];
    const int64_t kb = b * p.k.stride[0] + qk_head * p.k.stride[2];
#pragma unroll
    for (int r = 0; r < KRUNS; ++r) {
      load_run<KRUN>(q_io, qb + key0(r), true, qw[r]);
      load_run<KRUN>(k_io, kb + key0(r), true, kw[r]);
    }
  }
  // This thread's values: K-last rows j -> vw + j*LV + vl; V-last chunk c
  // element e -> vw + (c*LV + vl)*VEC + e.
  auto krow_value = [&](int j) { return vw + j * LV + vl; };
  auto vchunk_value = [&](int c) { return vw + (c * LV + vl) * VEC; };
  const int64_t v_b = b * p.v.stride[0] + h * p.v.stride[2];
  uint32_t vwd[KL ? NR : NC][KL ? 1 : VEC];
  if constexpr (KL) {
#pragma unroll
    for (int j = 0; j < NR; ++j) vwd[j][0] = krow_value(j) < V ? load_bits(v_io, v_b + krow_value(j)) : 0u;
  } else {
#pragma unroll
    for (int c = 0; c < NC; ++c) load_run<VEC>(v_io, v_b + vchunk_value(c), vchunk_value(c) < V, vwd[c]);
  }
  // t1_small's one-wave grids issue the gate here (B=1 in graph 4.23 us against
  // 4.38 after the tile); the other grids after the tile (NOTES.md v12).
  head_gate gate;
  if constexpr (G::small) gate.issue(p, b, h);
  const bool per_token = p.token_indices.data != nullptr;
  const int64_t store_slot =
      per_token ? load_index(p.token_indices, b * p.token_indices.stride[0])
                : p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0]) : slot;
  auto&& out = io_operand<G>(p.out);
  const int64_t out_b = b * out.stride[0] + h * out.stride[2];

  // Padding (slot -1 or out of range): zero output, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {
    if (kl == 0 && kwp == 0) {
      if constexpr (KL) {
#pragma unroll
        for (int j = 0; j < NR; ++j)
          if (krow_value(j) < V) store_f(out, out_b + krow_value(j), 0.f);
      } else {
        float z[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) z[e] = 0.f;
#pragma unroll
        for (int c = 0; c < NC; ++c)
          if (vchunk_value(c) < V) store_run<VEC>(out, out_b + vchunk_value(c), z);
      }
    }
    return;
  }

  // 3. The state tile: NR rows x NC 16-byte vectors, all loads in flight at once.
  const operand& pool = p.pool;
  const int64_t row_stride = pool.stride[2];
  auto row_of = [&](int r) { return KL ? krow_value(r) : key0(0) + r; };     // pool row
  auto col_of = [&](int c) { return KL ? key0(c) : vchunk_value(c); };      // first column
  auto in_range = [&](int r, int c) { return KL ? row_of(r) < V : col_of(c) < V; };
  const char* head = static_cast<const char*>(pool.data) +
                     (slot * pool.stride[0] + int64_t(h) * pool.stride[1]) * ES;
  // G::smem_state (V-last t1_bf16io_smem): the tile goes by cp.async
  // into this thread's slots of shared memory after the block's reduction
  // area, slot (r, c) at mine[(r * NC + c) * 32] (a warp's accesses
  // contiguous, each thread reading back only its own copies), one group per
  // key row, so that the sums start with row 0.
  constexpr bool SM = G::smem_state;
  static_assert(!SM || !KL, "t1 body: shared-memory tiles are V-last (K-last: decode_t1_bf16io_body)");
  uint32_t s[SM ? 1 : NR][W];
  [[maybe_unused]] u32x4* mine = nullptr;
  if constexpr (SM) {
    extern __shared__ f32x4 smem_vec[];
    mine = reinterpret_cast<u32x4*>(smem_vec) + t1_red_vectors(WK, lp.v_tile) + warp * (NR * NC * kWarpSize) + lane;
    copy_tile_async<NR, NC, true>(mine, head, [&](int r, int c) {
      return tile_source{in_range(r, c), head + (int64_t(row_of(r)) * row_stride + col_of(c)) * ES};
    });
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        u32x4 x{0u, 0u, 0u, 0u};
        if (in_range(r, c)) {
          const char* at = head + (int64_t(row_of(r)) * row_stride + col_of(c)) * ES;
          x = G::stream_state ? load16_stream(at) : load16(at);
        }
        s[r][4 * c] = x.x, s[r][4 * c + 1] = x.y, s[r][4 * c + 2] = x.z, s[r][4 * c + 3] = x.w;
      }
  }

  // The gate's loads after the tile's, as in decode_t1_bf16io_body.
  if constexpr (!G::small) gate.issue(p, b, h);

  // 4. While they fly: q, k to fp32, the norms, k.q, the gate, beta.
  float kf[NK], qf[NK];
  runs_to_float(kw, k_io.type, kf);
  runs_to_float(qw, q_io.type, qf);
  float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
  for (int a = 0; a < NK; ++a) {
    kk = fmaf(kf[a], kf[a], kk);
    qq = fmaf(qf[a], qf[a], qq);
    kq = fmaf(kf[a], qf[a], kq);
  }
  finish_qk_sums<LK, KSTRIDE>(p, kk, qq, kq);
  float d, beta;
  gate.finish(p, d, beta);
  float vf[NV];
  if constexpr (KL) {
#pragma unroll
    for (int j = 0; j < NR; ++j) vf[j] = bits_to_f(vwd[j][0], v_io.type);
  } else {
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      float t[VEC];
      run_to_float<VEC>(vwd[c], v_io.type, t);
#pragma unroll
      for (int e = 0; e < VEC; ++e) vf[c * VEC + e] = t[e];
    }
  }

  // 5. y = S^T q, then x = S^T k (two passes over the tile: q is dead before
  // the second, which keeps fewer registers live), over this thread's keys,
  // then over the LK lanes.
  float x[NV], y[NV];
#pragma unroll
  for (int j = 0; j < NV; ++j) x[j] = y[j] = 0.f;
  if constexpr (SM) {  // one pass, key row by key row as each group lands
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      copy16_async_wait_groups(NR - 1 - r);
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        uint32_t w[4];
        read_slot(mine, r * NC + c, w);
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const float st = tile_elem<S, 4>(w, e);
          y[c * VEC + e] = fmaf(st, qf[r], y[c * VEC + e]);
          x[c * VEC + e] = fmaf(st, kf[r], x[c * VEC + e]);
        }
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int i = 0; i < NCOL; ++i) {
        const int key = KL ? i : r, val = KL ? r : i;
        y[val] = fmaf(tile_elem<S, W>(s[r], i), qf[key], y[val]);
      }
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int i = 0; i < NCOL; ++i) {
        const int key = KL ? i : r, val = KL ? r : i;
        x[val] = fmaf(tile_elem<S, W>(s[r], i), kf[key], x[val]);
      }
  }
#pragma unroll
  for (int j = 0; j < NV; ++j) {
    x[j] = lanes_sum<LK, KSTRIDE>(x[j]);
    y[j] = lanes_sum<LK, KSTRIDE>(y[j]);
  }
  if constexpr (WK > 1) {
    // V-last split over WK warps along K: finish x, y, k.k, q.q, k.q through
    // shared memory (one barrier).
    extern __shared__ f32x4 smem_vec[];
    float* const red = reinterpret_cast<float*>(smem_vec);
    const int vt = lp.v_tile;
    float* const rs = red + WK * 2 * vt;  // per warp along K: k.k, q.q, k.q, -
    if (kl == 0) {
#pragma unroll
      for (int c = 0; c < NC; ++c)
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const int lv = vchunk_value(c) - v0 + e;
          red[(kwp * 2 + 0) * vt + lv] = x[c * VEC + e];
          red[(kwp * 2 + 1) * vt + lv] = y[c * VEC + e];
        }
      if (vl == 0 && wv == 0) {
        rs[kwp * 4 + 0] = kk;
        rs[kwp * 4 + 1] = qq;
        rs[kwp * 4 + 2] = kq;
      }
    }
    block_sync();
#pragma unroll
    for (int c = 0; c < NC; ++c)
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const int lv = vchunk_value(c) - v0 + e;
        float xs = 0.f, ys = 0.f;
#pragma unroll
        for (int w = 0; w < WK; ++w) {
          xs += red[(w * 2 + 0) * vt + lv];
          ys += red[(w * 2 + 1) * vt + lv];
        }
        x[c * VEC + e] = xs;
        y[c * VEC + e] = ys;
      }
    kk = qq = kq = 0.f;
#pragma unroll
    for (int w = 0; w < WK; ++w) {
      kk += rs[w * 4 + 0];
      qq += rs[w * 4 + 1];
      kq += rs[w * 4 + 2];
    }
  }
  float rk = 1.f, rq = p.r.scale;
  if (p.r.qk_l2norm) {
    rk = rsqrtf(kk + 1e-6f);
    rq *= rsqrtf(qq + 1e-6f);
  }
  const float dk_ = d * rk, dq = d * rq, kqn = kq * rk * rq;

  // 6. u, the output, and the rank-1 update of the tile (in place, packed).
  float uk[NV], o[NV];
#pragma unroll
  for (int j = 0; j < NV; ++j) {
    const float u = beta * (vf[j] - dk_ * x[j]);
    o[j] = fmaf(u, kqn, dq * y[j]);
    uk[j] = u * rk;
  }
  if (kl == 0 && kwp == 0) {
    if constexpr (KL) {
#pragma unroll
      for (int j = 0; j < NR; ++j)
        if (krow_value(j) < V) store_f(out, out_b + krow_value(j), o[j]);
    } else {
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        float t[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) t[e] = o[c * VEC + e];
        if (vchunk_value(c) < V) store_run<VEC>(out, out_b + vchunk_value(c), t);
      }
    }
  }
  if (store_slot < 0 || store_slot >= p.pool_slots) return;
  auto dst_head = [&] {
    return const_cast<char*>(static_cast<const char*>(pool.data)) +
           (store_slot * pool.stride[0] + int64_t(h) * pool.stride[1]) * ES;
  };
  if constexpr (SM) {  // from shared memory, vector by vector (read, updated, stored)
    char* const dst = dst_head();
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        uint32_t w[4];
        read_slot(mine, r * NC + c, w);
        const u32x4 n = decay_add<S>(w, d, [&](int e) { return kf[r] * uk[c * VEC + e]; });
        if (in_range(r, c)) store16(dst + (int64_t(row_of(r)) * row_stride + col_of(c)) * ES, n);
      }
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      if constexpr (S == dtype::f32) {
#pragma unroll
        for (int i = 0; i < NCOL; ++i) {
          const int key = KL ? i : r, val = KL ? r : i;
          s[r][i] = float_to_bits(fmaf(bits_to_float(s[r][i]), d, kf[key] * uk[val]));
        }
      } else {
#pragma unroll
        for (int i = 0; i < NCOL; i += 2) {
          const int k0 = KL ? i : r, k1 = KL ? i + 1 : r, v0 = KL ? r : i, v1 = KL ? r : i + 1;
          const float lo = fmaf(tile_elem<S, W>(s[r], i), d, kf[k0] * uk[v0]);
          const float hi = fmaf(tile_elem<S, W>(s[r], i + 1), d, kf[k1] * uk[v1]);
          s[r][i >> 1] = pack_halves<S>(lo, hi);
        }
      }
    }
    char* const dst = dst_head();
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c)
        if (in_range(r, c)) {
          char* at = dst + (int64_t(row_of(r)) * row_stride + col_of(c)) * ES;
          const u32x4 x{s[r][4 * c], s[r][4 * c + 1], s[r][4 * c + 2], s[r][4 * c + 3]};
          if (G::stream_state) store16_stream(at, x);
          else store16(at, x);
        }
  }
}

}  // namespace dk::gpu::decode_detail
#include "decode_pipe.cuh"        // the t1_pipe bodies, on top of the helpers above
#include "decode_t1_bf16io.cuh"  // the t1_bf16io body, likewise
#include "decode_tn_bf16io.cuh"  // the tn_bf16io body (T > 1), on the t1_bf16io helpers
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
  if (lane >= 8) return;
  const block_place<G::rotated> at(lp);
  auto element = [](const operand& o, int64_t i) {
    return static_cast<const char*>(o.data) + i * dtype_size(o.type);
  };
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
  while (w > 1 && (w / 2) * G::v_per_warp >= p.dv) w /= 2;
  const int64_t heads = int64_t(p.batch) * p.hv;
  const int64_t want = int64_t(G::min_blocks_per_sm) * compute_units;
  while (w > 1) {
    const int tile = w * G::v_per_warp;
    if (heads * ((p.dv + tile - 1) / tile) >= want) break;
    w /= 2;
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
  // Every block of small calls on the t1_small and general grids (prefetching
  // in every block of larger grids was slower in every run, NOTES.md v6). The
  // rotated t1 grids get a range of late first-wave blocks from launch_one.
  const bool prefetch_all = p.programmatic_launch && (G::small || (!G::t1 && !G::tn)) &&
                            state_bytes <= int64_t(G::table::programmatic_prefetch_max_bytes_per_sm) * compute_units;
  ls.lp.prefetch_first = 0;
  ls.lp.prefetch_end = prefetch_all ? uint32_t(ls.blocks) : 0u;
  // fp32 bf16io grids of less than two waves: the first wave prefetches the last.
  const int64_t lead = int64_t(G::table::t1_bf16io_f32_lookahead_blocks_per_sm) * compute_units;
  ls.lp.lookahead =
      G::bf16io && !G::smem_state && G::k_last && G::esize == 4 && lead > 0 && ls.blocks < 2 * lead ? int(lead) : 0;
  const bool per_key = p.r.gate == gate_kind::per_key;
  ls.smem = G::smem_state ? 16 * (size_t(t1_red_vectors(G::warps_k, ls.lp.v_tile)) +
                                  size_t(ls.threads) * G::shape.rows * G::shape.vec_chunks)
            : G::t1 || G::tn ? (G::warps_k > 1 ? sizeof(float) * size_t(G::warps_k) * (2 * ls.lp.v_tile + 4) : 0)
                    : sizeof(float) * size_t(make_smem_layout(p.tokens, G::k_cover, per_key, ls.lp.v_tile,
                                                            G::warps_k).total);
  return ls;
}

// The mode a launch of `p` runs in family F (decode_mode in tuning/decode_shape.hpp).
template <int F>
decode_mode mode_for(int compute_units, const decode_problem& p, decode_class c) {
  using table = tuning::decode_tuning<F>;
  if (p.r.gate == gate_kind::per_key || c == decode_class::generic) return decode_mode::general;
  const bool bf16_activations = p.q.type == dtype::bf16 && p.k.type == dtype::bf16 &&
                                p.v.type == dtype::bf16 && p.out.type == dtype::bf16;
  if (p.tokens != 1)
    return table::tn_bf16io && bf16_activations && p.r.layout == state_layout::k_last ? decode_mode::tn_bf16io
                                                                                       : decode_mode::general;
  if (!table::t1_kernels) return decode_mode::general;
  const int64_t heads = int64_t(p.batch) * p.hv;
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
  const int vlast_smem_min = p.pool.type == dtype::f32 ? table::t1_bf16io_smem_vlast_f32_min_heads_per_sm
                                                       : table::t1_bf16io_smem_vlast_b16_min_heads_per_sm;
  if (bf16_io && p.r.layout == state_layout::v_last && vlast_smem_min > 0 &&
      heads >= int64_t(vlast_smem_min) * compute_units)
    return decode_mode::t1_bf16io_smem;
  const int pipe_min = tuning::t1_pipe_min_heads_of<table>(p.r.layout == state_layout::k_last,
                                                          p.pool.type == dtype::f32 ? 4 : 2);
  if (pipe_min > 0 && heads >= int64_t(pipe_min) * compute_units) return decode_mode::t1_pipe;
  if (heads < int64_t(table::t1_small_heads_per_sm) * compute_units) return decode_mode::t1_small;
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
