// Tensor-core prefill, stage 1 (parallel over chunks): the WY pieces of every
// (chunk, value head) into the workspace. Layouts and the overview: prefill_tc.cuh.
#pragma once
#include "prefill_tc.cuh"

namespace dk::prefill::tc {

// ---------------------------------------------------------------- prep helpers

// T = (I + A)^-1 for strictly lower A (64x64 fp32, stride kLdT); lower part and the
// diagonal blocks of T are written (strictly upper 16x16 blocks are never read).
DK_DEVICE void invert_unit_lower64(const float* A, float* T, float* X, int tid) {
  if (tid < 64) {  // diagonal 16x16 blocks, one column per thread
    const int b = (tid >> 4) * 16, c = tid & 15;
    for (int r = 0; r <= c; ++r) T[(b + r) * kLdT + b + c] = r == c ? 1.f : 0.f;
    for (int r = c + 1; r < 16; ++r) {
      float s = A[(b + r) * kLdT + b + c];
      for (int m = c + 1; m < r; ++m) s += A[(b + r) * kLdT + b + m] * T[(b + m) * kLdT + b + c];
      T[(b + r) * kLdT + b + c] = -s;
    }
  }
  block_sync();
  for (int d = 1; d < 4; ++d) {  // block diagonals: T_IJ = -T_II sum_{M=J}^{I-1} A_IM T_MJ
    const int n = (4 - d) * 64;     // 1x4 strips of the (4 - d) blocks of this diagonal
    for (int e = tid; e < n; e += kPrepThreads) {
      const int I = d + (e >> 6), J = I - d, r = (e >> 2) & 15, c = (e & 3) * 4;
      const float* a = A + (16 * I + r) * kLdT;
      float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
      for (int m = 16 * J; m < 16 * I; ++m) {
        const float am = a[m];
        const float4 t = *reinterpret_cast<const float4*>(T + m * kLdT + 16 * J + c);
        s.x += am * t.x;
        s.y += am * t.y;
        s.z += am * t.z;
        s.w += am * t.w;
      }
      *reinterpret_cast<float4*>(X + (e >> 6) * 256 + r * 16 + c) = s;
    }
    block_sync();
    for (int e = tid; e < n; e += kPrepThreads) {
      const int I = d + (e >> 6), J = I - d, r = (e >> 2) & 15, c = (e & 3) * 4;
      const float* t = T + (16 * I + r) * kLdT + 16 * I;
      const float* x = X + (e >> 6) * 256 + c;
      float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
      for (int m = 0; m <= r; ++m) {
        const float tm = t[m];
        const float4 xv = *reinterpret_cast<const float4*>(x + m * 16);
        s.x += tm * xv.x;
        s.y += tm * xv.y;
        s.z += tm * xv.z;
        s.w += tm * xv.w;
      }
      *reinterpret_cast<float4*>(T + (16 * I + r) * kLdT + 16 * J + c) =
          make_float4(-s.x, -s.y, -s.z, -s.w);
    }
    block_sync();
  }
}

// Eight consecutive elements of a row as fp32 (vectorised when aligned).
template <dtype IO>
DK_DEVICE void load8(const typename io<IO>::elem* src, bool vec, float (&x)[8]) {
  if constexpr (IO == dtype::f32) {
    if (vec) {
      const u32x4 a = load16(src), b = load16(src + 4);
      x[0] = __uint_as_float(a.x); x[1] = __uint_as_float(a.y);
      x[2] = __uint_as_float(a.z); x[3] = __uint_as_float(a.w);
      x[4] = __uint_as_float(b.x); x[5] = __uint_as_float(b.y);
      x[6] = __uint_as_float(b.z); x[7] = __uint_as_float(b.w);
      return;
    }
  } else {
    if (vec) {
      const u32x4 a = load16(src);
      const uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        x[2 * i] = io<IO>::to_f(static_cast<uint16_t>(w[i] & 0xffffu));
        x[2 * i + 1] = io<IO>::to_f(static_cast<uint16_t>(w[i] >> 16));
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) x[i] = io<IO>::to_f(src[i]);
}

#if DK_HAS_MMA_SYNC
// Splits 8 values into bf16 hi (and lo) 16-byte chunks.
DK_DEVICE void split8(const float (&x)[8], u32x4& hi, u32x4& lo) {
  split2(x[0], x[1], hi.x, lo.x);
  split2(x[2], x[3], hi.y, lo.y);
  split2(x[4], x[5], hi.z, lo.z);
  split2(x[6], x[7], hi.w, lo.w);
}
#endif

// ---------------------------------------------------------------- prep kernel

#if DK_HAS_MMA_SYNC
// The 16-byte B-fragment pair of a 16-row block this warp holds as accumulators c0 (the
// k-step's first 8 columns) and c1 (its last 8): rows g / g + 8 are the pair's two n8 tiles.
DK_DEVICE void acc_to_bfrag(const float (&c0)[4], const float (&c1)[4], u32x4& hi, u32x4& lo) {
  split2(c0[0], c0[1], hi.x, lo.x);
  split2(c1[0], c1[1], hi.y, lo.y);
  split2(c0[2], c0[3], hi.z, lo.z);
  split2(c1[2], c1[3], hi.w, lo.w);
}
#endif

template <dtype IO, int KD>
__global__ void DK_TC_BOUNDS(kPrepThreads, 3) prep_kernel(prefill_problem p, ws_ptrs ws,
                                                           int vec_q, int vec_k, int vec_v) {
#if DK_HAS_MMA_SYNC
  using C = prep_cfg<IO, KD>;
  using E = typename io<IO>::elem;
  constexpr bool kSplit = C::kNP == 2;
  constexpr int kRC = KD / 8;  // 16-byte chunks per row of a q/k plane
  extern __shared__ __align__(128) unsigned char sm[];
  float* As = reinterpret_cast<float*>(sm + C::kOffA);
  float* Ts = reinterpret_cast<float*>(sm + C::kOffT);
  float* Xs = reinterpret_cast<float*>(sm + C::kOffX);
  float* rq = reinterpret_cast<float*>(sm + C::kOffVec);
  float* rk = rq + kC;
  float* Gs = rk + kC;
  float* Bs = Gs + kC;
  float* cw = Bs + kC;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3, lr = lane & 7, lm = lane >> 3;
  const int64_t c = blockIdx.x;
  const int h = blockIdx.y;
  const int group = p.hv / p.hq;
  const int hk = h / group;
  const int i0 = 16 * warp;  // this warp's chunk rows

  // chunk -> sequence (binary search over the chunk offsets)
  const int64_t N = p.num_seqs;
  if (c >= ws.cu[N]) return;
  int64_t lo = 0, hi = N;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) >> 1;
    if (ws.cu[mid] <= c) lo = mid; else hi = mid;
  }
  const int64_t n = lo;
  int64_t bos, eos;
  seq_bounds(p, n, bos, eos);
  const int64_t t0 = bos + kC * (c - ws.cu[n]);
  const int L = static_cast<int>(eos - t0 < kC ? eos - t0 : kC);
  const int64_t ch = c * p.hv + h;  // (chunk, value head) index into the workspace

