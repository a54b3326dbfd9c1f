// decode_tn_mma_body: decode_mode::tn_mma, T = 2..4 tokens per sequence (and
// decode_mode::tn_mma_chunked, T = 5..16 in chunks of 4, below) with
// bf16 q, k, v and output, state of any dtype (fp32, bf16 or fp16), K-last or
// (where the table's tn_mma_vlast is set) V-last, gate none or scalar, K = 64
// or 128, on tensor cores (mma.sync m16n8k8 tf32, NVIDIA sm_80+).
// A warp holds 16 values x K keys: lane 4 g + c the rows g and g + 8 (g = lane
// / 4) of the m16n8 accumulator of an mma per 8-key n-tile, at K / 4 keys.
// K-last: rows g, g + 8 are values g, g + 8 and a lane's keys run in 16-byte
// vectors (one warp per block; per-key gates: tn_mma_per_key_warps_v); V-last: rows g, g + 8 are values 2 g, 2 g + 1,
// read as one 8-byte (fp32) or 4-byte (16-bit) run per key (G::shape's warps
// along V per block, 16 values each, so that a block reads longer runs of each
// key row). The T tokens are done at once (the WY form of the recurrence over
// a chunk of T), where tn_bf16io and tn_vlast run them one by one:
// - X = S^T [k_0 .. k_3, q_0 .. q_3] (16 rows x 8) and the Gram matrix of the
//   raw k and q by mma (fp32 state split into tf32 hi + lo: ~2^-21 relative;
//   16-bit state and the bf16 k, q are exact in tf32);
// - per row, with D_t = d_0 .. d_t and P(j, t) = d_{j+1} .. d_t:
//     x_t = D_t rk_t X_t + sum_{j<t} P(j, t) rk_j rk_t (k_j.k_t) u_j,
//     u_t = beta_t (v_t - x_t),
//     o_t = D_t rq_t Y_t + sum_{j<=t} P(j, t) rk_j rq_t (k_j.q_t) u_j;
// - the state after token t, D_t S + sum_{j<=t} P(j, t) rk_j k_j u_j^T, by one
//   mma per n-tile (u split hi / lo over the 8 k-columns), from the tile as
//   loaded: once for the final slot, or for every token's per-token slot.
// T = 4 on the H200 in graph with PDL (NOTES.md v34 run 3): fp32 state B=32
// 41.48 us, B=128 152.40; bf16 state 24.85, 90.50 (tn_bf16io: 52.68, 195.55;
// 44.45, 162.89).
// Per-key gates (decode_mode::tn_mma_per_key, KDA): the decays go into the B
// operands and the sums (decode_tn_mma_keys.cuh), which then stand where D_t,
// P(j, t) and the Gram matrix stand above; the B operands, no longer bf16,
// are split into tf32 hi + lo as well.
// tn_mma_chunked: chunk after chunk of 4 tokens, the state after each chunk
// computed into the tile registers (held as fp32 words, 16-bit state too)
// instead of being stored; T = 8 on the H200 with PDL (NOTES.md v37): fp32
// B=32 55.27 us, bf16 45.91 (tn_bf16io: 72.38, 69.48). tn_mma_per_key_chunked:
// the same chunks with per-key gates, every chunk's stage written at once
// before the first, behind one barrier; Kimi Linear T = 8 with PDL (NOTES.md
// v40): fp32 B=32 81.18 us, bf16 71.40 (tn_per_key, v38: 114.80, 112.16).
#pragma once
#include "decode_tn_mma_keys.cuh"

