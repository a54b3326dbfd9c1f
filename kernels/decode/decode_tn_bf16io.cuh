// decode_tn_bf16io_body: decode_mode::tn_bf16io, T = 2..16 tokens per
// sequence (speculative / MTP verification) with bf16 q, k, v and output,
// K-last state (fp32, bf16 or fp16), gate none or scalar (per key: tn_per_key,
// below), K = 64 or 128.
// The blocks and sums of decode_t1_bf16io_body: one warp per block, a thread
// holds rows x keys of the state (16 lanes x 8 keys x 4 rows at K = 128), the
// x and y of its rows reduce-scattered over the row's lanes. What T > 1 adds:
// - the tile stays in fp32 registers across the tokens: 16-bit state is
//   widened once at the load and rounded only where it is stored, as in the
//   general body;
// - the per-token scalars are loaded and finished once, one token per lane
//   (decay and beta of all tokens at the same time), v of all tokens up front,
//   and token t + 1's q and k are loaded while token t is computed;
// - the state goes out once at the end, or after every token to its per-token
//   slot (a -1 or out-of-range per-token slot skips that token's store).
// Per token, with d the decay and raw k, q (rk, rq: the l2-norm factors, rq
// carrying the scale): x = S^T k, y = S^T q, u = beta (v - d rk x),
// o = d rq y + u (rk rq k.q), S = d S + k (rk u)^T.
// The tile s is held as S = c s (c = tile_scale, the product of the decays so
// far), so that a token's update is one FMA per element, s += k (rk u / c),
// not a scale and an FMA; c goes into s when it falls under kFoldBelow (s
// stays within 2^20 of S) and at every store.
// decode_mode::tn_per_key (per-key gates, KDA; G::tn_per_key): a decay d_a per
// key, S = S diag(d) + k (rk u)^T with the tile holding S itself (tile_scale
// stays 1): the sums take d k and d q, the update is s = d_a s + k_a (rk u).
// Held apart per key as the scalar decay is, B=128 took 3-8 % longer
// (NOTES.md v30 run 2). The decays come as in the T = 1 bodies (key_decays),
// token t + 1's gate words loaded during token t.
#pragma once