  // gates and beta of this thread's token, loaded early (their latency hides behind step 1)
  float gam = 0.f, bet = 0.f;
  if (tid < kC && tid < L) {
    gam = gate_log(p, t0 + tid, h, 0);
    bet = beta_at(p, t0 + tid, h);
  }

  // 1. q and k rows -> bf16 planes in shared memory (swizzled) + l2norm factors
  {
    constexpr int kRowsPerPass = kPrepThreads / kRC;
#pragma unroll 1
    for (int which = 0; which < 2; ++which) {
      const E* src = static_cast<const E*>(which ? p.k.data : p.q.data);
      const int64_t s0 = which ? p.k.stride[0] : p.q.stride[0];
      const int64_t s1 = which ? p.k.stride[1] : p.q.stride[1];
      const bool vec = which ? vec_k : vec_q;
      unsigned char* pl = sm + (which ? C::kOffK : C::kOffQ);
      float* rn = which ? rk : rq;
#pragma unroll 2
      for (int pass = 0; pass < kC / kRowsPerPass; ++pass) {
        const int row = pass * kRowsPerPass + tid / kRC, chn = tid % kRC;
        float x[8];
        if (row < L) {
          load8<IO>(src + (t0 + row) * s0 + hk * s1 + chn * 8, vec, x);
        } else {
#pragma unroll
          for (int i = 0; i < 8; ++i) x[i] = 0.f;
        }
        float ss = 0.f;
#pragma unroll
        for (int i = 0; i < 8; ++i) ss += x[i] * x[i];
        ss = group_sum<kRC>(ss);
        if (chn == 0) rn[row] = p.r.qk_l2norm ? 1.f / sqrtf(ss + 1e-6f) : 1.f;
        u32x4 hh, ll;
        split8(x, hh, ll);
        store16(pl + swz<kRC>(row, chn), hh);
        if constexpr (kSplit) store16(pl + C::kPlane + swz<kRC>(row, chn), ll);
      }
    }
  }
  block_sync();

