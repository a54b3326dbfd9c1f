// The T = 1 streaming decode bodies (decode_mode::t1_pipe; gate none or
// scalar, K = 64/128; sm_90+), included by decode_kernel.cuh.
//
// Why: at large batch the t1 kernel holds each warp's tile in registers from
// load to store, so the bytes in flight per SM are capped by the register file;
// 16-bit state (more registers per tile) streamed at ~76 % of copy bandwidth.
// Here walkers (a warp for K-last, a block for V-last) keep the next
// STAGES - 1 tiles in flight through the copy engine (bulk copies completing
// on one mbarrier per stage) into a shared-memory ring, while they compute
// the current one from shared memory. The tables select it for 16-bit state
// only: for fp32 it was slower than t1 in every configuration tried, and
// per-thread cp.async into the same ring was slower still (NOTES.md). With
// bf16 q/k/v/output, K-last K = 128, t1_bf16io_smem replaced it (NOTES.md v10:
// one-warp blocks, every copy in flight at once, bf16 B=512 -4 %, B=32 -19 %).
//
// Per tile, the math of decode_t1_body: x = S^T k, y = S^T q; u = beta (v - d rk x);
// o = d rq y + u (rk rq k.q); S_new = d S + k (rk u)^T, stored straight to the
// pool. K-last: a tile is the t1 warp tile (whole rows of K, the t1 lane
// mapping), sums over the lane's keys then butterflies. V-last: a tile is a
// run of every key row (a whole head when V * 2 bytes fits the run), the keys
// split over the block's warps and their lanes (two passes over the tile in
// shared memory, sums finished by butterflies and through shared memory).
// Runs of consecutive tiles share a (sequence, head): its slots, q/k (with
// norms), v, decay and beta are loaded and computed once per head.
#pragma once

namespace dk::gpu::decode_detail {

// A position in a warp's walk: sequence b, head h, first value v0 of the tile.
struct pipe_cursor {
  int64_t b;
  int h, v0;
};

// The warp's tiles of the B * HV * v_tiles: with lp.chunk 0 one contiguous run
// [first, limit) (balanced to one tile); else chunks of lp.chunk consecutive
// tiles dealt round-robin to the warps (all warps then stream through one
// window of the pool together). Cursors step without divisions.
// A walker is a warp (K-last) or a whole block (V-last, PER_WARP false).
// (The sizes are read from the launch parameters each time, not copied into
// registers: the K-last 16-bit body runs at its register cap.)
template <bool PER_WARP>
struct pipe_walk {
  const launch_params& lp;
  int64_t first, limit;

  DK_DEVICE pipe_walk(const launch_params& params, int64_t walker, int64_t walkers) : lp(params) {
    const int64_t total = int64_t(lp.p.batch) * lp.p.hv * lp.v_tiles;
    first = lp.chunk ? walker * lp.chunk : total * walker / walkers;
    limit = lp.chunk ? total : total * (walker + 1) / walkers;
  }
  // Sequence b walks its heads from sequence_rotation(b, HV) on, wrapping
  // (whole heads, so runs of a head's tiles stay whole).
  DK_DEVICE int first_head(int64_t b) const { return int(sequence_rotation(uint32_t(b), uint32_t(lp.p.hv))); }
  DK_DEVICE pipe_cursor at(int64_t t) const {
    const int64_t bh = t / lp.v_tiles;
    pipe_cursor w;
    w.b = bh / lp.p.hv;
    w.h = int(bh - w.b * lp.p.hv) + first_head(w.b);
    if (w.h >= lp.p.hv) w.h -= lp.p.hv;
    w.v0 = int(t - bh * lp.v_tiles) * lp.v_tile;
    return w;
  }
  // The next tile: t its index, in its place in the chunk.
  DK_DEVICE void advance(int64_t& t, int64_t& in, pipe_cursor& w) const {
    if (lp.chunk && ++in == lp.chunk) {
      in = 0;
      const int64_t walkers = PER_WARP ? int64_t(gridDim.x) * (blockDim.x / kWarpSize) : int64_t(gridDim.x);
      t += walkers * lp.chunk - (lp.chunk - 1);
      if (t < limit) w = at(t);
      return;
    }
    ++t;
    w.v0 += lp.v_tile;
    if (w.v0 >= lp.p.dv) {
      w.v0 = 0;
      if (++w.h == lp.p.hv) w.h = 0;
      if (w.h == first_head(w.b)) ++w.b, w.h = first_head(w.b);  // sequence b done
    }
  }
};

DK_DEVICE int64_t pipe_read_slot(const decode_problem& p, int64_t b) {
  return p.indices.data ? load_index(p.indices, b * p.indices.stride[0]) : b;
}
DK_DEVICE bool pipe_valid(const decode_problem& p, int64_t slot) { return slot >= 0 && slot < p.pool_slots; }

// One thread of the warp initialises its stage barriers.
template <int STAGES>
DK_DEVICE void pipe_init_barriers(uint64_t* bars, int lane) {
  if (lane == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) bulk_barrier_init(bars + s);
    bulk_barrier_init_done();
  }
  warp_sync();
}

