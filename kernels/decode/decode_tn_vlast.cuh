// decode_tn_vlast_body: decode_mode::tn_vlast, T = 2..16 tokens per sequence
// (speculative / MTP verification) on V-last state (fp32, bf16 or fp16), bf16
// q, k, v and output, gate none or scalar, K = 64 or 128.
// The blocks of the t1 V-last body: warps_k warps split K (a thread holds
// `rows` keys x one 16-byte vector of values, lanes_k lanes along K), their
// sums finished through shared memory, or with one warp along K (the Hopper
// table's choice but for per-key fp32 state) within the warp, no barrier
// (fp32 state: reduce-scattered over the lanes; 16-bit: one scatter stage, then
// butterflies).
// What T > 1 adds, as in decode_tn_bf16io_body:
// - the tile stays in fp32 registers across the tokens (16-bit state widened
//   at the load, rounded only where it is stored, as in the general body);
// - the per-token scalars are loaded and finished once, one token per lane,
//   and token t + 1's q, k and v are loaded while token t is computed;
// - with several warps along K their partial sums of token t go to half
//   t % 2 of the shared memory, so one barrier per token suffices (a warp
//   writes token t + 1's half only after every warp has read token t - 1's,
//   before token t's barrier);
// - the state goes out once at the end, or after every token to its per-token
//   slot (a -1 or out-of-range per-token slot skips that token's store).
// Per token, with d the decay and raw k, q (rk, rq: the l2-norm factors, rq
// carrying the scale): x = S^T k, y = S^T q, u = beta (v - d rk x),
// o = d rq y + u (rk rq k.q), S = d S + k (rk u)^T.
// decode_mode::tn_per_key on V-last state (per-key gates, KDA; G::tn_per_key):
// a decay d_a per key, S = diag(d) S + k (rk u)^T: the sums take d k and d q,
// the update is s = d_a s + k_a (rk u). The decays come as in the T = 1
// bodies (key_decays: the lanes along V that hold the same keys share them),
// token t + 1's gate words loaded during token t.
#pragma once