  const uint32_t qb = shared_address(sm + C::kOffQ), kb = shared_address(sm + C::kOffK);
  // 2a. the first value head of each key head publishes q and k as B fragments
  if (h % group == 0) {
    u32x4* wq = reinterpret_cast<u32x4*>(ws.qk + (c * p.hq + hk) * ws.qk_bytes);
    u32x4* wk = wq + C::kNP * (C::kPlane / 16);
    for (int e = warp; e < (KD / 16) * 4; e += 4) {  // q: (k-step over K, token pair)
      const int s = e >> 2, jp = e & 3;
      const uint32_t off = swz<kRC>(16 * jp + (lm >> 1) * 8 + lr, 2 * s + (lm & 1));
#pragma unroll
      for (int pl = 0; pl < C::kNP; ++pl) {
        uint32_t r[4];
        ldsm_x4(r, qb + pl * C::kPlane + off);
        wq[pl * (C::kPlane / 16) + frag_at(s, jp, 4, lane)] = u32x4{r[0], r[1], r[2], r[3]};
      }
    }
    for (int e = warp; e < 4 * (KD / 16); e += 4) {  // k: (token k-step, key pair)
      const int s2 = e / (KD / 16), dp = e % (KD / 16);
      const uint32_t off = swz<kRC>(16 * s2 + (lm & 1) * 8 + lr, 2 * dp + (lm >> 1));
#pragma unroll
      for (int pl = 0; pl < C::kNP; ++pl) {
        uint32_t r[4];
        ldsm_x4_t(r, kb + pl * C::kPlane + off);
        wk[pl * (C::kPlane / 16) + frag_at(s2, dp, KD / 16, lane)] = u32x4{r[0], r[1], r[2], r[3]};
      }
    }
  }

  // 2b. raw k k^T and q k^T for this warp's 16 rows (j <= i blocks only), in registers
  float KK[8][4], QK[8][4];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) KK[j][e] = QK[j][e] = 0.f;
