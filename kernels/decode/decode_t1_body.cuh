// decode_t1_body: the T = 1 decode body (gate none/scalar, K = 64/128; also
// the V-last bf16-I/O instances and, t1_(small_)per_key and V-last
// t1_per_key_smem, per-key gates), and the shared memory of its V-last blocks.
#pragma once
#include "decode_geometry.cuh"
#include "decode_operands.cuh"
#include "decode_t1_helpers.cuh"

namespace dk::gpu::decode_detail {

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
// Per-key gates (G::per_key: d_a for key a; head_gate then gives d = 1): q and
// k are multiplied by d_a for the sums (y with d q, x with d k: the decay of
// S folded into them) and the update is S_new[., a] = d_a S[., a] + k_a (rk u).
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
  // t1_small's one-wave grids issue the gate (per-key: the keys' gate words)
  // here (B=1 in graph 4.23 us against 4.38 after the tile); the other grids
  // after the tile (NOTES.md v12).
  head_gate gate;
  [[maybe_unused]] key_decays<G::per_key ? NK : 1, LV> decays;
  auto decay_key = [&](int a) { return KL ? key0(a / KRUN) + a % KRUN : key0(0) + a; };
  if constexpr (G::small) {
    gate.issue(p, b, h);
    if constexpr (G::per_key) decays.issue(p, b, h, vl, decay_key);
  }
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
  auto row_of = [&](int r) { return KL ? krow_value(r) : key0(0) + r; };     // pool row
  auto col_of = [&](int c) { return KL ? key0(c) : vchunk_value(c); };      // first column
  // Byte offset of vector (r, c) in a head: one per-lane part (its first row and
  // column) plus warp-uniform row and column steps, so that no per-lane address of
  // every vector stays live from the loads to the stores (B=1 in graph 4.28 ->
  // 4.15 us, V-last bf16 state B=512 304.8 -> 296.0). The V-last register tile keeps
  // an offset per vector: with the steps its bf16-state B=32 lost 5 % (NOTES.md v24 run 4).
  const int64_t lane_off = (int64_t(row_of(0)) * pool.stride[2] + col_of(0)) * ES;
  const int64_t row_step = int64_t(KL ? LV : 1) * pool.stride[2] * ES;
  constexpr int col_step = (KL ? LK : LV) * VEC * ES;
  auto vec_off = [&](int r, int c) -> int64_t {
    if constexpr (!KL && !G::smem_state) return (int64_t(row_of(r)) * pool.stride[2] + col_of(c)) * ES;
    else return lane_off + r * row_step + c * col_step;
  };
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
      return tile_source{in_range(r, c), head + vec_off(r, c)};
    });
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        u32x4 x{0u, 0u, 0u, 0u};
        if (in_range(r, c)) {
          const char* at = head + vec_off(r, c);
          x = G::stream_state ? load16_stream(at) : load16(at);
        }
        s[r][4 * c] = x.x, s[r][4 * c + 1] = x.y, s[r][4 * c + 2] = x.z, s[r][4 * c + 3] = x.w;
      }
  }

  // The gate's loads after the tile's, as in decode_t1_bf16io_body.
  if constexpr (!G::small) {
    gate.issue(p, b, h);
    // Per-key gates: their loads after the tile's as well (key_decays).
    if constexpr (G::per_key) decays.issue(p, b, h, vl, decay_key);
  }
  // V-last shared-memory grids of few waves: the tile one wave on into L2
  // (shape_of sets lp.lookahead from the table's t1_vlast_smem_*_lookahead_waves).
  if constexpr (SM)
    if (lp.lookahead > 0) prefetch_ahead<G>(lp);

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
  [[maybe_unused]] float dkey[G::per_key ? NK : 1];  // per-key decays
  if constexpr (G::per_key) {
    decays.finish(p, [&](int o) { return G::v_major_lanes ? kl * LV + o : o * LK + kl; }, dkey);
#pragma unroll
    for (int a = 0; a < NK; ++a) qf[a] *= dkey[a];
  }
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
      // Per-key gates (V-last: one decay per key row): q carries it already, k here.
      const float kx = G::per_key ? kf[r] * dkey[G::per_key ? r : 0] : kf[r];
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        uint32_t w[4];
        read_slot(mine, r * NC + c, w);
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const float st = tile_elem<S, 4>(w, e);
          y[c * VEC + e] = fmaf(st, qf[r], y[c * VEC + e]);
          x[c * VEC + e] = fmaf(st, kx, x[c * VEC + e]);
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
    // Per-key gates: q is dead; its registers take the decayed k for x.
    if constexpr (G::per_key) {
#pragma unroll
      for (int a = 0; a < NK; ++a) qf[a] = kf[a] * dkey[a];
    }
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int i = 0; i < NCOL; ++i) {
        const int key = KL ? i : r, val = KL ? r : i;
        x[val] = fmaf(tile_elem<S, W>(s[r], i), G::per_key ? qf[key] : kf[key], x[val]);
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
  // l2norm_factors written out: through the helper, ptxas allocates this body's
  // K-last instances differently (same PTX instructions, renumbered registers).
  float rk = 1.f, rq = p.r.scale;
  if (p.r.qk_l2norm) {
    rk = rsqrtf(kk + kQkNormEps);
    rq *= rsqrtf(qq + kQkNormEps);
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
        const float dr = G::per_key ? dkey[G::per_key ? r : 0] : d;  // the key row's decay
        const u32x4 n = decay_add<S>(w, [&](int) { return dr; }, [&](int e) { return kf[r] * uk[c * VEC + e]; });
        if (in_range(r, c)) store16(dst + vec_off(r, c), n);
      }
  } else {
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      if constexpr (S == dtype::f32) {
#pragma unroll
        for (int i = 0; i < NCOL; ++i) {
          const int key = KL ? i : r, val = KL ? r : i;
          s[r][i] = float_to_bits(fmaf(bits_to_float(s[r][i]), G::per_key ? dkey[key] : d, kf[key] * uk[val]));
        }
      } else {
#pragma unroll
        for (int i = 0; i < NCOL; i += 2) {
          const int k0 = KL ? i : r, k1 = KL ? i + 1 : r, v0 = KL ? r : i, v1 = KL ? r : i + 1;
          const float lo = fmaf(tile_elem<S, W>(s[r], i), G::per_key ? dkey[k0] : d, kf[k0] * uk[v0]);
          const float hi = fmaf(tile_elem<S, W>(s[r], i + 1), G::per_key ? dkey[k1] : d, kf[k1] * uk[v1]);
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
          char* at = dst + vec_off(r, c);
          const u32x4 x{s[r][4 * c], s[r][4 * c + 1], s[r][4 * c + 2], s[r][4 * c + 3]};
          if (G::stream_state) store16_stream(at, x);
          else store16(at, x);
        }
  }
}

}  // namespace dk::gpu::decode_detail
