// decode_t1_bf16io_body: the K-last T = 1 kernel for the common case of bf16
// q, k, v and output (decode_mode::t1_bf16io; small grids keep t1_small). Same blocks,
// tile and math as decode_t1_body (decode_t1_body.cuh), but fewer instructions
// and registers per tile (at large batch the t1 grid is bound by issue slots and
// by how many warps fit per SM):
// - the activation dtype is known at compile time: q/k arrive as packed bf16
//   words (no fp32/fp16 arms, no selects) and the output is one bf16 store;
// - x = S^T k and y = S^T q are reduced over the row's LK lanes by a
//   reduce-scatter (each stage exchanges half of the remaining values) instead
//   of a butterfly per value: 2*NR values cost 2*NR - 1 + log2(LK / 2NR)
//   shuffles instead of 2*NR * log2(LK);
// - u and the output are then computed once per row (by the lanes that hold
//   it) instead of by all LK lanes, and rk*u goes back to the row's lanes by
//   one shuffle per row.
// decode_mode::t1_bf16io_smem (K-last fp32 state: one-wave grids and grids of
// many waves, see mode_for) runs the same body with G::smem_state: the tile is
// copied into shared memory by cp.async and read back vector by vector, so
// that it fits 64 registers (32 blocks per SM).
// Its copies go in one group per 16-byte column of the tile (c), so that the
// sums over column 0 run while later columns are still arriving.
// 16-bit state (K-last, large grids) takes the smem body too, in place of
// t1_pipe: its tile holds 16 rows of 128 keys in the same 4 KB per warp.
// decode_mode::t1_per_key_smem (per-key gates, G::per_key) runs the smem body
// with a decay d_a per key (key_decays, as the t1 body): the sums take d q and
// d k column by column, the update d_a S + k_a (rk u); head_gate gives d = 1.
#pragma once