namespace dk::gpu::decode_detail {

template <class G, dtype S>
DK_DEVICE void decode_tn_vlast_body(const launch_params& lp) {
  constexpr int LK = G::lanes_k, VEC = G::vec, ES = G::esize;  // lanes along V: G::lanes_v
  constexpr int NR = G::shape.rows;  // keys per thread
  constexpr int WK = G::warps_k;
  static_assert(!G::k_last && G::shape.vec_chunks == 1, "tn_vlast: V-last, one 16-byte vector of values per thread");
  static_assert(NR == 4 || NR == 8, "tn_vlast: runs of 4 or 8 keys");
  constexpr bool PK = G::tn_per_key;

  const decode_problem& p = lp.p;
  const int tid = int(threadIdx.x);
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int kl = lane % LK, vl = lane / LK;
  const int kwp = warp % WK, wv = warp / WK;  // warp's place along K and along V
  const block_place<G::rotated> at(lp);
  const int64_t b = at.b;
  const int h = at.h, V = p.dv, T = p.tokens;
  const int v0 = at.tile * lp.v_tile;                   // block's first value
  const int my_v = v0 + wv * G::v_per_warp + vl * VEC;  // this thread's first value
  const bool has_v = my_v < V;                          // V is a multiple of 16: whole vectors
  const int key0 = (kwp * LK + kl) * NR;                // this thread's first key
  const bool writes_out = kl == 0 && kwp == 0;          // one thread per vector stores the output
  // fp32 state, one warp along K (RS): the sums are reduce-scattered as in the
  // K-last bodies (value m = 2 e + (y ? 1 : 0) ends at lanes kl / OFF_T == m),
  // about 2 VEC shuffles instead of 2 VEC log2(LK) in butterflies; lane kl then
  // finishes value e_mine, one lane of each stores its output, and rk u comes
  // back by VEC shuffles (K = 128, T = 4, B=32 with PDL 71.00 -> 67.34 us). The
  // 16-bit tile (VEC 8, 32 lanes at K = 128) lost 12 % so (NOTES.md v33 run 2).
  constexpr bool RS = WK == 1 && ES == 4 && 2 * VEC <= LK;
  // Otherwise with one warp along K (PS): PSN stages of the same scatter (the
  // table's tn_vlast_b16_scatter_stages; each halves the sums a lane holds),
  // then butterflies over the LK >> PSN lanes left: a lane ends with x and y of
  // PG = VEC >> PSN values (group grp), finishes those, and takes rk u of the
  // others by shuffles.
  constexpr int PSN = (WK == 1 && !RS) ? G::table::tn_vlast_b16_scatter_stages : 0;
  constexpr bool PS = PSN > 0 && (VEC >> PSN) >= 1 && (LK >> PSN) >= 1;
  constexpr int PG = PS ? VEC >> PSN : VEC, PGL = PS ? LK >> PSN : LK;
  const int grp = kl / PGL;
  constexpr int OFF_T = RS ? LK / (2 * VEC) : 1;
  const int e_mine = kl / (2 * OFF_T);
  const bool holds_y = ((kl / OFF_T) & 1) != 0;
  const bool writes_mine = kl % (2 * OFF_T) == 0;

  auto&& q_io = io_operand<G>(p.q);
  auto&& k_io = io_operand<G>(p.k);
  auto&& v_io = io_operand<G>(p.v);
  auto&& out = io_operand<G>(p.out);
  const int64_t slot = slot_of<G>(p, b);
  const int64_t qb = b * p.q.stride[0] + at.qk_head * p.q.stride[2] + key0;
  const int64_t kb = b * p.k.stride[0] + at.qk_head * p.k.stride[2] + key0;
  const int64_t vb = b * p.v.stride[0] + h * p.v.stride[2] + my_v;
  uint32_t qw[NR], kw[NR], vw[VEC];
  auto load_token = [&](int t, uint32_t(&q)[NR], uint32_t(&k)[NR], uint32_t(&v)[VEC]) {
    load_run<NR>(q_io, qb + t * p.q.stride[1], true, q);
    load_run<NR>(k_io, kb + t * p.k.stride[1], true, k);
    load_run<VEC>(v_io, vb + t * p.v.stride[1], has_v, v);
  };
  load_token(0, qw, kw, vw);
  // Lane t < T: token t's beta, gate and per-token slot (every warp, once).
  const bool per_token = p.token_indices.data != nullptr;
  lane_token_scalars tok;
  tok.issue(p, b, h, lane);
  const int64_t store_slot =
      per_token ? -1 : p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0]) : slot;
  const int64_t out_b = b * out.stride[0] + h * out.stride[2] + my_v;

  // Padding (slot -1 or out of range): zero outputs, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {
    if (writes_out && has_v) {
      float z[VEC];
#pragma unroll
      for (int e = 0; e < VEC; ++e) z[e] = 0.f;
      for (int t = 0; t < T; ++t) store_run<VEC>(out, out_b + t * out.stride[1], z);
    }
    return;
  }

  // The tile, widened to fp32: key key0 + r, values my_v + e at s[r][e].
  const int64_t lane_at = (int64_t(h) * p.pool.stride[1] + int64_t(key0) * p.pool.stride[2] + my_v) * ES;
  const int64_t row_step = p.pool.stride[2] * ES, slot_step = p.pool.stride[0] * ES;
  const char* const pool = static_cast<const char*>(p.pool.data);
  float s[NR][VEC];
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    u32x4 x{0u, 0u, 0u, 0u};
    if (has_v) x = load16(pool + slot * slot_step + lane_at + r * row_step);
    const uint32_t w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int e = 0; e < VEC; ++e) s[r][e] = tile_elem<S, 4>(w, e);
  }
  auto store_tile = [&](int64_t sl) {
    if (!has_v) return;
    char* const base = const_cast<char*>(pool) + sl * slot_step + lane_at;
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      uint32_t w[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if constexpr (S == dtype::f32) w[j] = float_to_bits(s[r][j]);
        else w[j] = pack_halves<S>(s[r][2 * j], s[r][2 * j + 1]);
      }
      store16(base + r * row_step, u32x4{w[0], w[1], w[2], w[3]});
    }
  };

  // This lane's token: its decay and beta (computed while the tile is in flight).
  // Per key: token 0's gate words of the thread's keys (after the tile's loads,
  // as the T = 1 bodies), with dt_bias and A_log.
  auto key_of = [&](int a) { return key0 + a; };
  [[maybe_unused]] key_decays<PK ? NR : 1, G::lanes_v> decays;
  if constexpr (PK) decays.issue(p, b, h, vl, key_of);
  tok.finish(p);

  [[maybe_unused]] float* red = nullptr;  // WK > 1: two halves of WK x (x, y of v_tile values; k.k, q.q, k.q, -)
  if constexpr (WK > 1) {
    extern __shared__ f32x4 smem_vec[];
    red = reinterpret_cast<float*>(smem_vec);
  }
  const int vt = lp.v_tile, half = WK * (2 * vt + 4);
  const int my_lv = my_v - v0;  // this thread's first value within the block's tile
  for (int t = 0; t < T; ++t) {
    uint32_t qn[NR], kn[NR], vn[VEC];  // the next token's, in flight during this one
    if (t + 1 < T) load_token(t + 1, qn, kn, vn);
    // Per key: this token's decays, and the next token's gate words in flight.
    [[maybe_unused]] float dkey[PK ? NR : 1];
    if constexpr (PK) {
      decays.finish(p, [&](int o) { return o * LK + kl; }, dkey);
      if (t + 1 < T) decays.issue_token_gates(p, b, t + 1, h, vl, key_of);
    }
    float kf[NR], qf[NR], vf[VEC];
    run_to_float<NR>(kw, k_io.type, kf);
    run_to_float<NR>(qw, q_io.type, qf);
    run_to_float<VEC>(vw, v_io.type, vf);
    // The keys' k and q as the sums take them (per key: with their decays).
    auto k_sum = [&](int r) {
      if constexpr (PK) return kf[r] * dkey[r];
      else return kf[r];
    };
    auto q_sum = [&](int r) {
      if constexpr (PK) return qf[r] * dkey[r];
      else return qf[r];
    };
    float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      kk = fmaf(kf[r], kf[r], kk);
      qq = fmaf(qf[r], qf[r], qq);
      kq = fmaf(kf[r], qf[r], kq);
    }
    // RS: x and y of the thread's VEC values reduce-scattered over the LK lanes
    // (x[0], y[0]: value e_mine's); PS: x[j], y[j] of value grp PG + j; else a
    // butterfly each (x[e], y[e]).
    float x[RS ? 1 : PG], y[RS ? 1 : PG];
    {
      float a[2 * VEC];
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        float xs = 0.f, ys = 0.f;
#pragma unroll
        for (int r = 0; r < NR; ++r) {
          xs = fmaf(s[r][e], k_sum(r), xs);
          ys = fmaf(s[r][e], q_sum(r), ys);
        }
        a[2 * e] = xs;
        a[2 * e + 1] = ys;
      }
      if constexpr (RS) {
        reduce_scatter_xy<LK, 2 * VEC>(a, kl, holds_y, x[0], y[0]);
      } else if constexpr (PS) {
        scatter_stages<LK, 2 * VEC, PSN>(a, kl);
#pragma unroll
        for (int j = 0; j < PG; ++j) {
          x[j] = lanes_sum<PGL>(a[2 * j]);
          y[j] = lanes_sum<PGL>(a[2 * j + 1]);
        }
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          x[e] = lanes_sum<LK>(a[2 * e]);
          y[e] = lanes_sum<LK>(a[2 * e + 1]);
        }
      }
    }
    finish_qk_sums<LK>(p, kk, qq, kq);
    if constexpr (WK > 1) {
      float* const rd = red + (t & 1) * half;
      float* const rs = rd + WK * 2 * vt;  // per warp along K: k.k, q.q, k.q, -
      if (kl == 0 && has_v) {
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          rd[(kwp * 2 + 0) * vt + my_lv + e] = x[e];
          rd[(kwp * 2 + 1) * vt + my_lv + e] = y[e];
        }
      }
      if (lane == 0 && wv == 0) {
        rs[kwp * 4 + 0] = kk;
        rs[kwp * 4 + 1] = qq;
        rs[kwp * 4 + 2] = kq;
      }
      block_sync();
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        float xs = 0.f, ys = 0.f;
        if (has_v) {
#pragma unroll
          for (int w = 0; w < WK; ++w) {
            xs += rd[(w * 2 + 0) * vt + my_lv + e];
            ys += rd[(w * 2 + 1) * vt + my_lv + e];
          }
        }
        x[e] = xs;
        y[e] = ys;
      }
      kk = qq = kq = 0.f;