// The warp's ring of STAGES tiles: `ahead` walks STAGES - 1 tiles in front of
// the tile being computed, each put in flight by the body's prefetch(cursor,
// stage); wait() hands out the next tile's stage once its copies have landed.
template <int STAGES>
struct pipe_ring {
  int64_t ahead_t, ahead_in = 0;
  pipe_cursor ahead;
  int stage = 0;
  uint32_t parity = 0;  // bit s: the parity of stage s's next phase

  template <class Walk, class Prefetch>
  DK_DEVICE void start(const Walk& walk, Prefetch&& prefetch) {
    ahead_t = walk.first;
    ahead = walk.at(walk.first);
    for (int s = 0; s < STAGES - 1 && ahead_t < walk.limit; ++s) {
      prefetch(ahead, s);
      walk.advance(ahead_t, ahead_in, ahead);
    }
  }
  // At the top of each iteration: the stage refilled is the one the previous
  // iteration read (into registers, already consumed).
  template <class Walk, class Prefetch>
  DK_DEVICE void refill(const Walk& walk, Prefetch&& prefetch) {
    if (ahead_t >= walk.limit) return;
    prefetch(ahead, stage == 0 ? STAGES - 1 : stage - 1);
    walk.advance(ahead_t, ahead_in, ahead);
  }
  DK_DEVICE int wait(uint64_t* bars) {
    const int s = stage;
    bulk_wait(bars + s, (parity >> s) & 1u);
    parity ^= 1u << s;
    stage = s + 1 == STAGES ? 0 : s + 1;
    return s;
  }
};

// What a (sequence, head) needs besides q/k: issue() starts every load, so the
// caller's q/k loads join the same trip to memory; finish() computes the decay
// and beta; store_v() puts v (as fp32) into the shared `vhead`.
template <int VMAX>
struct pipe_head {
  int64_t slot, store_slot, out_b;
  head_gate gate;
  uint32_t vbits[VMAX];
  float d, beta;

  DK_DEVICE void issue(const decode_problem& p, int64_t b, int h, int lane) {
    slot = pipe_read_slot(p, b);
    gate.issue(p, b, h);
    store_slot = p.token_indices.data ? load_index(p.token_indices, b * p.token_indices.stride[0])
                 : p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0])
                                      : slot;
    out_b = b * p.out.stride[0] + h * p.out.stride[2];
    const int64_t v_b = b * p.v.stride[0] + h * p.v.stride[2];
#pragma unroll
    for (int e = 0; e < VMAX; ++e)
      vbits[e] = e * kWarpSize + lane < p.dv ? load_bits(p.v, v_b + e * kWarpSize + lane) : 0u;
  }
  DK_DEVICE void finish(const decode_problem& p) { gate.finish(p, d, beta); }
  DK_DEVICE void store_v(const decode_problem& p, int lane, float* vhead) const {
#pragma unroll
    for (int e = 0; e < VMAX; ++e) vhead[e * kWarpSize + lane] = bits_to_f(vbits[e], p.v.type);
  }
};