namespace dk::gpu::decode_detail {

// Whether G's K-last tile suits the reduce-scatter (tuning::bf16io_tile_fits).
template <class G>
constexpr bool bf16io_fits() {
  return G::k_last && tuning::bf16io_tile_fits(G::shape);
}

// A thread's keys of one bf16 q row and k row (at qp, kp): run c is keys
// (c * LK + kl) * VEC .. + VEC - 1, as VEC / 2 words from word c * VEC / 2 on
// (key i of the thread: tile_elem<bf16>(qw, i)).
template <int NC, int LK, int VEC>
DK_DEVICE void load_qk_words(const char* qp, const char* kp, int kl, uint32_t (&qw)[NC * VEC / 2],
                             uint32_t (&kw)[NC * VEC / 2]) {
#pragma unroll
  for (int c = 0; c < NC; ++c) {
    const int64_t at = int64_t((c * LK + kl) * VEC) * 2;
    uint32_t* const q2 = qw + c * VEC / 2;
    uint32_t* const k2 = kw + c * VEC / 2;
    if constexpr (VEC == 4) {
      const u32x2 a = load8(qp + at), e = load8(kp + at);
      q2[0] = a.x, q2[1] = a.y, k2[0] = e.x, k2[1] = e.y;
    } else {
      const u32x4 a = load16(qp + at), e = load16(kp + at);
      q2[0] = a.x, q2[1] = a.y, q2[2] = a.z, q2[3] = a.w;
      k2[0] = e.x, k2[1] = e.y, k2[2] = e.z, k2[3] = e.w;
    }
  }
}

// Key a of a thread's NK keys (a = c VEC + e) as an index into K, as
// load_qk_words lays them out: the per-key bodies' key_of for key_decays.
template <int LK, int VEC>
DK_DEVICE int bf16io_key(int kl, int a) {
  return ((a / VEC) * LK + kl) * VEC + a % VEC;
}

// x and y of each of a thread's rows (a[2 r], a[2 r + 1]) summed over the row's
// LK lanes by a reduce-scatter: at the stage of lane offset `off`, lanes with
// that bit keep the upper half of their remaining values and send the lower
// half (the others the reverse), so value m ends at the lanes with kl / OFF_T
// == m; the stages below OFF_T finish the sum as a butterfly. Every lane gets
// the x and y of its row group's row kl / OFF_T / 2.
// Its first STAGES stages alone (the V-last T > 1 tile's partial scatter):
// a[0, M >> STAGES) then hold the sums of value block kl / (LK >> STAGES), over
// the lanes that differ in those STAGES high bits of kl.
template <int LK, int M, int STAGES>
DK_DEVICE void scatter_stages(float (&a)[M], int kl) {
#pragma unroll
  for (int st = 0; st < STAGES; ++st) {
    const int n = M >> st, off = LK >> (st + 1);
    const bool upper = (kl & off) != 0;
#pragma unroll
    for (int i = 0; i < n / 2; ++i) {
      const float send = upper ? a[i] : a[i + n / 2];
      const float keep = upper ? a[i + n / 2] : a[i];
      a[i] = keep + shfl_xor(send, off);
    }
  }
}
template <int LK, int M>
DK_DEVICE void reduce_scatter_xy(float (&a)[M], int kl, bool holds_y, float& x, float& y) {
  constexpr int OFF_T = LK / M;
  constexpr int kStages = M >= 16 ? 4 : M >= 8 ? 3 : M >= 4 ? 2 : M >= 2 ? 1 : 0;  // log2 M
  static_assert((1 << kStages) == M, "reduce_scatter_xy: M a power of two up to 16");
  scatter_stages<LK, M, kStages>(a, kl);
#pragma unroll
  for (int off = OFF_T / 2; off > 0; off >>= 1) a[0] += shfl_xor(a[0], off);
  const float other = shfl_xor(a[0], OFF_T);  // the row's other value
  x = holds_y ? other : a[0];
  y = holds_y ? a[0] : other;
}

template <class G, dtype S>
DK_DEVICE void decode_t1_bf16io_body(const launch_params& lp) {
  constexpr int LK = G::lanes_k, LV = G::lanes_v, VEC = G::vec, ES = G::esize;
  constexpr int NR = G::shape.rows, NC = G::shape.vec_chunks;
  constexpr int W = 4 * NC;       // 32-bit state words per row
  constexpr int NK = NC * VEC;    // keys per thread (NC runs of VEC)
  constexpr int M = 2 * NR;       // x and y of each row: value m = 2 * row + (y ? 1 : 0)
  constexpr int OFF_T = LK / M;   // after the scatter: lane offset from a row's x to its y
  static_assert(bf16io_fits<G>(), "t1_bf16io: 2 * rows must fit in lanes_k");
  static_assert((M & (M - 1)) == 0, "t1_bf16io: rows per thread are a power of two");
  static_assert(VEC == 4 || VEC == 8, "t1_bf16io: 16-byte state vectors");
  static_assert(!G::stream_state, "t1_bf16io: plain state loads/stores (no table sets t1_stream_state)");
  static_assert(!G::per_key || (G::smem_state && !G::wide), "t1_bf16io: per-key gates on the smem tile only");

  const decode_problem& p = lp.p;
  const int lane = int(threadIdx.x) % kWarpSize, warp = int(threadIdx.x) / kWarpSize;
  const int kl = lane % LK, vl = lane / LK;
  const block_place<G::rotated> at(lp);
  // Before anything (see prefetch_ahead); the wide instance has it after its stores.
  if constexpr (!G::wide)
    if (lp.lookahead > 0) prefetch_ahead<G>(lp);
  const int64_t b = at.b;
  const int h = at.h, V = p.dv;
  const int vw = at.tile * lp.v_tile + warp * G::v_per_warp;  // warp's first value
  auto row_value = [&](int r) { return vw + r * LV + vl; };  // this thread's state row r
  // After the scatter this lane holds value m of its row group: row mj, x or y.
  const int m = kl / OFF_T, mj = m >> 1;
  const bool holds_y = (m & 1) != 0;
  const bool writes_row = !holds_y && kl % OFF_T == 0;  // one lane per row stores the output

  // 1. The slot first, then everything else before it is used.
  const int64_t slot = slot_of<G>(p, b);
  const int qk_head = at.qk_head;
  const char* const qp = static_cast<const char*>(p.q.data) + (b * p.q.stride[0] + qk_head * p.q.stride[2]) * 2;
  const char* const kp = static_cast<const char*>(p.k.data) + (b * p.k.stride[0] + qk_head * p.k.stride[2]) * 2;
  constexpr int KW = NK / 2;
  uint32_t qw[KW], kw[KW];
  load_qk_words<NC, LK, VEC>(qp, kp, kl, qw, kw);
  const int my_value = vw + mj * LV + vl;  // the row this lane finishes
  const uint16_t* const vp = static_cast<const uint16_t*>(p.v.data);
  // Clamped, not conditional: a conditional load puts v's conversion in the
  // load's own branch, where the warp waits for v before it issues the tile.
  const uint16_t v_bits = vp[b * p.v.stride[0] + h * p.v.stride[2] + min(my_value, V - 1)];
  const int64_t store_slot =
      p.token_indices.data ? load_index(p.token_indices, b * p.token_indices.stride[0])
      : p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0])
                           : slot;
  uint16_t* const out = static_cast<uint16_t*>(const_cast<void*>(p.out.data)) + (b * p.out.stride[0] + h * p.out.stride[2]);

  // Padding (slot -1 or out of range): zero output, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {
    if (writes_row && my_value < V) out[my_value] = 0;
    return;
  }

  // Per-key gates: the head's g and dt_bias rows staged in the warp's
  // kGateStageBytes after
  // the block's tiles, one cp.async per lane and row in a group ahead of the
  // tile's (their scalar loads after the tile, 9 per lane, cost bf16 state
  // B=32 2.2 us: NOTES.md v32 run 7); rows not in aligned 16-byte pieces take
  // those loads. The group is committed (empty then) either way, so that the
  // tile's column waits count the same.
  [[maybe_unused]] key_decays<G::per_key ? NK : 1, LV> decays;
  [[maybe_unused]] bool gates_staged = false;
  [[maybe_unused]] unsigned char* gate_stage = nullptr;
  if constexpr (G::per_key) {
    static_assert(G::k_cover * 4 <= kGateStageBiasOffset, "t1_per_key_smem: a staged row holds K <= 128 keys");
    extern __shared__ f32x4 smem_vec[];
    gate_stage = reinterpret_cast<unsigned char*>(smem_vec + blockDim.x * (NR * NC)) + warp * kGateStageBytes;
    gates_staged = decays.stage(p, b, h, lane, gate_stage);
    copy16_async_commit();
  }
  // 2. The state tile: NR rows x NC 16-byte vectors, all loads in flight at once:
  // into registers (s), or (G::smem_state) by cp.async into this thread's slots
  // of the warp's shared tile, slot (r, c) at mine[(r * NC + c) * 32]: a warp's
  // 16-byte accesses to one slot are contiguous (no bank conflict), and each
  // thread reads back only its own copies (no barrier).
  const int64_t row_stride = p.pool.stride[2];
  const char* head = static_cast<const char*>(p.pool.data) + (slot * p.pool.stride[0] + int64_t(h) * p.pool.stride[1]) * ES;
  uint32_t s[G::smem_state ? 1 : NR][W];
  [[maybe_unused]] u32x4* mine = nullptr;
  if constexpr (G::smem_state) {
    extern __shared__ f32x4 smem_vec[];
    mine = reinterpret_cast<u32x4*>(smem_vec) + warp * (NR * NC * kWarpSize) + lane;
    // Element (r, c) of this thread at from + r * row_step + c * LK * 16.
    const char* const from = head + (int64_t(vw + vl) * row_stride + kl * VEC) * ES;
    const int64_t row_step = int64_t(LV) * row_stride * ES;
    copy_tile_async<NR, NC, false>(mine, head, [&](int r, int c) {
      return tile_source{row_value(r) < V, from + r * row_step + c * LK * 16};
    });
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        u32x4 x{0u, 0u, 0u, 0u};
        if (row_value(r) < V) x = load16(head + (int64_t(row_value(r)) * row_stride + (c * LK + kl) * VEC) * ES);
        s[r][4 * c] = x.x, s[r][4 * c + 1] = x.y, s[r][4 * c + 2] = x.z, s[r][4 * c + 3] = x.w;
      }
  }

  // The gate's loads after the tile's: issued before it, they held back the
  // tile (B=32 in graph 37.6 -> 37.1 us, NOTES.md v12).
  head_gate gate;
  gate.issue(p, b, h);
  if constexpr (G::per_key)
    if (!gates_staged) decays.issue(p, b, h, vl, [&](int a) { return bf16io_key<LK, VEC>(kl, a); });

  // 3. While they fly: q and k to fp32 (unpacked at each use), the norms, k.q,
  // the gate and beta (the wide instance: the gate after the sums).
  auto unpack = [](const uint32_t(&w)[KW], int i) { return tile_elem<dtype::bf16, KW>(w, i); };
  // 16-bit tiles in shared memory keep q packed too, as k (unpacked at each
  // use): 16 keys per thread would take 16 registers as fp32.
  constexpr bool q_packed = G::smem_state && ES == 2;
  float qf[q_packed ? 1 : NK];
  if constexpr (!q_packed) {
#pragma unroll
    for (int i = 0; i < NK; ++i) qf[i] = unpack(qw, i);
  }
  auto q_at = [&](int i) { if constexpr (q_packed) return unpack(qw, i); else return qf[i]; };
  float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
  for (int i = 0; i < NK; ++i) {
    const float ki = unpack(kw, i);
    kk = fmaf(ki, ki, kk);
    const float qi = q_at(i);
    qq = fmaf(qi, qi, qq);
    kq = fmaf(ki, qi, kq);
  }
  finish_qk_sums<LK>(p, kk, qq, kq);
  // The wide instance finishes the gate after the sums, so that the first
  // column's sums do not wait for the gate's loads (B=32 in graph 36.95 ->
  // 36.36 us, NOTES.md v13). Elsewhere that lost (fp32 B=8) or spilled (16-bit).
  float d = 1.f, beta = 1.f;
  if constexpr (!G::wide) gate.finish(p, d, beta);
  [[maybe_unused]] float dkey[G::per_key ? NK : 1];  // per-key decays
  if constexpr (G::per_key) {
    auto lane_of = [&](int o) { return o * LK + kl; };
    if (gates_staged) {  // warp-uniform: one head per warp
      copy16_async_wait_groups(NC);  // the gate rows' group, the oldest
      warp_sync();
      decays.finish_staged(p, gate_stage, vl, [&](int a) { return bf16io_key<LK, VEC>(kl, a); }, lane_of, dkey);
    } else {
      decays.finish(p, lane_of, dkey);
    }
  }
  // The keys' q and k as the sums take them (per-key: with their decays).
  auto k_sum = [&](int i) {
    if constexpr (G::per_key) return unpack(kw, i) * dkey[i];
    else return unpack(kw, i);
  };
  auto q_sum = [&](int i) {
    if constexpr (G::per_key) return q_at(i) * dkey[i];
    else return q_at(i);
  };

  // 4. x and y of each row over this thread's keys, then the reduce-scatter.
  float a[M];
  if constexpr (G::smem_state) {
    // Column by column as each group lands (VEC keys of q and k unpacked at a
    // time, fewer live registers). B=8 in graph 11.77 -> 11.54 us against one
    // wait for the whole tile (NOTES.md v9).
#pragma unroll
    for (int i = 0; i < M; ++i) a[i] = 0.f;
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      copy16_async_wait_groups(NC - 1 - c);
#pragma unroll
      for (int r = 0; r < NR; ++r) {
        uint32_t w[4];
        read_slot(mine, r * NC + c, w);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const float st = tile_elem<S, 4>(w, j);
          a[2 * r] = fmaf(st, k_sum(c * VEC + j), a[2 * r]);
          a[2 * r + 1] = fmaf(st, q_sum(c * VEC + j), a[2 * r + 1]);
        }
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      float x = 0.f, y = 0.f;
#pragma unroll
      for (int i = 0; i < NK; ++i) {
        const float st = tile_elem<S, W>(s[r], i);
        x = fmaf(st, unpack(kw, i), x);
        y = fmaf(st, q_at(i), y);
      }
      a[2 * r] = x;
      a[2 * r + 1] = y;
    }
  }
  float x, y;
  reduce_scatter_xy<LK, M>(a, kl, holds_y, x, y);

  if constexpr (G::wide) gate.finish(p, d, beta);
  float rk, rq;
  l2norm_factors(p.r.qk_l2norm, p.r.scale, kk, qq, rk, rq);
  // 5. The row's u and output (= S_new^T q_hat), once per row; rk u to every lane of the row.
  const float u = beta * (bf16_bits_to_float(v_bits) - d * rk * x);
  if (writes_row && my_value < V) out[my_value] = float_to_bf16_bits(fmaf(u, kq * rk * rq, d * rq * y));
  const float uk_mine = u * rk;
  float uk[NR];
