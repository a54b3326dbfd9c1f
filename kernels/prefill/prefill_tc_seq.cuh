// Tensor-core prefill, stage 2 (sequential over chunks): the state recurrence and the
// outputs. Layouts and the overview: prefill_tc.cuh.
#pragma once
#include "prefill_tc.cuh"

namespace dk::prefill::tc {

// ---------------------------------------------------------------- sequential kernel

template <dtype IO, int KD>
__global__ void __launch_bounds__(128) seq_kernel(prefill_problem p, ws_ptrs ws, int stages,
                                                  int vec_out) {
#if DK_HAS_MMA_SYNC
  using C = seq_cfg<IO, KD>;
  using E = typename io<IO>::elem;
  constexpr bool kQS = C::kNQK == 2;
  constexpr int kDT = C::kDH / 8;   // state tiles (8 key rows each) per warp
  constexpr int kKS = KD / 16;      // k-steps over K
  constexpr int kFP = frag_plane_bytes(KD);
  extern __shared__ __align__(128) unsigned char sm[];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  const int slab = warp & 1, half = warp >> 1, partner = warp ^ 2;
  const int s0 = half * (kDT / 2);  // first k-step (over K) of this warp's key half
  const int nvt = p.dv / C::kVT;
  int64_t bid = blockIdx.x;
  const int vt = static_cast<int>(bid % nvt);
  bid /= nvt;
  const int h = static_cast<int>(bid % p.hv);
  const int64_t n = bid / p.hv;
  const int hk = h / (p.hv / p.hq);
  const int vcol0 = vt * C::kVT;       // first state column of the block
  const int vw = vcol0 + 16 * slab;    // first state column of this warp

  int64_t bos, eos;
  seq_bounds(p, n, bos, eos);
  const int64_t c0 = ws.cu[n];
  const int64_t nch = ws.cu[n + 1] - c0;

  // S^T accumulators: tile nt holds S^T[v = g (+8)][d = half K/2 + 8 nt + 2 t4 (+1)]
  float S[kDT][4];
  {
    const int64_t slot = initial_slot(p, n);
#pragma unroll
    for (int nt = 0; nt < kDT; ++nt) {
      const int d = half * C::kDH + 8 * nt + 2 * t4;
      S[nt][0] = load_state(p, slot, h, d, vw + g);
      S[nt][1] = load_state(p, slot, h, d + 1, vw + g);
      S[nt][2] = load_state(p, slot, h, d, vw + g + 8);
      S[nt][3] = load_state(p, slot, h, d + 1, vw + g + 8);
    }
  }

  unsigned char* xch = sm + stages * C::kStage;                 // [warp][12][32] x 16 bytes
  E* ostg = reinterpret_cast<E*>(xch + C::kXch) + warp * kC * 16;
  E* outp = static_cast<E*>(const_cast<void*>(p.out.data));
  uint64_t* const bars = reinterpret_cast<uint64_t*>(xch + C::kXch + C::kOut);  // one mbarrier per stage
  (void)bars;
#if DK_HAS_TMA
  if (tid == 0) {
    bulk_barrier_init(bars);
    bulk_barrier_init(bars + 1);
    bulk_barrier_init_done();
  }
  block_sync();
#endif

  // One stage: q/k, W, P fragment images and the scalars by bulk copies (one thread),
  // the U tile (64 rows x 32 columns of a row-major [64][V]) by 16-byte cp.async.
  auto load_stage = [&](int buf, int64_t cg) {
    unsigned char* st = sm + buf * C::kStage;
    const int64_t ch = cg * p.hv + h;
    const unsigned char* qk = ws.qk + (cg * p.hq + hk) * ws.qk_bytes;
    const unsigned char* w = ws.w + ch * 2 * kFP;
    const unsigned char* pm = ws.pm + ch * 2 * frag_plane_bytes(kC);
    const float* sc = ws.sc + ch * 3 * kC;
#if DK_HAS_TMA
    if (tid == 0) {
      uint64_t* const bar = bars + buf;
      bulk_arrive_expect(bar, C::kOffU + 3 * kC * 4);
      bulk_copy(st + C::kOffQ, qk, C::kOffW, bar);
      bulk_copy(st + C::kOffW, w, 2 * kFP, bar);
      bulk_copy(st + C::kOffP, pm, 2 * frag_plane_bytes(kC), bar);
      bulk_copy(st + C::kOffS, sc, 3 * kC * 4, bar);
    }
#else
    const uint32_t sb = shared_address(st);
    for (int e = tid; e < C::kOffW / 16; e += C::kThreads) cp_async16(sb + e * 16, qk + e * 16);
    for (int e = tid; e < 2 * kFP / 16; e += C::kThreads)
      cp_async16(sb + C::kOffW + e * 16, w + e * 16);
    for (int e = tid; e < 2 * frag_plane_bytes(kC) / 16; e += C::kThreads)
      cp_async16(sb + C::kOffP + e * 16, pm + e * 16);
    for (int e = tid; e < 3 * kC / 4; e += C::kThreads) cp_async16(sb + C::kOffS + e * 16, sc + e * 4);
#endif
    const float* u = ws.u + ch * kC * p.dv + vcol0;
    const uint32_t ub = shared_address(st + C::kOffU);
#pragma unroll
    for (int e = tid; e < kC * 8; e += C::kThreads) {
      const int r = e >> 3, chn = e & 7;
      cp_async16(ub + (r * C::kLdU + chn * 4) * 4, u + int64_t(r) * p.dv + chn * 4);
    }
  };

  if (nch > 0) {
    load_stage(0, c0);
    cp_async_commit();
  }
  for (int64_t ci = 0; ci < nch; ++ci) {
    const int buf = stages == 2 ? static_cast<int>(ci & 1) : 0;
    if (stages == 2 && ci + 1 < nch) {
      load_stage(buf ^ 1, c0 + ci + 1);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
#if DK_HAS_TMA
    bulk_wait(bars + buf, static_cast<uint32_t>((stages == 2 ? ci >> 1 : ci) & 1));
#endif
    block_sync();

    const unsigned char* st = sm + buf * C::kStage;
    const unsigned char* Qf = st + C::kOffQ;
    const unsigned char* Kf = st + C::kOffK;
    const unsigned char* Wf = st + C::kOffW;
    const unsigned char* Pf = st + C::kOffP;
    const float* Us = reinterpret_cast<const float*>(st + C::kOffU);
    const float* so = reinterpret_cast<const float*>(st + C::kOffS);
    const float* sk = so + kC;
    const float gl = so[2 * kC];
    auto frag = [&](const unsigned char* base, int idx) {
      return *reinterpret_cast<const u32x4*>(base + idx * 16);
    };

    // partial Y = S^T W^T and X = S^T q^T over this warp's key half (16 x 64 each)
    float Y[8][4], X[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) Y[j][e] = X[j][e] = 0.f;
#pragma unroll
    for (int s = 0; s < kDT / 2; ++s) {
      uint32_t ah[4], al[4];
      frag_from_acc(S[2 * s], S[2 * s + 1], ah, al);
#pragma unroll
      for (int jp = 0; jp < 4; ++jp) {
        const int fi = frag_at(s0 + s, jp, 4, lane);
        const u32x4 wh = frag(Wf, fi), wl = frag(Wf + kFP, fi), qh = frag(Qf, fi);
        mma(Y[2 * jp], ah, wh.x, wh.y);
        mma(Y[2 * jp + 1], ah, wh.z, wh.w);
        mma(Y[2 * jp], al, wh.x, wh.y);
        mma(Y[2 * jp + 1], al, wh.z, wh.w);
        mma(Y[2 * jp], ah, wl.x, wl.y);
        mma(Y[2 * jp + 1], ah, wl.z, wl.w);
        mma(X[2 * jp], ah, qh.x, qh.y);
        mma(X[2 * jp + 1], ah, qh.z, qh.w);
        mma(X[2 * jp], al, qh.x, qh.y);
        mma(X[2 * jp + 1], al, qh.z, qh.w);
        if constexpr (kQS) {
          const u32x4 ql = frag(Qf + kFP, fi);
          mma(X[2 * jp], ah, ql.x, ql.y);
          mma(X[2 * jp + 1], ah, ql.z, ql.w);
        }
      }
    }

    // Exchange with the other key half, then u^T = U^T - Y (in Y), the output for this warp's
    // 32 tokens (16-token groups {0, 3} for half 0, {1, 2} for half 1) and its store.
    const int64_t t0 = bos + kC * ci;
    const int L = static_cast<int>(eos - t0 < kC ? eos - t0 : kC);
    // (the barrier between the exchange's writes and reads is one instruction for every
    //  thread: it sits outside the per-half code)
    auto exchange_out = [&](auto half_c) {
      constexpr int H = decltype(half_c)::value;
      constexpr int opa = H == 0 ? 1 : 0, opb = H == 0 ? 2 : 3;  // the partner's
      float4* mine = reinterpret_cast<float4*>(xch) + warp * 12 * 32 + lane;
#pragma unroll
      for (int j = 0; j < 8; ++j) mine[j * 32] = make_float4(Y[j][0], Y[j][1], Y[j][2], Y[j][3]);
      mine[8 * 32] = make_float4(X[2 * opa][0], X[2 * opa][1], X[2 * opa][2], X[2 * opa][3]);
      mine[9 * 32] = make_float4(X[2 * opa + 1][0], X[2 * opa + 1][1], X[2 * opa + 1][2], X[2 * opa + 1][3]);
      mine[10 * 32] = make_float4(X[2 * opb][0], X[2 * opb][1], X[2 * opb][2], X[2 * opb][3]);
      mine[11 * 32] = make_float4(X[2 * opb + 1][0], X[2 * opb + 1][1], X[2 * opb + 1][2], X[2 * opb + 1][3]);
    };
    auto finish = [&](auto half_c) {
      constexpr int H = decltype(half_c)::value;
      constexpr int ipa = H == 0 ? 0 : 1, ipb = H == 0 ? 3 : 2;  // own 16-token groups
      const float4* theirs = reinterpret_cast<const float4*>(xch) + partner * 12 * 32 + lane;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float4 t = theirs[j * 32];
        Y[j][0] += t.x;
        Y[j][1] += t.y;
        Y[j][2] += t.z;
        Y[j][3] += t.w;
      }
      auto add4 = [](float (&x)[4], const float4 t) {
        x[0] += t.x;
        x[1] += t.y;
        x[2] += t.z;
        x[3] += t.w;
      };
      add4(X[2 * ipa], theirs[8 * 32]);
      add4(X[2 * ipa + 1], theirs[9 * 32]);
      add4(X[2 * ipb], theirs[10 * 32]);
      add4(X[2 * ipb + 1], theirs[11 * 32]);
      const int vl = 16 * slab + g;
#pragma unroll
      for (int jt = 0; jt < 8; ++jt) {
        const int tk = 8 * jt + 2 * t4;
        Y[jt][0] = Us[tk * C::kLdU + vl] - Y[jt][0];
        Y[jt][1] = Us[(tk + 1) * C::kLdU + vl] - Y[jt][1];
        Y[jt][2] = Us[tk * C::kLdU + vl + 8] - Y[jt][2];
        Y[jt][3] = Us[(tk + 1) * C::kLdU + vl + 8] - Y[jt][3];
      }
      uint32_t uh[4][4], ul[4][4];  // u^T as A fragments, one per 16-token k-step
#pragma unroll
      for (int s2 = 0; s2 < 4; ++s2) frag_from_acc(Y[2 * s2], Y[2 * s2 + 1], uh[s2], ul[s2]);
      // o^T = X diag(so) + u^T P^T for the own groups (P lower: k-steps s2 <= ip)
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        constexpr int ips[2] = {ipa, ipb};
        const int ip = ips[q];
#pragma unroll
        for (int tt = 0; tt < 2; ++tt) {
          const int tk = 16 * ip + 8 * tt + 2 * t4;
          const float s0_ = so[tk], s1_ = so[tk + 1];
          X[2 * ip + tt][0] *= s0_;
          X[2 * ip + tt][1] *= s1_;
          X[2 * ip + tt][2] *= s0_;
          X[2 * ip + tt][3] *= s1_;
        }
#pragma unroll
        for (int s2 = 0; s2 <= ip; ++s2) {
          const int fi = frag_at(s2, ip, 4, lane);
          const u32x4 ph = frag(Pf, fi), pl = frag(Pf + frag_plane_bytes(kC), fi);
          mma(X[2 * ip], uh[s2], ph.x, ph.y);
          mma(X[2 * ip + 1], uh[s2], ph.z, ph.w);
          mma(X[2 * ip], ul[s2], ph.x, ph.y);
          mma(X[2 * ip + 1], ul[s2], ph.z, ph.w);
          mma(X[2 * ip], uh[s2], pl.x, pl.y);
          mma(X[2 * ip + 1], uh[s2], pl.z, pl.w);
        }
#pragma unroll
        for (int tt = 0; tt < 2; ++tt) {  // stage the 16 tokens of group ip for the store
          const int tk = 16 * ip + 8 * tt + 2 * t4;
          ostg[tk * 16 + g] = cvt_out<IO>(X[2 * ip + tt][0]);
          ostg[(tk + 1) * 16 + g] = cvt_out<IO>(X[2 * ip + tt][1]);
          ostg[tk * 16 + g + 8] = cvt_out<IO>(X[2 * ip + tt][2]);
          ostg[(tk + 1) * 16 + g + 8] = cvt_out<IO>(X[2 * ip + tt][3]);
        }
      }
      warp_sync();
      E* ob = outp + t0 * p.out.stride[0] + h * p.out.stride[1] + vw;
      constexpr int kPer = 16 / static_cast<int>(sizeof(E));  // elements per 16 bytes
      constexpr int kPieces = 16 / kPer;                        // 16-byte pieces per row
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int r0 = 16 * (q == 0 ? ipa : ipb);
        if (vec_out) {
#pragma unroll
          for (int e = lane; e < 16 * kPieces; e += 32) {
            const int r = r0 + e / kPieces, pc = e % kPieces;
            if (r < L) store16(ob + r * p.out.stride[0] + pc * kPer, load16(ostg + r * 16 + pc * kPer));
          }
        } else {
          for (int e = lane; e < 16 * 16; e += 32) {
            const int r = r0 + (e >> 4), col = e & 15;
            if (r < L) ob[r * p.out.stride[0] + col] = ostg[r * 16 + col];
          }
        }
      }
    };
    if (half == 0) exchange_out(std::integral_constant<int, 0>{});
    else exchange_out(std::integral_constant<int, 1>{});
    block_sync();
    if (half == 0) finish(std::integral_constant<int, 0>{});
    else finish(std::integral_constant<int, 1>{});