template <class G, dtype S>
DK_DEVICE void decode_t1_pipe_body(const launch_params& lp) {
  static_assert(G::k_last && G::warps_k == 1, "t1_pipe: K-last tiles inside one warp");
  constexpr int LK = G::lanes_k, LV = G::lanes_v, VEC = G::vec, ES = G::esize;
  constexpr int NR = G::shape.rows, NC = G::shape.vec_chunks;
  constexpr int NCOL = NC * VEC;  // keys per row per lane
  constexpr int W = 4 * NC;       // 32-bit words per row per lane
  constexpr int K = G::k_cover;   // K-last tiles are whole rows
  constexpr int ROWS = G::v_per_warp;
  constexpr int STAGES = G::pipe_stages;
  constexpr int TILE_BYTES = G::pipe_tile_bytes;  // ROWS x K elements, row-major as in the pool
  static_assert(TILE_BYTES == ROWS * K * ES, "t1_pipe: a tile is ROWS whole rows");
  static_assert(ROWS <= kWarpSize, "t1_pipe: a strided pool's rows are copied one per lane");
  static_assert(STAGES >= 2, "t1_pipe: at least two stages");

  const decode_problem& p = lp.p;
  const int lane = int(threadIdx.x) % kWarpSize, warp = int(threadIdx.x) / kWarpSize;
  const int kl = lane % LK, vl = lane / LK;
  const int warps = int(blockDim.x) / kWarpSize;
  // Per warp: STAGES barriers, the current head's v as fp32, then STAGES tiles.
  extern __shared__ f32x4 smem_vec[];
  char* const mine = reinterpret_cast<char*>(smem_vec) + warp * G::pipe_warp_bytes;
  uint64_t* const bars = reinterpret_cast<uint64_t*>(mine);
  float* const vhead = reinterpret_cast<float*>(mine + G::pipe_barrier_bytes);
  char* const ring = mine + G::pipe_barrier_bytes + G::pipe_vhead_bytes;
  pipe_init_barriers<STAGES>(bars, lane);
  const pipe_walk<true> walk(lp, int64_t(blockIdx.x) * warps + warp, int64_t(gridDim.x) * warps);

  const int V = p.dv;
  const int64_t row_stride = p.pool.stride[2];
  auto row_of = [&](const pipe_cursor& w, int r) { return w.v0 + r * LV + vl; };
  auto key0 = [&](int c) { return (c * LK + kl) * VEC; };

  // Puts the tile at `w` in flight into `stage`: lane 0 announces its bytes on
  // the stage's barrier (0 for a padded slot: the phase completes at once),
  // then one bulk copy of the whole tile when its rows are contiguous in the
  // pool, else one per row. The slot is re-read only when the sequence changes.
  int64_t pf_b = -1, pf_slot = -1;
  const bool compact = row_stride == K;
  auto prefetch = [&](const pipe_cursor& w, int stage) {
    if (w.b != pf_b) pf_b = w.b, pf_slot = pipe_read_slot(p, w.b);
    const int rows = pipe_valid(p, pf_slot) ? (V - w.v0 < ROWS ? V - w.v0 : ROWS) : 0;
    warp_sync();  // every lane is done reading this stage's previous tile
    if (lane == 0) bulk_arrive_expect(bars + stage, uint32_t(rows * K * ES));
    if (rows == 0) return;
    const char* head = static_cast<const char*>(p.pool.data) +
                       (pf_slot * p.pool.stride[0] + int64_t(w.h) * p.pool.stride[1] + int64_t(w.v0) * row_stride) * ES;
    char* dst = ring + stage * TILE_BYTES;
    if (compact) {
      if (lane == 0) bulk_copy(dst, head, uint32_t(rows * K * ES), bars + stage);
    } else if (lane < rows) {
      bulk_copy(dst + lane * (K * ES), head + int64_t(lane) * row_stride * ES, uint32_t(K * ES), bars + stage);
    }
  };

  pipe_ring<STAGES> ring_state;
  ring_state.start(walk, prefetch);

  // Per (sequence, head): the pipe_head values, and q, k as fp32 (this lane's
  // keys) with the norms and k.q.
  pipe_head<G::pipe_vhead_bytes / 4 / kWarpSize> hd;
  int64_t head_b = -1;
  int head_h = -1;
  float kf[NCOL], qf[NCOL], rk = 1.f, rq = 1.f, kq = 0.f;
  int64_t tile = walk.first, tile_in = 0;
  pipe_cursor w = walk.at(walk.first);
  for (; tile < walk.limit; walk.advance(tile, tile_in, w)) {
    // 1. Keep STAGES - 1 tiles in flight.
    ring_state.refill(walk, prefetch);

    // 2. A new (sequence, head): its operands, all in one trip to memory.
    if (w.b != head_b || w.h != head_h) {
      head_b = w.b, head_h = w.h;
      hd.issue(p, w.b, w.h, lane);
      const int qk_head = w.h / (p.hv / p.hq);
      uint32_t qw[NC][VEC], kw[NC][VEC];
      const int64_t qb = w.b * p.q.stride[0] + qk_head * p.q.stride[2];
      const int64_t kb = w.b * p.k.stride[0] + qk_head * p.k.stride[2];
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        load_run<VEC>(p.q, qb + key0(c), true, qw[c]);
        load_run<VEC>(p.k, kb + key0(c), true, kw[c]);
      }
      runs_to_float(kw, p.k.type, kf);
      runs_to_float(qw, p.q.type, qf);
      float kk = 0.f, qq = 0.f;
      kq = 0.f;
#pragma unroll
      for (int a = 0; a < NCOL; ++a) {
        kk = fmaf(kf[a], kf[a], kk);
        qq = fmaf(qf[a], qf[a], qq);
        kq = fmaf(kf[a], qf[a], kq);
      }
      kq = group_sum<LK>(kq);
      rk = 1.f, rq = p.r.scale;
      if (p.r.qk_l2norm) {
        rk = rsqrtf(group_sum<LK>(kk) + kQkNormEps);
        rq *= rsqrtf(group_sum<LK>(qq) + kQkNormEps);
      }
      hd.finish(p);
      warp_sync();  // every lane is done with the previous head's v
      hd.store_v(p, lane, vhead);
      warp_sync();
    }

    // 3. Wait for this tile's state, read this lane's vectors of it.
    const char* src = ring + ring_state.wait(bars) * TILE_BYTES + (vl * K + key0(0)) * ES;
    if (!pipe_valid(p, hd.slot)) {  // padding: zero output, the pool untouched
      if (kl == 0)
#pragma unroll
        for (int r = 0; r < NR; ++r)
          if (row_of(w, r) < V) store_f(p.out, hd.out_b + row_of(w, r), 0.f);
      continue;
    }
    uint32_t s[NR][W];
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const u32x4 x = load16(src + (r * LV * K + c * LK * VEC) * ES);
        s[r][4 * c] = x.x, s[r][4 * c + 1] = x.y, s[r][4 * c + 2] = x.z, s[r][4 * c + 3] = x.w;
      }

    // 4. x = S^T k, y = S^T q per row, then over the LK lanes of the row.
    float x[NR], y[NR];
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      x[r] = y[r] = 0.f;
#pragma unroll
      for (int e = 0; e < NCOL; ++e) {
        const float se = tile_elem<S, W>(s[r], e);
        y[r] = fmaf(se, qf[e], y[r]);
        x[r] = fmaf(se, kf[e], x[r]);
      }
    }
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      x[r] = group_sum<LK>(x[r]);
      y[r] = group_sum<LK>(y[r]);
    }

    // 5. u, the output, the rank-1 update, the store.
    const float d = hd.d, dk_ = d * rk, dq = d * rq, kqn = kq * rk * rq;
    float uk[NR];
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      const float u = hd.beta * ((row_of(w, r) < V ? vhead[row_of(w, r)] : 0.f) - dk_ * x[r]);
      if (kl == 0 && row_of(w, r) < V) store_f(p.out, hd.out_b + row_of(w, r), fmaf(u, kqn, dq * y[r]));
      uk[r] = u * rk;
    }
    if (!pipe_valid(p, hd.store_slot)) continue;
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      if constexpr (S == dtype::f32) {
#pragma unroll
        for (int e = 0; e < NCOL; ++e) s[r][e] = float_to_bits(fmaf(bits_to_float(s[r][e]), d, kf[e] * uk[r]));
      } else {
#pragma unroll
        for (int e = 0; e < NCOL; e += 2) {
          const float lo = fmaf(tile_elem<S, W>(s[r], e), d, kf[e] * uk[r]);
          const float hi = fmaf(tile_elem<S, W>(s[r], e + 1), d, kf[e + 1] * uk[r]);
          s[r][e >> 1] = pack_halves<S>(lo, hi);
        }
      }
    }
    char* dst = static_cast<char*>(const_cast<void*>(p.pool.data)) +
                (hd.store_slot * p.pool.stride[0] + int64_t(w.h) * p.pool.stride[1]) * ES;
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c)
        if (row_of(w, r) < V)
          store16(dst + (int64_t(row_of(w, r)) * row_stride + key0(c)) * ES,
                  u32x4{s[r][4 * c], s[r][4 * c + 1], s[r][4 * c + 2], s[r][4 * c + 3]});
  }
}