#pragma unroll
      for (int w = 0; w < WK; ++w) {
        kk += rs[w * 4 + 0];
        qq += rs[w * 4 + 1];
        kq += rs[w * 4 + 2];
      }
    }
    const float d = PK ? 1.f : tok.decay_of_token(t), beta = tok.beta_of_token(t);
    float rk, rq;
    l2norm_factors(p.r.qk_l2norm, p.r.scale, kk, qq, rk, rq);
    const float dk_ = d * rk, dq = d * rq, kqn = kq * rk * rq;
    float uk[VEC];
    if constexpr (RS) {  // u and the output of value e_mine, then rk u of every value by shuffles
      float v_mine = vf[0];
#pragma unroll
      for (int e = 1; e < VEC; ++e) v_mine = e == e_mine ? vf[e] : v_mine;
      const float u = beta * (v_mine - dk_ * x[0]);
      if (writes_mine && has_v) store_f(out, out_b + t * out.stride[1] + e_mine, fmaf(u, kqn, dq * y[0]));
      const float uk_mine = u * rk;
#pragma unroll
      for (int e = 0; e < VEC; ++e) uk[e] = shfl(uk_mine, vl * LK + e * 2 * OFF_T);
    } else if constexpr (PS) {  // u and the output of the group's PG values, rk u of the others by shuffles
      float o[PG], ukm[PG];
#pragma unroll
      for (int j = 0; j < PG; ++j) {
        float v_sel = vf[j];
#pragma unroll
        for (int g = 1; g < (VEC / PG); ++g) v_sel = g == grp ? vf[g * PG + j] : v_sel;
        const float u = beta * (v_sel - dk_ * x[j]);
        o[j] = fmaf(u, kqn, dq * y[j]);
        ukm[j] = u * rk;
      }
      if (kl % PGL == 0 && has_v) {
#pragma unroll
        for (int j = 0; j < PG; ++j) store_f(out, out_b + t * out.stride[1] + grp * PG + j, o[j]);
      }
#pragma unroll
      for (int e = 0; e < VEC; ++e) uk[e] = shfl(ukm[e % PG], vl * LK + (e / PG) * PGL + kl % PGL);
    } else {
      float o[VEC];
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const float u = beta * (vf[e] - dk_ * x[e]);
        o[e] = fmaf(u, kqn, dq * y[e]);
        uk[e] = u * rk;
      }
      if (writes_out && has_v) store_run<VEC>(out, out_b + t * out.stride[1], o);
    }
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      float dr = d;  // per key: key r's own decay
      if constexpr (PK) dr = dkey[r];
#pragma unroll
      for (int e = 0; e < VEC; ++e) s[r][e] = fmaf(s[r][e], dr, kf[r] * uk[e]);
    }
    if (per_token) {
      const int64_t sl = tok.slot_of_token(t);
      if (sl >= 0 && sl < p.pool_slots) store_tile(sl);
    }
    if (t + 1 < T) {
#pragma unroll
      for (int i = 0; i < NR; ++i) qw[i] = qn[i], kw[i] = kn[i];
#pragma unroll
      for (int i = 0; i < VEC; ++i) vw[i] = vn[i];
    }
  }
  if (store_slot >= 0 && store_slot < p.pool_slots) store_tile(store_slot);
}

}  // namespace dk::gpu::decode_detail