namespace dk::gpu::decode_detail {

#if DK_HAS_MMA_SYNC
// d += a (16 x 8, row) * b (8 x 8, col), tf32 inputs (fp32 bits, low 13 ignored).
DK_DEVICE void mma_tf32(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                        uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
DK_DEVICE uint32_t tf32_bits(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
// x as tf32 hi + lo (hi exact in tf32, lo = x - hi).
DK_DEVICE void tf32_split(float x, uint32_t& hi, uint32_t& lo) {
  hi = tf32_bits(x);
  lo = float_to_bits(x - bits_to_float(hi));
}
#endif

template <class G, dtype S>
DK_DEVICE void decode_tn_mma_body(const launch_params& lp) {
#if DK_HAS_MMA_SYNC
  constexpr bool KL = G::k_last;
  constexpr int ES = G::esize, K = G::k_cover;
  constexpr int NJ = K / 8;             // 8-key n-tiles
  // Column 2 c + e of n-tile j is key 4 P (j / HALF) + P c + 2 (j % HALF) + e:
  // runs of P keys a lane (K-last: the tile's 16-byte vectors; V-last: those
  // of the bf16 k and q).
  constexpr int P = tn_mma_run_keys(KL, ES);
  constexpr int HALF = P / 2;           // n-tiles per run
  constexpr int NL = K / (4 * P);       // runs per lane
  // tn_mma_chunked: T > 4 in chunks of 4 tokens, the tile held as fp32 words
  // between them (every state dtype: the state stays fp32 within a call).
  constexpr bool CH = G::mma_chunked;
  constexpr bool F32T = ES == 4 || CH;  // the tile as fp32 words (split hi / lo in the products)
  constexpr int TW = F32T ? 4 : 2;      // tile words per n-tile and lane
  constexpr int R8 = KL ? 8 : 1;        // value of row g + 8, from row g's
  constexpr int kMaxT = 4;
  // The state update's k from memory instead of by shuffles from wv (the
  // table's tn_mma_vlast_bf16_reload_k: V-last bf16 state only, see there).
  constexpr bool RELOAD_K = !KL && !CH && S == dtype::bf16 && G::table::tn_mma_vlast_bf16_reload_k;
  constexpr bool PK = G::mma_per_key;  // per-key gates: B operands and sums from the stage
  using stage_t = mma_key_stage<K, P, G::shape.max_warps_v>;
  static_assert(K == 64 || K == 128, "tn_mma: K = 64 or 128");
  static_assert(G::table::tn_mma_max_tokens <= kMaxT, "tn_mma: at most 4 tokens (the 8 mma columns: k, q)");
  static_assert(!CH || G::table::tn_mma_chunked_max_tokens <= kWarpSize, "tn_mma_chunked: a token's scalars a lane");

  const decode_problem& p = lp.p;
  const int lane = int(threadIdx.x) % kWarpSize, g = lane >> 2, c = lane & 3;
  const int warp = G::shape.max_warps_v > 1 ? int(threadIdx.x) / kWarpSize : 0;
  const block_place<G::rotated> at(lp);
  const int64_t b = at.b;
  const int h = at.h, T = p.tokens;
  const int v_warp = at.tile * lp.v_tile + warp * 16;  // V % 16 == 0: a warp is in or past V
  // Per-key gates: a warp past V still takes its part of the block's stage
  // (reading rows 0..15 as its tile, which it neither uses nor stores).
  const bool past_v = v_warp >= p.dv;
  if (!PK && past_v) return;
  const int row0 = (past_v ? 0 : v_warp) + (KL ? g : 2 * g);  // this lane's rows: row0, row0 + R8

  const int64_t slot = slot_of<G>(p, b);
  // Token t's k or q row of this head.
  auto token_keys = [&](const operand& o, int t) {
    return static_cast<const char*>(o.data) + (b * o.stride[0] + t * o.stride[1] + at.qk_head * o.stride[2]) * 2;
  };
  // Token t's k or q at the keys of quad lane cq: w[j] holds keys (n-tile j,
  // cq, 0..1) (zero past T).
  auto load_keys = [&](const operand& o, int t, int cq, uint32_t(&w)[NJ]) {
    const char* const src = token_keys(o, t);
#pragma unroll
    for (int i = 0; i < NL; ++i) {
      if constexpr (P == 4) {
        uint2 x = make_uint2(0u, 0u);
        if (t < T) x = *reinterpret_cast<const uint2*>(src + (4 * P * i + P * cq) * 2);
        w[2 * i] = x.x, w[2 * i + 1] = x.y;
      } else {
        u32x4 x{0u, 0u, 0u, 0u};
        if (t < T) x = load16(src + (4 * P * i + P * cq) * 2);
        w[4 * i] = x.x, w[4 * i + 1] = x.y, w[4 * i + 2] = x.z, w[4 * i + 3] = x.w;
      }
    }
  };
  // Vector g of [k_0 .. k_3, q_0 .. q_3] at this lane's keys (with RELOAD_K
  // dead after the first products: the state update loads k again, from L1).
  uint32_t wv[NJ];
  if constexpr (!PK) load_keys(g < 4 ? p.k : p.q, g & 3, c, wv);
  lane_token_scalars tok;
  tok.issue(p, b, h, lane);
  stage_t keys;  // per-key gates: this thread's part of the block's stage
  if constexpr (PK) keys.issue(p, b, h, at.qk_head, T);
  float v0[kMaxT], v8[kMaxT];
  const uint16_t* const vp = static_cast<const uint16_t*>(p.v.data) + (b * p.v.stride[0] + h * p.v.stride[2] + row0);
  // v of the chunk from token t0 (tn_mma: t0 = 0).
  auto load_values = [&](int t0) {
#pragma unroll
    for (int t = 0; t < kMaxT; ++t) {
      v0[t] = v8[t] = 0.f;
      if (t0 + t < T)
        v0[t] = bf16_bits_to_float(vp[(t0 + t) * p.v.stride[1]]),
        v8[t] = bf16_bits_to_float(vp[(t0 + t) * p.v.stride[1] + R8]);
    }
  };
  load_values(0);
  const int64_t store_slot =
      p.token_indices.data ? -1 : p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0]) : slot;
  uint16_t* const out = static_cast<uint16_t*>(const_cast<void*>(p.out.data)) + (b * p.out.stride[0] + h * p.out.stride[2] + row0);

  // Padding (slot -1 or out of range): zero outputs, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {  // the whole block: one sequence
    if constexpr (CH) {
      if (!past_v)
        for (int t = c; t < T; t += kMaxT) out[t * p.out.stride[1]] = 0, out[t * p.out.stride[1] + R8] = 0;
    } else {
      if (c < T && !past_v) out[c * p.out.stride[1]] = 0, out[c * p.out.stride[1] + R8] = 0;
    }
    return;
  }