// V-last pool [.., K, V]: a block of T warps is one walker. A tile is the
// ROW-byte run [v0, v0 + ROW / ES) of every key row (K rows, row-major in
// shared memory); warp tw owns the key rows [tw K/T, (tw + 1) K/T): it copies
// them (one bulk copy per row, or warp 0 one copy of the whole tile when it is
// contiguous in the pool; warp 0 announces the tile's bytes), and its
// lane (kg = lane / LV, vl = lane % LV; LV = ROW / 16) owns the 16-byte column
// chunk vl of KPL of them. Pass 1 sums x, y over the lane's keys (q, k as fp32
// from the block's shared copy), butterflies over the warp's key groups, then
// over the warps through shared memory; every warp forms u; pass 2 re-reads
// the lane's vectors, updates and stores them (a warp store writes whole
// ROW-byte runs). Two block barriers per tile.
template <class G, dtype S>
DK_DEVICE void decode_t1_pipe_vlast_body(const launch_params& lp) {
  static_assert(!G::k_last, "t1_pipe V-last body");
  constexpr int ES = G::esize, VEC = 16 / ES;
  constexpr int K = G::pipe_keys;
  constexpr int T = G::pipe_warps;         // warps per block: one walker
  constexpr int ROW = G::pipe_vlast_row;   // bytes of one key row in a tile
  constexpr int LV = ROW / 16;             // lanes along V, 16 bytes each
  constexpr int VT = LV * VEC;             // values per tile
  constexpr int KG = kWarpSize / LV;       // key groups per warp
  constexpr int KW = K / T;                // key rows per warp
  constexpr int KPL = KW / KG;             // keys per lane
  constexpr int KPAD = KPL + 4;            // q/k floats per key group (padded: a warp's groups hit distinct banks)
  constexpr int STAGES = G::pipe_stages;
  constexpr int TILE_BYTES = G::pipe_tile_bytes;
  static_assert(TILE_BYTES == K * ROW && VT == G::pipe_v_tile, "t1_pipe V-last tile shape");
  static_assert(2 * T * KG * KPAD * 4 <= G::pipe_qk_bytes && KPL % 4 == 0, "t1_pipe V-last q/k buffer");
  static_assert(T * 2 * VT * 4 <= G::pipe_red_bytes, "t1_pipe V-last reduction buffer");
  static_assert(STAGES >= 2, "t1_pipe: at least two stages");

  const decode_problem& p = lp.p;
  const int lane = int(threadIdx.x) % kWarpSize, tw = int(threadIdx.x) / kWarpSize;
  const int vl = lane % LV, kg = lane / LV;
  const int group = tw * KG + kg;  // the lane's key group in the block
  // Per block: STAGES barriers, the head's v, its k and q as fp32, the
  // per-warp partial sums, then STAGES tiles.
  extern __shared__ f32x4 smem_vec[];
  char* const base = reinterpret_cast<char*>(smem_vec);
  uint64_t* const bars = reinterpret_cast<uint64_t*>(base);
  float* const vhead = reinterpret_cast<float*>(base + G::pipe_barrier_bytes);
  float* const ks = reinterpret_cast<float*>(base + G::pipe_barrier_bytes + G::pipe_vhead_bytes);
  float* const qs = ks + T * KG * KPAD;
  float* const red = reinterpret_cast<float*>(base + G::pipe_barrier_bytes + G::pipe_vhead_bytes + G::pipe_qk_bytes);
  char* const ring = base + G::pipe_barrier_bytes + G::pipe_vhead_bytes + G::pipe_qk_bytes + G::pipe_red_bytes;
  // The head's scalars, published by warp 0 (after the stage barriers).
  struct head_scalars {
    int64_t slot, store_slot, out_b;
    float rk, rq, kq, d, beta;
  };
  static_assert(STAGES * 8 + 64 <= G::pipe_barrier_bytes && sizeof(head_scalars) <= 64, "t1_pipe V-last header");
  head_scalars* const hs = reinterpret_cast<head_scalars*>(base + G::pipe_barrier_bytes - 64);
  if (tw == 0) pipe_init_barriers<STAGES>(bars, lane);
  block_sync();
  const pipe_walk<false> walk(lp, blockIdx.x, gridDim.x);

  const int V = p.dv;
  const int64_t row_stride = p.pool.stride[2];

  // Puts the tile at `w` in flight into `stage`: one bulk copy when the tile is
  // contiguous in the pool (whole rows of a compact pool), else this warp's
  // key rows (of the tile's columns that exist), one bulk copy each; warp 0
  // announces the whole tile's bytes on the stage's barrier.
  int64_t pf_b = -1, pf_slot = -1;
  auto prefetch = [&](const pipe_cursor& w, int stage) {
    if (w.b != pf_b) pf_b = w.b, pf_slot = pipe_read_slot(p, w.b);
    const int cols = pipe_valid(p, pf_slot) ? (V - w.v0 < VT ? V - w.v0 : VT) : 0;
    // (cols * ES is a multiple of 16: V is a multiple of 16, v0 of VT.)
    if (tw == 0 && lane == 0) bulk_arrive_expect(bars + stage, uint32_t(cols * ES * K));
    if (cols == 0) return;
    const char* head = static_cast<const char*>(p.pool.data) +
                       (pf_slot * p.pool.stride[0] + int64_t(w.h) * p.pool.stride[1] + w.v0) * ES;
    char* dst = ring + stage * TILE_BYTES;
    if (row_stride * ES == ROW && cols == VT) {  // the tile is contiguous in the pool: one copy
      if (tw == 0 && lane == 0) bulk_copy(dst, head, uint32_t(K * ROW), bars + stage);
      return;
    }
#pragma unroll
    for (int k = tw * KW + lane; k < (tw + 1) * KW; k += kWarpSize)
      bulk_copy(dst + k * ROW, head + int64_t(k) * row_stride * ES, uint32_t(cols * ES), bars + stage);
  };

  pipe_ring<STAGES> ring_state;
  ring_state.start(walk, prefetch);

  int64_t head_b = -1, slot = -1, store_slot = -1, out_b = 0;
  int head_h = -1;
  float rk = 1.f, rq = 1.f, kq = 0.f, d = 1.f, beta = 0.f;
  int64_t tile = walk.first, tile_in = 0;
  pipe_cursor w = walk.at(walk.first);
  for (; tile < walk.limit; walk.advance(tile, tile_in, w)) {
    block_sync();  // the block is done with the previous tile: its stage, red, ks/qs/vhead
    ring_state.refill(walk, prefetch);

    // A new (sequence, head): warp 0 loads its operands in one trip, forms the
    // norms, decay and beta, and publishes them with q, k, v in shared memory.
    if (w.b != head_b || w.h != head_h) {
      head_b = w.b, head_h = w.h;
      if (tw == 0) {
        pipe_head<G::pipe_vhead_bytes / 4 / kWarpSize> hd;
        hd.issue(p, w.b, w.h, lane);
        const int qk_head = w.h / (p.hv / p.hq);
        const int64_t qb = w.b * p.q.stride[0] + qk_head * p.q.stride[2];
        const int64_t kb = w.b * p.k.stride[0] + qk_head * p.k.stride[2];
        uint32_t qbits[K / kWarpSize], kbits[K / kWarpSize];
#pragma unroll
        for (int e = 0; e < K / kWarpSize; ++e) {
          qbits[e] = load_bits(p.q, qb + e * kWarpSize + lane);
          kbits[e] = load_bits(p.k, kb + e * kWarpSize + lane);
        }
        float kk = 0.f, qq = 0.f, kqs = 0.f;
#pragma unroll
        for (int e = 0; e < K / kWarpSize; ++e) {
          const float kv = bits_to_f(kbits[e], p.k.type), qv = bits_to_f(qbits[e], p.q.type);
          kk = fmaf(kv, kv, kk);
          qq = fmaf(qv, qv, qq);
          kqs = fmaf(kv, qv, kqs);
          const int key = e * kWarpSize + lane;
          ks[(key / KPL) * KPAD + key % KPL] = kv;
          qs[(key / KPL) * KPAD + key % KPL] = qv;
        }
        hd.finish(p);
        hd.store_v(p, lane, vhead);
        float rks = 1.f, rqs = p.r.scale;
        if (p.r.qk_l2norm) {
          rks = rsqrtf(group_sum<kWarpSize>(kk) + kQkNormEps);
          rqs *= rsqrtf(group_sum<kWarpSize>(qq) + kQkNormEps);
        }
        kqs = group_sum<kWarpSize>(kqs);
        if (lane == 0) {
          hs->slot = hd.slot, hs->store_slot = hd.store_slot, hs->out_b = hd.out_b;
          hs->rk = rks, hs->rq = rqs, hs->kq = kqs, hs->d = hd.d, hs->beta = hd.beta;
        }
      }
      block_sync();
      slot = hs->slot, store_slot = hs->store_slot, out_b = hs->out_b;
      rk = hs->rk, rq = hs->rq, kq = hs->kq, d = hs->d, beta = hs->beta;
    }

    const char* src = ring + ring_state.wait(bars) * TILE_BYTES + (tw * KW + kg * KPL) * ROW + vl * 16;
    const int col = w.v0 + vl * VEC;  // V is a multiple of 16: a chunk is wholly in or out
    const bool col_ok = col < V;
    if (!pipe_valid(p, slot)) {  // padding: zero output, the pool untouched
      if (tw == 0 && kg == 0 && col_ok) {
        float z[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) z[e] = 0.f;
        store_run<VEC>(p.out, out_b + col, z);
      }
      continue;
    }
    const float* g_k = ks + group * KPAD;
    const float* g_q = qs + group * KPAD;

    // Pass 1: x = S^T k, y = S^T q over this lane's keys, then over the
    // warp's key groups, then over the warps.
    float x[VEC], y[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) x[e] = y[e] = 0.f;
#pragma unroll
    for (int j = 0; j < KPL; j += 4) {
      const f32x4 k4 = load16f(g_k + j), q4 = load16f(g_q + j);
      const float kj[4] = {k4.x, k4.y, k4.z, k4.w}, qj[4] = {q4.x, q4.y, q4.z, q4.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const u32x4 v = load16(src + (j + i) * ROW);
        const uint32_t wd[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const float se = tile_elem<S, 4>(wd, e);
          x[e] = fmaf(se, kj[i], x[e]);
          y[e] = fmaf(se, qj[i], y[e]);
        }
      }
    }
#pragma unroll
    for (int m = LV; m < kWarpSize; m *= 2)
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        x[e] += shfl_xor(x[e], m);
        y[e] += shfl_xor(y[e], m);
      }
    if constexpr (T > 1) {  // 16-byte shared accesses: VEC is 4 or 8
      f32x4* const mine = reinterpret_cast<f32x4*>(red + tw * 2 * VT + vl * VEC);
      if (kg == 0)
#pragma unroll
        for (int e = 0; e < VEC; e += 4) {
          mine[e / 4] = f32x4{x[e], x[e + 1], x[e + 2], x[e + 3]};
          mine[(VT + e) / 4] = f32x4{y[e], y[e + 1], y[e + 2], y[e + 3]};
        }
      block_sync();
#pragma unroll
      for (int e = 0; e < VEC; ++e) x[e] = y[e] = 0.f;
#pragma unroll
      for (int u = 0; u < T; ++u) {
        const f32x4* const theirs = reinterpret_cast<const f32x4*>(red + u * 2 * VT + vl * VEC);
#pragma unroll
        for (int e = 0; e < VEC; e += 4) {
          const f32x4 a = theirs[e / 4], c = theirs[(VT + e) / 4];
          x[e] += a.x, x[e + 1] += a.y, x[e + 2] += a.z, x[e + 3] += a.w;
          y[e] += c.x, y[e + 1] += c.y, y[e + 2] += c.z, y[e + 3] += c.w;
        }
      }
    }
    float vcol[VEC];  // this lane's v values
#pragma unroll
    for (int e = 0; e < VEC; e += 4) {
      const f32x4 a = col_ok ? load16f(vhead + col + e) : f32x4{0.f, 0.f, 0.f, 0.f};
      vcol[e] = a.x, vcol[e + 1] = a.y, vcol[e + 2] = a.z, vcol[e + 3] = a.w;
    }

    // u, the output (warp 0, key group 0), then pass 2: the update, stored.
    const float dk_ = d * rk, dq = d * rq, kqn = kq * rk * rq;
    float uk[VEC], o[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const float u = beta * (vcol[e] - dk_ * x[e]);
      o[e] = fmaf(u, kqn, dq * y[e]);
      uk[e] = u * rk;
    }
    if (tw == 0 && kg == 0 && col_ok) store_run<VEC>(p.out, out_b + col, o);
    if (!pipe_valid(p, store_slot) || !col_ok) continue;
    char* dst = static_cast<char*>(const_cast<void*>(p.pool.data)) +
                (store_slot * p.pool.stride[0] + int64_t(w.h) * p.pool.stride[1] +
                 int64_t(tw * KW + kg * KPL) * row_stride + col) * ES;
#pragma unroll
    for (int j = 0; j < KPL; j += 4) {
      const f32x4 k4 = load16f(g_k + j);
      const float kj[4] = {k4.x, k4.y, k4.z, k4.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const u32x4 v = load16(src + (j + i) * ROW);
        uint32_t wd[4] = {v.x, v.y, v.z, v.w};
        if constexpr (S == dtype::f32) {
#pragma unroll
          for (int e = 0; e < 4; ++e) wd[e] = float_to_bits(fmaf(bits_to_float(wd[e]), d, kj[i] * uk[e]));
        } else {
#pragma unroll
          for (int e = 0; e < VEC; e += 2) {
            const float lo = fmaf(tile_elem<S, 4>(wd, e), d, kj[i] * uk[e]);
            const float hi = fmaf(tile_elem<S, 4>(wd, e + 1), d, kj[i] * uk[e + 1]);
            wd[e >> 1] = pack_halves<S>(lo, hi);
          }
        }
        store16(dst + int64_t(j + i) * row_stride * ES, u32x4{wd[0], wd[1], wd[2], wd[3]});
      }
    }
  }
}
}  // namespace dk::gpu::decode_detail