namespace dk::gpu::decode_detail {

template <class G, dtype S>
DK_DEVICE void decode_tn_bf16io_body(const launch_params& lp) {
  constexpr int LK = G::lanes_k, LV = G::lanes_v, VEC = G::vec, ES = G::esize;
  constexpr int NR = G::shape.rows, NC = G::shape.vec_chunks;
  constexpr int NK = NC * VEC;  // keys per thread
  constexpr int KW = NK / 2;    // bf16 q or k words per thread
  constexpr int M = 2 * NR;     // x and y of each row
  constexpr int OFF_T = LK / M;
  constexpr int RW = NR * LV;                         // rows per warp
  constexpr int NVW = 16 * (RW / 2) / kWarpSize;      // v words per lane, for up to 16 tokens
  static_assert(G::k_last && tuning::bf16io_tile_fits(G::shape), "tn_bf16io: 2 * rows must fit in lanes_k");
  static_assert((M & (M - 1)) == 0, "tn_bf16io: rows per thread are a power of two");
  static_assert(NK == 8, "tn_bf16io: 8 keys per thread (the fp32 tile is NR x 8 registers)");
  constexpr bool PK = G::tn_per_key;

  const decode_problem& p = lp.p;
  const int lane = int(threadIdx.x) % kWarpSize;
  const int kl = lane % LK, vl = lane / LK;
  const block_place<G::rotated> at(lp);
  const int64_t b = at.b;
  const int h = at.h, V = p.dv, T = p.tokens;
  const int vw = at.tile * lp.v_tile;  // the warp's first value (one warp per block)
  auto row_value = [&](int r) { return vw + r * LV + vl; };
  const int m = kl / OFF_T, mj = m >> 1;
  const bool holds_y = (m & 1) != 0;
  const bool writes_row = !holds_y && kl % OFF_T == 0;  // one lane per row stores the output
  const int my_row = mj * LV + vl;  // the row this lane finishes, within the warp's RW
  const int my_value = vw + my_row;

  // q and k go token by token (one token ahead, below). The per-token scalars
  // are spread over the lanes instead: lane t < T loads token t's beta, gate and
  // per-token slot and computes its decay and beta once, for every token at
  // once, and words lane + 32 i of the warp's v (word t RW / 2 + j: rows 2 j,
  // 2 j + 1 of token t) are loaded up front; a token takes them by shuffles.
  const int64_t slot = slot_of<G>(p, b);
  const char* const qp = static_cast<const char*>(p.q.data) + (b * p.q.stride[0] + at.qk_head * p.q.stride[2]) * 2;
  const char* const kp = static_cast<const char*>(p.k.data) + (b * p.k.stride[0] + at.qk_head * p.k.stride[2]) * 2;
  const int64_t q_step = p.q.stride[1] * 2, k_step = p.k.stride[1] * 2;
  uint32_t qw[KW], kw[KW];
  load_qk_words<NC, LK, VEC>(qp, kp, kl, qw, kw);
  const bool per_token = p.token_indices.data != nullptr;
  lane_token_scalars tok;
  tok.issue(p, b, h, lane);
  uint32_t v_words[NVW];
  {
    const char* const vp = static_cast<const char*>(p.v.data) + (b * p.v.stride[0] + h * p.v.stride[2] + vw) * 2;
#pragma unroll
    for (int i = 0; i < NVW; ++i) {
      const int w = lane + i * kWarpSize, t = w / (RW / 2), row = 2 * (w % (RW / 2));
      v_words[i] = 0u;
      if (t < T && vw + row < V) v_words[i] = *reinterpret_cast<const uint32_t*>(vp + (t * p.v.stride[1] + row) * 2);
    }
  }
  uint16_t* const out = static_cast<uint16_t*>(const_cast<void*>(p.out.data)) + (b * p.out.stride[0] + h * p.out.stride[2]);
  const int64_t store_slot =
      per_token ? -1 : p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0]) : slot;

  // Padding (slot -1 or out of range): zero outputs, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {
    if (writes_row && my_value < V)
      for (int t = 0; t < T; ++t) out[t * p.out.stride[1] + my_value] = 0;
    return;
  }

  // The tile, widened to fp32: row r, keys (c * LK + kl) * VEC + e at s[r][c * VEC + e].
  // Byte offsets: the lane's own part once (its first row and keys), the rest
  // warp-uniform, so that no per-lane address of each row is kept.
  const int64_t lane_at = (int64_t(h) * p.pool.stride[1] + int64_t(row_value(0)) * p.pool.stride[2] + kl * VEC) * ES;
  const int64_t row_step = int64_t(LV) * p.pool.stride[2] * ES;
  const int64_t slot_step = p.pool.stride[0] * ES;
  auto tile_at = [&](int64_t sl, int r, int c) {
    return sl * slot_step + lane_at + r * row_step + c * (LK * VEC * ES);
  };
  const char* const pool = static_cast<const char*>(p.pool.data);
  float s[NR][NK];