  // The tile as loaded: n-tile j's elements (g, 2c), (g, 2c + 1), (g + 8, 2c),
  // (g + 8, 2c + 1) in tw[j] (16-bit: one word per row, key 2c in its low half).
  // K-last: 16-byte vectors of a row's keys; V-last: per key, rows g and g + 8
  // (values 2 g, 2 g + 1) as one 8- or 4-byte run.
  char* const pool = const_cast<char*>(static_cast<const char*>(p.pool.data));
  const int64_t head_at = int64_t(h) * p.pool.stride[1] + (KL ? int64_t(row0) * p.pool.stride[2] + P * c : row0);
  const int64_t row8 = 8 * p.pool.stride[2] * ES;  // K-last: row g + 8 from row g
  auto vec_at = [&](int64_t sl, int i) { return (sl * p.pool.stride[0] + head_at + 4 * P * i) * ES; };
  // V-last: key 2c + e of n-tile j (e = 0; e = 1 is the next key row).
  auto key_at = [&](int64_t sl, int j) {
    const int key = 4 * P * (j / HALF) + P * c + 2 * (j % HALF);
    return (sl * p.pool.stride[0] + head_at + int64_t(key) * p.pool.stride[2]) * ES;
  };
  const int64_t key_step = p.pool.stride[2] * ES;
  uint32_t tw[NJ][TW];
  // A 16-bit n-tile from its row words (row g, row g + 8): kept packed, or
  // (tn_mma_chunked) as fp32 words.
  auto set_tile16 = [&](uint32_t(&w)[TW], uint32_t r0, uint32_t r8) {
    if constexpr (F32T) {
      const uint32_t pr[2] = {r0, r8};
#pragma unroll
      for (int e = 0; e < 4; ++e) w[e] = float_to_bits(tile_elem<S, 2>(pr, e));
    } else {
      w[0] = r0, w[1] = r8;
    }
  };
  if constexpr (KL) {
#pragma unroll
    for (int i = 0; i < NL; ++i) {
      const u32x4 x0 = load16(pool + vec_at(slot, i)), x8 = load16(pool + vec_at(slot, i) + row8);
      const uint32_t w0[4] = {x0.x, x0.y, x0.z, x0.w}, w8[4] = {x8.x, x8.y, x8.z, x8.w};
#pragma unroll
      for (int m = 0; m < HALF; ++m) {
        if constexpr (ES == 4) {
          tw[HALF * i + m][0] = w0[2 * m], tw[HALF * i + m][1] = w0[2 * m + 1];
          tw[HALF * i + m][2] = w8[2 * m], tw[HALF * i + m][3] = w8[2 * m + 1];
        } else {
          set_tile16(tw[HALF * i + m], w0[m], w8[m]);
        }
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const char* const at0 = pool + key_at(slot, j);
      if constexpr (ES == 4) {
        const u32x2 e0 = load8(at0), e1 = load8(at0 + key_step);
        tw[j][0] = e0.x, tw[j][1] = e1.x, tw[j][2] = e0.y, tw[j][3] = e1.y;
      } else {  // words (row g, row g + 8) of keys 2c and 2c + 1 -> one word per row
        const uint32_t e0 = *reinterpret_cast<const uint32_t*>(at0);
        const uint32_t e1 = *reinterpret_cast<const uint32_t*>(at0 + key_step);
        set_tile16(tw[j], __byte_perm(e0, e1, 0x5410), __byte_perm(e0, e1, 0x7632));
      }
    }
  }
  // Element e of n-tile j (the order of set_tile16's).
  auto elem = [&](int j, int e) {
    if constexpr (F32T) return bits_to_float(tw[j][e]);
    else return tile_elem<S, TW>(tw[j], e);
  };
  // The tile of the block about a wave on into L2, its slot read while this
  // tile is in flight (lp.lookahead: the table's tn_mma_..._lookahead_warps;
  // the block's warps share the lines, those past V leave theirs out).
  if (lp.lookahead > 0) prefetch_ahead<G>(lp);
  // Per-key gates: the block's stage of the chunk's tokens (with per-token
  // slots, every token's state parts; else the last token's) and this lane's
  // sum. tn_mma_per_key_chunked stages every chunk's at once, chunk n's at
  // n chunk_floats, behind one barrier: a chunk's decays, B operands and sums
  // need only its k, q and gates, so the chunks then follow one another with
  // no barrier (restaging before each chunk instead took 3-7 % longer at
  // T = 8: NOTES.md v40). Warps past V take their share of the stage, then leave.
  float* key_stage = nullptr;  // the stage of the chunk being run
  float key_sum = 0.f;
  auto chunk_tokens = [&](int t0) { return CH ? min(kMaxT, T - t0) : T; };  // the tokens of the chunk from t0
  auto first_staged = [&](int TC) { return p.token_indices.data ? 0 : TC - 1; };
  const int chunk_floats = stage_t::block_floats(p.token_indices.data ? min(T, kMaxT) : 1);
  if constexpr (PK) {
    extern __shared__ f32x4 smem_vec[];
    key_stage = reinterpret_cast<float*>(smem_vec);
    if constexpr (CH) {
      for (int t0 = kMaxT; t0 < T; t0 += kMaxT) keys.prefetch(p, b, h, at.qk_head, T, t0);
      for (int t0 = 0; t0 < T; t0 += kMaxT) {
        if (t0 > 0) keys.issue(p, b, h, at.qk_head, T, t0);
        const int TC = chunk_tokens(t0);
        keys.write(p, TC, first_staged(TC), key_stage + (t0 / kMaxT) * chunk_floats);
      }
      __syncthreads();
      key_sum = keys.sum_of(chunk_tokens(0), first_staged(chunk_tokens(0)), key_stage);
    } else {
      key_sum = keys.finish(p, T, first_staged(T), key_stage);
    }
    if (past_v) return;
  }
  tok.finish(p);

  // tn_mma_chunked: chunks of 4 tokens from t0, each from the tile the last
  // left (tn_mma: one chunk, t0 = 0, TC = T). Tokens past T in a chunk carry
  // decay 1 and beta 0, so they change nothing.
  for (int t0 = 0; CH ? t0 < T : t0 == 0; t0 += kMaxT) {
    const int TC = chunk_tokens(t0);
    const bool last_chunk = !CH || t0 + kMaxT >= T;
    if constexpr (PK && CH) {
      if (t0 > 0) {
        key_stage += chunk_floats;
        key_sum = keys.sum_of(TC, first_staged(TC), key_stage);
      }
    }
    if (!last_chunk) {  // the next chunk's k, q (scalar gate) and v lines into L1 while this one runs
      const int tk = t0 + kMaxT + (g & 3), tv = t0 + kMaxT + c;
      if constexpr (!PK) {
        if (tk < T) {
#pragma unroll
          for (int i = 0; i < NL; ++i) prefetch_l1(token_keys(g < 4 ? p.k : p.q, tk) + (4 * P * i + P * c) * 2);
        }
      }
      if (tv < T) prefetch_l1(vp + tv * p.v.stride[1]);
    }

    // X (rows x [k q]) and the Gram matrix of [k q]; accumulators by n-tile parity
    // (and hi / lo) so that the mmas do not form one chain.
    float xa[4] = {}, xb[4] = {}, xc[4] = {}, xd[4] = {}, ga[4] = {}, gb[4] = {};
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      float(&x)[4] = (j & 1) ? xb : xa;
      if constexpr (PK) {  // B = the staged vector g at keys (j, c, 0..1), tf32 hi + lo
        const float2 v = *reinterpret_cast<const float2*>(key_stage + (j * 32 + lane) * 2);
        uint32_t bh0, bl0, bh1, bl1;
        tf32_split(v.x, bh0, bl0);
        tf32_split(v.y, bh1, bl1);
        float(&xl)[4] = (j & 1) ? xd : xc;
        if constexpr (F32T) {
          uint32_t hi[4], lo[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) tf32_split(bits_to_float(tw[j][e]), hi[e], lo[e]);
          mma_tf32(xl, lo[0], lo[2], lo[1], lo[3], bh0, bh1);
          mma_tf32(xl, hi[0], hi[2], hi[1], hi[3], bl0, bl1);
          mma_tf32(x, hi[0], hi[2], hi[1], hi[3], bh0, bh1);
        } else {
          auto e = [&](int i) { return float_to_bits(tile_elem<S, TW>(tw[j], i)); };
          mma_tf32(xl, e(0), e(2), e(1), e(3), bl0, bl1);
          mma_tf32(x, e(0), e(2), e(1), e(3), bh0, bh1);
        }
      } else {
        const uint32_t b0 = wv[j] << 16, b1 = wv[j] & 0xffff0000u;  // keys (j, c, 0), (j, c, 1) of vector g
        if constexpr (F32T) {
          uint32_t hi[4], lo[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) tf32_split(bits_to_float(tw[j][e]), hi[e], lo[e]);
          mma_tf32((j & 1) ? xd : xc, lo[0], lo[2], lo[1], lo[3], b0, b1);
          mma_tf32(x, hi[0], hi[2], hi[1], hi[3], b0, b1);
        } else {
          auto e = [&](int i) { return float_to_bits(tile_elem<S, TW>(tw[j], i)); };
          mma_tf32(x, e(0), e(2), e(1), e(3), b0, b1);
        }
        mma_tf32((j & 1) ? gb : ga, b0, 0u, b1, 0u, b0, b1);
      }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) xa[e] = (xa[e] + xb[e]) + (xc[e] + xd[e]), ga[e] += gb[e];

    // G(n, n') (n, n' < 4: k, else q) sits in lane 4 n + n' / 2, element n' % 2.
    // Per-key gates: the staged sums (P(j, t)-weighted), lane s holding sum s;
    // the decays are in them and in X, so dt stays 1 (tok has no scalar gate).
    auto gram = [&](int n, int n2) {
      if constexpr (PK) {
        const int s = n2 < 4 ? stage_t::kk_sum(n, n2) : n < 4 ? stage_t::kq_sum(n, n2 - 4) : stage_t::qq_sum(n - 4);
        return shfl(key_sum, s);
      } else {
        return shfl((n2 & 1) ? ga[1] : ga[0], 4 * n + (n2 >> 1));
      }
    };
    float rk[kMaxT], rq[kMaxT], kk[kMaxT][kMaxT], kq[kMaxT][kMaxT], dt[kMaxT], bt[kMaxT];
#pragma unroll
    for (int t = 0; t < kMaxT; ++t) {
      l2norm_factors(p.r.qk_l2norm, p.r.scale, gram(t, t), gram(4 + t, 4 + t), rk[t], rq[t]);
#pragma unroll
      for (int j = 0; j < kMaxT; ++j) {
        kk[j][t] = j < t ? gram(j, t) : 0.f;
        kq[j][t] = j <= t ? gram(j, 4 + t) : 0.f;
      }
      dt[t] = t < TC ? tok.decay_of_token(t0 + t) : 1.f;
      bt[t] = t < TC ? tok.beta_of_token(t0 + t) : 0.f;
    }
    // pm[j][t] = P(j, t), dc[t] = D_t; past T the decays are 1, so index kMaxT - 1 is T - 1's.
    float pm[kMaxT][kMaxT], dc[kMaxT];
#pragma unroll
    for (int t = 0; t < kMaxT; ++t) {
      dc[t] = (t ? dc[t - 1] : 1.f) * dt[t];
#pragma unroll
      for (int j = 0; j < kMaxT; ++j) pm[j][t] = j < t ? pm[j][t - 1] * dt[t] : 1.f;
    }
    // Rows g and g + 8 (r = 0, 1), every lane of the quad: the recurrence over the tokens.
    float u[2][kMaxT], o[2][kMaxT];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int t = 0; t < kMaxT; ++t) {
        const float X = shfl(xa[2 * r + (t & 1)], 4 * g + (t >> 1));
        const float Y = shfl(xa[2 * r + (t & 1)], 4 * g + 2 + (t >> 1));
        float x = dc[t] * rk[t] * X, y = dc[t] * rq[t] * Y;
#pragma unroll
        for (int j = 0; j < t; ++j) x = fmaf(pm[j][t] * rk[j] * rk[t] * kk[j][t], u[r][j], x);
        u[r][t] = bt[t] * ((r ? v8[t] : v0[t]) - x);
#pragma unroll
        for (int j = 0; j <= t; ++j) y = fmaf(pm[j][t] * rk[j] * rq[t] * kq[j][t], u[r][j], y);
        o[r][t] = y;
      }
    }
    if (c < TC) {  // lane c writes token t0 + c's outputs of its rows
      float o0 = 0.f, o8 = 0.f;
#pragma unroll
      for (int t = 0; t < kMaxT; ++t) o0 = c == t ? o[0][t] : o0, o8 = c == t ? o[1][t] : o8;
      out[(t0 + c) * p.out.stride[1]] = float_to_bf16_bits(o0);
      out[(t0 + c) * p.out.stride[1] + R8] = float_to_bf16_bits(o8);
    }

    // The state after token t to slot sl: A = (rows x 8) column c = the hi part of
    // P(c, t) rk_c u_c (0 for c > t), column c + 4 its lo part; B = k_c at the
    // n-tile's keys in both halves; C = D_t S. Per-key gates: A = rk_c u_c,
    // B = the staged P(c, t) k_c (hi in both halves, then lo against A's hi
    // part by a second mma), C = S diag(D_t) from the staged D_t.
    // tn_mma_chunked: `store` whether it goes to slot sl, `keep` whether it
    // becomes the tile of the next chunk.
    auto emit_state = [&](int t, int64_t sl, bool store, bool keep) {
      float u0 = 0.f, u8 = 0.f, d_all = dc[0];
#pragma unroll
      for (int tt = 1; tt < kMaxT; ++tt) d_all = t == tt ? dc[tt] : d_all;
#pragma unroll
      for (int tt = 0; tt < kMaxT; ++tt)
#pragma unroll
        for (int j = 0; j <= tt; ++j) {
          const bool mine = c == j && t == tt;
          u0 = mine ? pm[j][tt] * rk[j] * u[0][j] : u0;
          u8 = mine ? pm[j][tt] * rk[j] * u[1][j] : u8;
        }
      uint32_t h0, l0, h8, l8;
      tf32_split(u0, h0, l0);
      tf32_split(u8, h8, l8);
      // B = k_c at column g of n-tile j: keys (j, g / 2, g % 2), which lane
      // 4 c + g / 2 holds in wv (vector c) or, with RELOAD_K, loaded again.
      uint32_t kw[NJ];
      if constexpr (RELOAD_K) load_keys(p.k, t0 + c, g >> 1, kw);
      const float* const tok_stage =
          PK ? key_stage + stage_t::x_floats + (p.token_indices.data ? t : 0) * stage_t::token_floats : nullptr;
      // n-tile j of the new state: f = elements (g, 2c), (g, 2c + 1), (g + 8, 2c), (g + 8, 2c + 1).
      auto new_tile = [&](int j, float (&f)[4]) {
        if constexpr (PK) {
          const float kv = tok_stage[j * 32 + lane];
          const float2 dk = *reinterpret_cast<const float2*>(tok_stage + stage_t::u_floats + (j * 4 + c) * 2);
          uint32_t kh, kl;
          tf32_split(kv, kh, kl);
#pragma unroll
          for (int e = 0; e < 4; ++e) f[e] = ((e & 1) ? dk.y : dk.x) * elem(j, e);
          mma_tf32(f, h0, h8, l0, l8, kh, kh);
          mma_tf32(f, h0, h8, 0u, 0u, kl, 0u);
        } else {
          uint32_t w;
          if constexpr (RELOAD_K) w = kw[j];
          else w = uint32_t(shfl(int(wv[j]), 4 * c + (g >> 1)));
          const uint32_t kb = (g & 1) ? (w & 0xffff0000u) : (w << 16);
#pragma unroll
          for (int e = 0; e < 4; ++e) f[e] = d_all * elem(j, e);
          mma_tf32(f, h0, h8, l0, l8, kb, kb);
        }
        if constexpr (CH) {
          if (keep) {
#pragma unroll
            for (int e = 0; e < 4; ++e) tw[j][e] = float_to_bits(f[e]);
          }
        }
      };
      if constexpr (KL) {
#pragma unroll
        for (int i = 0; i < NL; ++i) {
          uint32_t w0[4], w8[4];
#pragma unroll
          for (int m = 0; m < HALF; ++m) {
            float f[4];
            new_tile(HALF * i + m, f);
            if constexpr (ES == 4) {
              w0[2 * m] = float_to_bits(f[0]), w0[2 * m + 1] = float_to_bits(f[1]);
              w8[2 * m] = float_to_bits(f[2]), w8[2 * m + 1] = float_to_bits(f[3]);
            } else {
              w0[m] = pack_halves<S>(f[0], f[1]), w8[m] = pack_halves<S>(f[2], f[3]);
            }
          }
          if (!CH || store) {
            store16(pool + vec_at(sl, i), u32x4{w0[0], w0[1], w0[2], w0[3]});
            store16(pool + vec_at(sl, i) + row8, u32x4{w8[0], w8[1], w8[2], w8[3]});
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
          float f[4];
          new_tile(j, f);
          if (CH && !store) continue;
          char* const at0 = pool + key_at(sl, j);
          if constexpr (ES == 4) {
            store8(at0, u32x2{float_to_bits(f[0]), float_to_bits(f[2])});
            store8(at0 + key_step, u32x2{float_to_bits(f[1]), float_to_bits(f[3])});
          } else {
            *reinterpret_cast<uint32_t*>(at0) = pack_halves<S>(f[0], f[2]);
            *reinterpret_cast<uint32_t*>(at0 + key_step) = pack_halves<S>(f[1], f[3]);
          }
        }
      }
    };
    if (p.token_indices.data) {
      for (int t = 0; t < TC; ++t) {
        const int64_t sl = tok.slot_of_token(t0 + t);
        const bool store = sl >= 0 && sl < p.pool_slots, keep = CH && !last_chunk && t == TC - 1;
        if (store || keep) emit_state(t, sl, store, keep);
      }
    } else if (!last_chunk) {
      emit_state(TC - 1, -1, false, true);
    } else if (store_slot >= 0 && store_slot < p.pool_slots) {
      emit_state(TC - 1, store_slot, true, false);
    }
    if (last_chunk) break;
    // The next chunk's k, q (scalar gate; per key they are staged) and v (tn_mma_chunked).
    if constexpr (!PK) load_keys(g < 4 ? p.k : p.q, t0 + kMaxT + (g & 3), c, wv);
    load_values(t0 + kMaxT);
  }  // chunks
#else
  (void)lp;
  trap();  // no tensor-core mma here: mode_for never picks tn_mma (tn_mma_takes)
#endif
}

}  // namespace dk::gpu::decode_detail
