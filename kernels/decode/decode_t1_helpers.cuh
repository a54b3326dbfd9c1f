// What the T = 1 bodies (decode_t1_body and those of decode_pipe.cuh,
// decode_t1_bf16io.cuh, decode_tn_bf16io.cuh) share: activation runs, the
// register tile's elements, block placement, L2 prefetch, shared-memory tiles.
#pragma once
#include "common/bulk_copy.cuh"
#include "decode_geometry.cuh"
#include "decode_operands.cuh"

namespace dk::gpu::decode_detail {

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

// Look-ahead (lp.lookahead > 0, lookahead = the resident blocks): a block
// prefetches into L2 the tile of the block that will take its place. The T = 1
// bf16-I/O body does it first thing, on grids of less than two waves only, so
// the last, partial wave finds its state there: on larger ones the prefetching
// blocks start later by the slot read, and prefetching one or two waves ahead
// in every block loses its lines from L2 before use (NOTES.md v7). tn_mma does
// it on every grid, after its own tile is issued, where its table asks (V-last
// fp32 on sm_90: its blocks wait on memory, NOTES.md v35 runs 7-8); so does
// the V-last shared-memory T = 1 body on grids of few waves (NOTES.md v43).
template <class G>
DK_DEVICE void prefetch_ahead(const launch_params& lp) {
  const uint32_t ahead = uint32_t(blockIdx.x) + uint32_t(lp.lookahead);
  if (ahead < gridDim.x) prefetch_tile_l2<G>(lp, ahead);
}

// T > 1 (tn_bf16io, tn_vlast): the per-token scalars spread over the lanes.
// Lane t < T loads token t's beta, gate and per-token slot (issue), and
// computes its decay and beta (finish, while the tile is in flight); a token
// takes them from its lane by shuffles.
struct lane_token_scalars {
  uint32_t beta_bits = 0u, gate_bits = 0u, a_log_bits = 0u, bias_bits = 0u;
  int64_t slot = -1;  // per-token slot (-1 without token_indices)
  float d = 1.f, beta = 1.f;
  DK_DEVICE void issue(const decode_problem& p, int64_t b, int h, int lane) {
    const bool scalar_gate = p.r.gate == gate_kind::scalar, raw = p.r.gate_raw && scalar_gate;
    if (lane < p.tokens) {
      beta_bits = load_bits(p.beta, b * p.beta.stride[0] + lane * p.beta.stride[1] + h * p.beta.stride[2]);
      if (scalar_gate) gate_bits = load_bits(p.g, b * p.g.stride[0] + lane * p.g.stride[1] + h * p.g.stride[2]);
      if (p.token_indices.data)
        slot = load_index(p.token_indices, b * p.token_indices.stride[0] + lane * p.token_indices.stride[1]);
    }
    if (raw) a_log_bits = load_bits(p.a_log, h * p.a_log.stride[0]);
    if (raw && p.dt_bias.data) bias_bits = load_bits(p.dt_bias, h * p.dt_bias.stride[0]);
  }
  DK_DEVICE void finish(const decode_problem& p) {
    const bool scalar_gate = p.r.gate == gate_kind::scalar, raw = p.r.gate_raw && scalar_gate;
    beta = bits_to_f(beta_bits, p.beta.type);
    if (scalar_gate)
      d = decay_of(bits_to_f(gate_bits, p.g.type), bits_to_f(bias_bits, p.dt_bias.type),
                   bits_to_f(a_log_bits, p.a_log.type), raw);
    if (p.r.beta_logit) beta = 1.f / (1.f + expf(-beta));
  }
  DK_DEVICE float decay_of_token(int t) const { return shfl(d, t); }
  DK_DEVICE float beta_of_token(int t) const { return shfl(beta, t); }
  DK_DEVICE int64_t slot_of_token(int t) const {
    return int64_t(uint32_t(shfl(int(uint32_t(slot)), t))) | (int64_t(shfl(int(slot >> 32), t)) << 32);
  }
};

// An activation operand (q, k, v, out) as a T = 1 body reads it: in t1_bf16io
// and t1_small_bf16io instances its dtype is bf16 at compile time (the runtime
// dtype branches fold away); elsewhere the operand itself.
template <class G>
DK_DEVICE decltype(auto) io_operand(const operand& o) {
  if constexpr (G::typed_io) {
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
// decay(e) * S_e + add(e) in fp32, rounded once to S and repacked for the store.
template <dtype S, class Decay, class Add>
DK_DEVICE u32x4 decay_add(const uint32_t (&w)[4], Decay&& decay, Add&& add) {
  uint32_t n[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (S == dtype::f32) {
      n[j] = float_to_bits(fmaf(bits_to_float(w[j]), decay(j), add(j)));
    } else {
      n[j] = pack_halves<S>(fmaf(tile_elem<S, 4>(w, 2 * j), decay(2 * j), add(2 * j)),
                            fmaf(tile_elem<S, 4>(w, 2 * j + 1), decay(2 * j + 1), add(2 * j + 1)));
    }
  }
  return u32x4{n[0], n[1], n[2], n[3]};
}

// Per-key gates at T = 1 (KDA): the decays of a thread's NK keys. The LV lanes
// that hold the same keys share them: this lane loads and finishes keys
// a = j LV + vl of its NK (element by element: g and dt_bias rows need not be
// 16-byte aligned) and takes the others by shuffles. The bodies issue the
// loads after the tile's: before the slot wait, B=512 took 9.7 % longer (NOTES.md v28).
// key_decays::stage's per-warp shared memory: the g row, then the dt_bias row
// from its second half (K <= 128 keys of at most 4 bytes each).
constexpr int kGateStageBytes = 1024;
constexpr int kGateStageBiasOffset = kGateStageBytes / 2;

template <int NK, int LV>
struct key_decays {
  static constexpr int kOwn = (NK + LV - 1) / LV;  // keys whose decay this lane finishes
  uint32_t g[kOwn], bias[kOwn], a_log = 0u;
  // key_of(a): key a of the thread's NK as an index into K.
  template <class KeyOf>
  DK_DEVICE void issue(const decode_problem& p, int64_t b, int h, int vl, KeyOf&& key_of) {
    const bool raw = p.r.gate_raw, has_bias = raw && p.dt_bias.data != nullptr;
    const int64_t g_b = b * p.g.stride[0] + int64_t(h) * p.g.stride[2];
    const int64_t bias_h = int64_t(h) * p.dt_bias.stride[0];
#pragma unroll
    for (int j = 0; j < kOwn; ++j) {
      const int a = j * LV + vl;
      const int key = key_of(a);
      g[j] = a < NK ? load_bits(p.g, g_b + key) : 0u;
      bias[j] = has_bias && a < NK ? load_bits(p.dt_bias, bias_h + key) : 0u;
    }
    a_log = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
  }
  // T > 1 (tn_per_key): the gate words of token t alone (dt_bias and A_log
  // stay from issue), loaded while the token before it is computed. issue
  // keeps its own loop, each key's g and dt_bias loads side by side: issuing
  // all the g words first (this loop) cost KDA bf16 state B=32 2.6 % (NOTES.md v30 run 6).
  template <class KeyOf>
  DK_DEVICE void issue_token_gates(const decode_problem& p, int64_t b, int t, int h, int vl, KeyOf&& key_of) {
    const int64_t g_bt = b * p.g.stride[0] + int64_t(t) * p.g.stride[1] + int64_t(h) * p.g.stride[2];
#pragma unroll
    for (int j = 0; j < kOwn; ++j) {
      const int a = j * LV + vl;
      g[j] = a < NK ? load_bits(p.g, g_bt + key_of(a)) : 0u;
    }
  }
  // The shared-memory tile body (t1_per_key_smem): the head's g row and dt_bias
  // row into `stage` (kGateStageBytes: g at 0, dt_bias at kGateStageBiasOffset) by one 16-byte cp.async per
  // lane and row, in the caller's commit group, and A_log into a register.
  // False, with nothing issued, where a row is not in whole aligned 16-byte
  // pieces: the caller then takes issue().
  DK_DEVICE bool stage(const decode_problem& p, int64_t b, int h, int lane, unsigned char* stage_bytes) {
    const bool raw = p.r.gate_raw, has_bias = raw && p.dt_bias.data != nullptr;
    const int gs = int(dtype_size(p.g.type)), bs = int(dtype_size(p.dt_bias.type));
    const char* const g_row = static_cast<const char*>(p.g.data) + (b * p.g.stride[0] + int64_t(h) * p.g.stride[2]) * gs;
    const char* const b_row =
        has_bias ? static_cast<const char*>(p.dt_bias.data) + int64_t(h) * p.dt_bias.stride[0] * bs : nullptr;
    const bool whole = (reinterpret_cast<uintptr_t>(g_row) | (p.dk * gs)) % 16 == 0 &&
                       (!has_bias || (reinterpret_cast<uintptr_t>(b_row) | (p.dk * bs)) % 16 == 0);
    if (!whole) return false;
    if (lane * 16 < p.dk * gs) copy16_async(stage_bytes + lane * 16, g_row + lane * 16, true);
    if (has_bias && lane * 16 < p.dk * bs) copy16_async(stage_bytes + kGateStageBiasOffset + lane * 16, b_row + lane * 16, true);
    a_log = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
    return true;
  }
  // finish() from the staged rows (after the caller's wait for their group and
  // a __syncwarp).
  template <class KeyOf, class LaneOf>
  DK_DEVICE void finish_staged(const decode_problem& p, const unsigned char* stage_bytes, int vl, KeyOf&& key_of,
                               LaneOf&& lane_of, float (&d)[NK]) {
    const bool raw = p.r.gate_raw, has_bias = raw && p.dt_bias.data != nullptr;
    auto staged_bits = [](const unsigned char* row, int key, dtype t) {
      return t == dtype::f32 ? reinterpret_cast<const uint32_t*>(row)[key]
                             : uint32_t(reinterpret_cast<const uint16_t*>(row)[key]);
    };
#pragma unroll
    for (int j = 0; j < kOwn; ++j) {
      const int a = j * LV + vl;
      const int key = a < NK ? key_of(a) : 0;
      g[j] = a < NK ? staged_bits(stage_bytes, key, p.g.type) : 0u;
      bias[j] = has_bias && a < NK ? staged_bits(stage_bytes + kGateStageBiasOffset, key, p.dt_bias.type) : 0u;
    }
    finish(p, lane_of, d);
  }
  // d[a] for every key of the thread; lane_of(o): the lane of this thread's
  // keys whose value lane is o (it finished keys a with a % LV == o).
  template <class LaneOf>
  DK_DEVICE void finish(const decode_problem& p, LaneOf&& lane_of, float (&d)[NK]) const {
    const float al = bits_to_f(a_log, p.a_log.type);
    float mine[kOwn];
#pragma unroll
    for (int j = 0; j < kOwn; ++j)
      mine[j] = decay_of<true>(bits_to_f(g[j], p.g.type), bits_to_f(bias[j], p.dt_bias.type), al, p.r.gate_raw);
#pragma unroll
    for (int a = 0; a < NK; ++a) d[a] = shfl(mine[a / LV], lane_of(a % LV));
  }
};

}  // namespace dk::gpu::decode_detail