#pragma unroll
  for (int s = 0; s < KD / 16; ++s) {
    uint32_t ka[4], qa[4], kal[4], qal[4];
    const uint32_t aoff = swz<kRC>(i0 + (lm & 1) * 8 + lr, 2 * s + (lm >> 1));
    ldsm_x4(ka, kb + aoff);
    ldsm_x4(qa, qb + aoff);
    if constexpr (kSplit) {
      ldsm_x4(kal, kb + C::kPlane + aoff);
      ldsm_x4(qal, qb + C::kPlane + aoff);
    }
#pragma unroll
    for (int jp = 0; jp < 4; ++jp) {
      if (jp > warp) break;
      const uint32_t boff = swz<kRC>(16 * jp + (lm >> 1) * 8 + lr, 2 * s + (lm & 1));
      uint32_t bh[4];
      ldsm_x4(bh, kb + boff);
      mma(KK[2 * jp], ka, bh[0], bh[1]);
      mma(KK[2 * jp + 1], ka, bh[2], bh[3]);
      mma(QK[2 * jp], qa, bh[0], bh[1]);
      mma(QK[2 * jp + 1], qa, bh[2], bh[3]);
      if constexpr (kSplit) {
        uint32_t bl[4];
        ldsm_x4(bl, kb + C::kPlane + boff);
        mma(KK[2 * jp], kal, bh[0], bh[1]);
        mma(KK[2 * jp + 1], kal, bh[2], bh[3]);
        mma(KK[2 * jp], ka, bl[0], bl[1]);
        mma(KK[2 * jp + 1], ka, bl[2], bl[3]);
        mma(QK[2 * jp], qal, bh[0], bh[1]);
        mma(QK[2 * jp + 1], qal, bh[2], bh[3]);
        mma(QK[2 * jp], qa, bl[0], bl[1]);
        mma(QK[2 * jp + 1], qa, bl[2], bl[3]);
      }
    }
  }
  block_sync();  // q planes are dead from here: the q region receives v

  // 3. v pieces (64 columns each) into the q region; bf16 goes by cp.async right away
  const E* vsrc = static_cast<const E*>(p.v.data) + h * p.v.stride[1];
  const int npieces = p.dv / 64;
  auto load_v = [&](int first, int count) {
    for (int e = tid; e < count * kC * 8; e += kPrepThreads) {
      const int pc = e / (kC * 8), row = (e >> 3) & (kC - 1), chn = e & 7;
      unsigned char* dst = sm + C::kOffQ + pc * C::kVPiece + swz<8>(row, chn);
      const E* src = vsrc + (t0 + row) * p.v.stride[0] + (first + pc) * 64 + chn * 8;
      if constexpr (IO == dtype::bf16) {
        if (row < L && vec_v) {
          cp_async16(shared_address(dst), src);
          continue;
        }
      }
      float x[8];
      if (row < L) {
        load8<IO>(src, vec_v, x);
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) x[i] = 0.f;
      }
      u32x4 hh, ll;
      split8(x, hh, ll);
      store16(dst, hh);
      if constexpr (kSplit) store16(dst + kC * 64 * 2, ll);
    }
    cp_async_commit();
  };
  load_v(0, npieces < C::kVGroup ? npieces : C::kVGroup);

  // 4. in-chunk cumulative log gates (inclusive scan over the 64 tokens)
  if (tid < kC) {
    float x = gam;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const float y = shfl(x, lane >= off ? lane - off : lane);
      if (lane >= off) x += y;
    }
    Gs[tid] = x;
    Bs[tid] = bet;
  }
  block_sync();
  if (tid >= 32 && tid < kC) Gs[tid] += Gs[31];
  block_sync();
  const float Gl = Gs[kC - 1];
  if (tid < kC) cw[tid] = Bs[tid] * rk[tid] * fast_exp(Gs[tid]);

  // 5. A rows -> shared fp32; P -> workspace as B fragments (rows i are the n dimension)
  {
    u32x4* pw = reinterpret_cast<u32x4*>(ws.pm + ch * 2 * frag_plane_bytes(kC));
#pragma unroll
    for (int s2 = 0; s2 < 4; ++s2) {
      float pv[2][4];
#pragma unroll
      for (int tt = 0; tt < 2; ++tt) {
        const int jt = 2 * s2 + tt;
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int i = i0 + g + 8 * hr, j = 8 * jt + 2 * t4;
          const float gi_ = Gs[i], bi = Bs[i] * rk[i], qi = p.r.scale * rq[i];
          float a2[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int jj = j + e;
            const float dec = fast_exp(jj <= i ? gi_ - Gs[jj] : 0.f);
            a2[e] = jj < i ? bi * rk[jj] * dec * KK[jt][2 * hr + e] : 0.f;
            pv[tt][2 * hr + e] = jj <= i ? qi * rk[jj] * dec * QK[jt][2 * hr + e] : 0.f;
          }
          *reinterpret_cast<float2*>(As + i * kLdT + j) = make_float2(a2[0], a2[1]);
        }
      }
      u32x4 ph, pl;
      acc_to_bfrag(pv[0], pv[1], ph, pl);
      pw[frag_at(s2, warp, 4, lane)] = ph;
      pw[frag_plane_bytes(kC) / 16 + frag_at(s2, warp, 4, lane)] = pl;
    }
  }
  block_sync();

  // 6. T = (I + A)^-1
  invert_unit_lower64(As, Ts, Xs, tid);

  // 7. W = T diag(cw) k  (rows i0..i0+15; T is lower: k-steps s2 <= warp) -> B fragments
  {
    float Wc[KD / 8][4];
#pragma unroll
    for (int j = 0; j < KD / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) Wc[j][e] = 0.f;
#pragma unroll
    for (int s2 = 0; s2 < 4; ++s2) {
      if (s2 > warp) break;
      const float* t0r = Ts + (i0 + g) * kLdT + 16 * s2 + 2 * t4;
      const float* t1r = t0r + 8 * kLdT;
      const float* cj = cw + 16 * s2 + 2 * t4;
      uint32_t ah[4], al[4];
      split2(t0r[0] * cj[0], t0r[1] * cj[1], ah[0], al[0]);
      split2(t1r[0] * cj[0], t1r[1] * cj[1], ah[1], al[1]);
      split2(t0r[8] * cj[8], t0r[9] * cj[9], ah[2], al[2]);
      split2(t1r[8] * cj[8], t1r[9] * cj[9], ah[3], al[3]);
#pragma unroll
      for (int dp = 0; dp < KD / 16; ++dp) {
        const uint32_t off = swz<kRC>(16 * s2 + (lm & 1) * 8 + lr, 2 * dp + (lm >> 1));
        uint32_t bh[4];
        ldsm_x4_t(bh, kb + off);
        mma(Wc[2 * dp], ah, bh[0], bh[1]);
        mma(Wc[2 * dp + 1], ah, bh[2], bh[3]);
        mma(Wc[2 * dp], al, bh[0], bh[1]);
        mma(Wc[2 * dp + 1], al, bh[2], bh[3]);
        if constexpr (kSplit) {
          uint32_t bl[4];
          ldsm_x4_t(bl, kb + C::kPlane + off);
          mma(Wc[2 * dp], ah, bl[0], bl[1]);
          mma(Wc[2 * dp + 1], ah, bl[2], bl[3]);
        }
      }
    }
    u32x4* ww = reinterpret_cast<u32x4*>(ws.w + ch * 2 * frag_plane_bytes(KD));
#pragma unroll
    for (int s = 0; s < KD / 16; ++s) {
      u32x4 wh, wl;
      acc_to_bfrag(Wc[2 * s], Wc[2 * s + 1], wh, wl);
      ww[frag_at(s, warp, 4, lane)] = wh;
      ww[frag_plane_bytes(KD) / 16 + frag_at(s, warp, 4, lane)] = wl;
    }
  }

  // 8. U = T diag(beta) v, 64 value columns at a time, row-major fp32
  for (int first = 0; first < npieces; first += C::kVGroup) {
    const int count = npieces - first < C::kVGroup ? npieces - first : C::kVGroup;
    if (first > 0) load_v(first, count);
    cp_async_wait<0>();
    block_sync();
    for (int pc = 0; pc < count; ++pc) {
      const uint32_t vb = shared_address(sm + C::kOffQ + pc * C::kVPiece);
      float Uc[8][4];
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) Uc[j][e] = 0.f;
#pragma unroll
      for (int s2 = 0; s2 < 4; ++s2) {
        if (s2 > warp) break;
        const float* t0r = Ts + (i0 + g) * kLdT + 16 * s2 + 2 * t4;
        const float* t1r = t0r + 8 * kLdT;
        const float* bj = Bs + 16 * s2 + 2 * t4;
        uint32_t ah[4], al[4];
        split2(t0r[0] * bj[0], t0r[1] * bj[1], ah[0], al[0]);
        split2(t1r[0] * bj[0], t1r[1] * bj[1], ah[1], al[1]);
        split2(t0r[8] * bj[8], t0r[9] * bj[9], ah[2], al[2]);
        split2(t1r[8] * bj[8], t1r[9] * bj[9], ah[3], al[3]);
#pragma unroll
        for (int dp = 0; dp < 4; ++dp) {
          const uint32_t off = swz<8>(16 * s2 + (lm & 1) * 8 + lr, 2 * dp + (lm >> 1));
          uint32_t bh[4];
          ldsm_x4_t(bh, vb + off);
          mma(Uc[2 * dp], ah, bh[0], bh[1]);
          mma(Uc[2 * dp + 1], ah, bh[2], bh[3]);
          mma(Uc[2 * dp], al, bh[0], bh[1]);
          mma(Uc[2 * dp + 1], al, bh[2], bh[3]);
          if constexpr (kSplit) {
            uint32_t bl[4];
            ldsm_x4_t(bl, vb + kC * 64 * 2 + off);
            mma(Uc[2 * dp], ah, bl[0], bl[1]);
            mma(Uc[2 * dp + 1], ah, bl[2], bl[3]);
          }
        }
      }
      float* uw = ws.u + ch * kC * p.dv + (first + pc) * 64;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int i = i0 + g + 8 * hr, d = 8 * nt + 2 * t4;
          *reinterpret_cast<float2*>(uw + int64_t(i) * p.dv + d) =
              make_float2(Uc[nt][2 * hr], Uc[nt][2 * hr + 1]);
        }
      }
    }
    block_sync();  // before the next group overwrites the pieces
  }

  // 9. per-token scalars
  if (tid < kC) {
    float* sw = ws.sc + ch * 3 * kC;
    sw[tid] = p.r.scale * rq[tid] * expf(Gs[tid]);
    sw[kC + tid] = rk[tid] * expf(Gl - Gs[tid]);
    sw[2 * kC + tid] = expf(Gl);
  }
#else
  (void)p, (void)ws, (void)vec_q, (void)vec_k, (void)vec_v;
#endif  // DK_HAS_MMA_SYNC
}

}  // namespace dk::prefill::tc