#pragma unroll
  for (int r = 0; r < NR; ++r)
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      u32x4 x{0u, 0u, 0u, 0u};
      if (row_value(r) < V) x = load16(pool + tile_at(slot, r, c));
      const uint32_t w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
      for (int e = 0; e < VEC; ++e) s[r][c * VEC + e] = tile_elem<S, 4>(w, e);
    }
  auto store_tile = [&](int64_t sl, float scale) {  // stores scale * s
    char* const base = const_cast<char*>(pool);
#pragma unroll
    for (int r = 0; r < NR; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if constexpr (S == dtype::f32) w[j] = float_to_bits(scale * s[r][c * VEC + j]);
          else w[j] = pack_halves<S>(scale * s[r][c * VEC + 2 * j], scale * s[r][c * VEC + 2 * j + 1]);
        }
        if (row_value(r) < V) store16(base + tile_at(sl, r, c), u32x4{w[0], w[1], w[2], w[3]});
      }
  };

  // This lane's token: its decay and beta (computed while the tile is in flight).
  // Per key: token 0's gate words of the thread's keys (after the tile's loads,
  // as the T = 1 bodies), with dt_bias and A_log.
  auto key_of = [&](int a) { return bf16io_key<LK, VEC>(kl, a); };
  [[maybe_unused]] key_decays<PK ? NK : 1, LV> decays;
  if constexpr (PK) decays.issue(p, b, h, vl, key_of);
  tok.finish(p);

  auto key = [](const uint32_t(&w)[KW], int i) { return tile_elem<dtype::bf16, KW>(w, i); };
  constexpr float kFoldBelow = 0x1p-20f;
  float tile_scale = 1.f;  // S = tile_scale * s
  const char *q_next = qp, *k_next = kp;  // running pointers: no 64-bit products per token
  uint16_t* out_t = out + my_value;
  for (int t = 0; t < T; ++t) {
    uint32_t qn[KW], kn[KW];  // the next token's q and k, in flight during this one
    q_next += q_step, k_next += k_step;
    if (t + 1 < T) load_qk_words<NC, LK, VEC>(q_next, k_next, kl, qn, kn);
    // Per key: this token's decays, and the next token's gate words in flight.
    [[maybe_unused]] float dkey[PK ? NK : 1];
    if constexpr (PK) {
      decays.finish(p, [&](int o) { return o * LK + kl; }, dkey);
      if (t + 1 < T) decays.issue_token_gates(p, b, t + 1, h, vl, key_of);
    }
    // The keys' k and q as the sums take them (per key: with their decays).
    auto k_sum = [&](int i) {
      if constexpr (PK) return key(kw, i) * dkey[i];
      else return key(kw, i);
    };
    auto q_sum = [&](int i) {
      if constexpr (PK) return key(qw, i) * dkey[i];
      else return key(qw, i);
    };

    float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
    for (int i = 0; i < NK; ++i) {
      const float ki = key(kw, i), qi = key(qw, i);
      kk = fmaf(ki, ki, kk);
      qq = fmaf(qi, qi, qq);
      kq = fmaf(ki, qi, kq);
    }
    float a[M];
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      float x = 0.f, y = 0.f;
#pragma unroll
      for (int i = 0; i < NK; ++i) {
        x = fmaf(s[r][i], k_sum(i), x);
        y = fmaf(s[r][i], q_sum(i), y);
      }
      a[2 * r] = x;
      a[2 * r + 1] = y;
    }
    finish_qk_sums<LK>(p, kk, qq, kq);
    float x, y;
    reduce_scatter_xy<LK, M>(a, kl, holds_y, x, y);

    const float d = PK ? 1.f : tok.decay_of_token(t), beta = tok.beta_of_token(t);
    const int vword = t * (RW / 2) + (my_row >> 1);
    uint32_t vbits = 0u;
#pragma unroll
    for (int i = 0; i < NVW; ++i) {
      const uint32_t w = uint32_t(shfl(int(v_words[i]), vword % kWarpSize));
      if (vword / kWarpSize == i) vbits = w;
    }
    const float v = bits_to_float((my_row & 1) ? (vbits & 0xffff0000u) : (vbits << 16));
    float rk, rq;
    l2norm_factors(p.r.qk_l2norm, p.r.scale, kk, qq, rk, rq);
    tile_scale *= d;  // x, y came from s: d times the true ones is tile_scale x, y
    const float u = beta * (v - tile_scale * rk * x);
    if (writes_row && my_value < V)
      *out_t = float_to_bf16_bits(fmaf(u, kq * rk * rq, tile_scale * rq * y));
    out_t += p.out.stride[1];
    if (!PK && tile_scale < kFoldBelow) {  // the same on every lane
#pragma unroll
      for (int r = 0; r < NR; ++r)
#pragma unroll
        for (int i = 0; i < NK; ++i) s[r][i] *= tile_scale;
      tile_scale = 1.f;
    }
    const float uk_mine = u * rk / tile_scale;
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      const float uk = shfl(uk_mine, vl * LK + 2 * r * OFF_T);
#pragma unroll
      for (int i = 0; i < NK; ++i) {
        if constexpr (PK) s[r][i] = fmaf(s[r][i], dkey[i], key(kw, i) * uk);
        else s[r][i] = fmaf(key(kw, i), uk, s[r][i]);
      }
    }
    if (per_token) {
      const int64_t sl = tok.slot_of_token(t);
      if (sl >= 0 && sl < p.pool_slots) store_tile(sl, tile_scale);
    }
    if (t + 1 < T) {
#pragma unroll
      for (int i = 0; i < KW; ++i) qw[i] = qn[i], kw[i] = kn[i];
    }
  }
  if (store_slot >= 0 && store_slot < p.pool_slots) store_tile(store_slot, tile_scale);
}

}  // namespace dk::gpu::decode_detail