    // S^T = gl S^T + (u diag(sk))^T k over this warp's key half
#pragma unroll
    for (int nt = 0; nt < kDT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) S[nt][e] *= gl;
#pragma unroll
    for (int s2 = 0; s2 < 4; ++s2) {
      float a0[4], a1[4];
      const int tk = 16 * s2 + 2 * t4;
      const float k0 = sk[tk], k1 = sk[tk + 1], k8 = sk[tk + 8], k9 = sk[tk + 9];
      a0[0] = Y[2 * s2][0] * k0;
      a0[1] = Y[2 * s2][1] * k1;
      a0[2] = Y[2 * s2][2] * k0;
      a0[3] = Y[2 * s2][3] * k1;
      a1[0] = Y[2 * s2 + 1][0] * k8;
      a1[1] = Y[2 * s2 + 1][1] * k9;
      a1[2] = Y[2 * s2 + 1][2] * k8;
      a1[3] = Y[2 * s2 + 1][3] * k9;
      uint32_t ah[4], al[4];
      frag_from_acc(a0, a1, ah, al);
#pragma unroll
      for (int dp = 0; dp < kDT / 2; ++dp) {
        const int fi = frag_at(s2, s0 + dp, kKS, lane);
        const u32x4 bh = frag(Kf, fi);
        mma(S[2 * dp], ah, bh.x, bh.y);
        mma(S[2 * dp + 1], ah, bh.z, bh.w);
        mma(S[2 * dp], al, bh.x, bh.y);
        mma(S[2 * dp + 1], al, bh.z, bh.w);
        if constexpr (kQS) {
          const u32x4 bl = frag(Kf + kFP, fi);
          mma(S[2 * dp], ah, bl.x, bl.y);
          mma(S[2 * dp + 1], ah, bl.z, bl.w);
        }
      }
    }
    block_sync();  // the stage and the exchange buffer are refilled next
    if (stages == 1 && ci + 1 < nch) {
      load_stage(0, c0 + ci + 1);
      cp_async_commit();
    }
  }

  const int64_t slot = final_slot(p, n);
#pragma unroll
  for (int nt = 0; nt < kDT; ++nt) {
    const int d = half * C::kDH + 8 * nt + 2 * t4;
    store_state(p, n, slot, h, d, vw + g, S[nt][0]);
    store_state(p, n, slot, h, d + 1, vw + g, S[nt][1]);
    store_state(p, n, slot, h, d, vw + g + 8, S[nt][2]);
    store_state(p, n, slot, h, d + 1, vw + g + 8, S[nt][3]);
  }
#else
  (void)p, (void)ws, (void)stages, (void)vec_out;
#endif  // DK_HAS_MMA_SYNC
}

}  // namespace dk::prefill::tc