#pragma unroll
  for (int r = 0; r < NR; ++r) uk[r] = shfl(uk_mine, vl * LK + 2 * r * OFF_T);
  if (store_slot < 0 || store_slot >= p.pool_slots) return;

  // 6. The rank-1 update in place (packed for 16-bit state) and the stores;
  // from shared memory, vector by vector (read, updated, stored).
  char* dst = const_cast<char*>(static_cast<const char*>(p.pool.data)) +
              (store_slot * p.pool.stride[0] + int64_t(h) * p.pool.stride[1]) * ES;
  if constexpr (G::smem_state) {
    char* const to = dst + (int64_t(vw + vl) * row_stride + kl * VEC) * ES;
    const int64_t row_step = int64_t(LV) * row_stride * ES;
    auto update_store = [&](int r, int c) {
      uint32_t w[4];
      read_slot(mine, r * NC + c, w);
      auto decay = [&](int e) {
        if constexpr (G::per_key) return dkey[c * VEC + e];
        else return d;
      };
      const u32x4 n = decay_add<S>(w, decay, [&](int e) { return unpack(kw, c * VEC + e) * uk[r]; });
      if (row_value(r) < V) store16(to + r * row_step + c * LK * 16, n);
    };
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) update_store(r, c);
    // Never taken (shape_of gives wide grids no look-ahead), but where the
    // branch sits shapes ptxas's schedule of the body: here fp32 B=32 ran
    // 0.2-0.3 us faster than at the top, 0.6 than with no branch and 0.8
    // than after the slot load (H100, NOTES.md v44; H200: v43 run 4).
    if constexpr (G::wide)
      if (lp.lookahead > 0) prefetch_ahead<G>(lp);
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      if constexpr (S == dtype::f32) {
#pragma unroll
        for (int i = 0; i < NK; ++i) s[r][i] = float_to_bits(fmaf(bits_to_float(s[r][i]), d, unpack(kw, i) * uk[r]));
      } else {
#pragma unroll
        for (int i = 0; i < NK; i += 2) {
          const float lo = fmaf(tile_elem<S, W>(s[r], i), d, unpack(kw, i) * uk[r]);
          const float hi = fmaf(tile_elem<S, W>(s[r], i + 1), d, unpack(kw, i + 1) * uk[r]);
          s[r][i >> 1] = pack_halves<S>(lo, hi);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c)
        if (row_value(r) < V)
          store16(dst + (int64_t(row_value(r)) * row_stride + (c * LK + kl) * VEC) * ES,
                  u32x4{s[r][4 * c], s[r][4 * c + 1], s[r][4 * c + 2], s[r][4 * c + 3]});
  }
}

}  // namespace dk::gpu::decode_detail
