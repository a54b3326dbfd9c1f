// Generic chunked (WY) prefill: plain fp32 arithmetic, any K, V that are multiples of 16
// up to 256, every gate kind. Correct on every target (wave64-safe: no lane-count
// assumptions beyond groups of 8/16 consecutive lanes). One fused kernel, no workspace:
// block (sequence, value head, 16-wide V tile) walks its sequence in chunks of `cg` (16 or 8)
// tokens and recomputes the chunk's WY pieces itself; the state tile S[:, vtile] lives in
// registers, 16 row groups x 16 columns over 256 threads.
//
// Per chunk (tokens j < cg, G = in-chunk cumulative log gate, per key for KDA):
//   A[i][j] = beta_i sum_d k_i k_j exp(G_i - G_j)  (i > j),   T = (I + A)^-1
//   P[i][j] = scale sum_d q_i k_j exp(G_i - G_j)    (i >= j)
//   r = (k . exp(G)) S,  u = T (beta . (v - r))                 (= U - W S of the WY form)
//   o = scale (q . exp(G)) S + P u
//   S = exp(G_last) S + (k . exp(G_last - G))^T u
// Decays are always formed from differences G_i - G_j <= 0 or G_last - G_j <= 0: never exp(-G).
#pragma once
#include "prefill_common.cuh"

namespace dk::prefill {

inline constexpr int kGenThreads = 256;
inline constexpr int kGenVT = 16;                         // V columns per block
inline constexpr int kGenRG = kGenThreads / kGenVT;       // row groups of the state tile
inline constexpr int kGenMaxK = 256;
inline constexpr int kGenNR = kGenMaxK / kGenRG;          // state rows per thread

// Shared-memory layout for chunk length CG: fixed offsets (sized for K = 256), so that the
// region addresses are constants rather than live registers.
template <int CG>
struct gen_smem {
  static constexpr int kQ = 0;                          // [CG][K]  q, then scale q exp(G)
  static constexpr int kK = kQ + CG * kGenMaxK;         // [CG][K]  k, then k exp(G)
  static constexpr int kG = kK + CG * kGenMaxK;         // [CG][K] or [CG]: G, then k exp(Gl - G)
  static constexpr int kV = kG + CG * kGenMaxK;         // [CG][VT]
  static constexpr int kRR = kV + CG * kGenVT;          // [CG][VT]  beta (v - r)
  static constexpr int kU = kRR + CG * kGenVT;          // [CG][VT]  u
  static constexpr int kUK = kU + CG * kGenVT;          // [CG][VT]  u exp(Gl - G) (scalar gates)
  static constexpr int kB = kUK + CG * kGenVT;          // [CG]
  static constexpr int kA = kB + CG;                    // [CG][CG]
  static constexpr int kT = kA + CG * CG;               // [CG][CG]
  static constexpr int kP = kT + CG * CG;               // [CG][CG]
  static constexpr int kGL = kP + CG * CG;              // [K]  G_last (log)
  static constexpr int kR0 = kGL + kGenMaxK;            // [RG][CG][VT]
  static constexpr int kR1 = kR0 + kGenRG * CG * kGenVT;
  static constexpr int kSC = kR1 + kGenRG * CG * kGenVT;  // [3][CG]: exp(G), scale exp(G), exp(Gl-G)
  static constexpr int kMisc = (kSC + 3 * CG + 3) / 4 * 4;  // 16-byte aligned: per-block constants
  static constexpr int kBytes = kMisc * 4 + 512;
};

template <dtype IO, int CG, bool PK>
__global__ void __launch_bounds__(kGenThreads) prefill_generic_kernel(prefill_problem p) {
  constexpr int cg = CG;
  using Lay = gen_smem<CG>;
  using T_ = io<IO>;
  using E = typename T_::elem;
  extern __shared__ __align__(16) float smem[];
  const int K = p.dk, V = p.dv;
  constexpr bool pk = PK;  // per-key gates (KDA)
  const int nvt = V / kGenVT;
  int64_t bid = blockIdx.x;
  const int vt = static_cast<int>(bid % nvt);
  bid /= nvt;
  const int h = static_cast<int>(bid % p.hv);
  const int64_t n = bid / p.hv;
  const int hk = h / (p.hv / p.hq);
  const int tid = threadIdx.x;
  const int vc = tid % kGenVT, rg = tid / kGenVT;
  const float scale = p.r.scale;

  float* qs = smem + Lay::kQ;
  float* ks = smem + Lay::kK;
  float* gs = smem + Lay::kG;
  float* vs = smem + Lay::kV;
  float* rr = smem + Lay::kRR;
  float* us = smem + Lay::kU;
  float* uk = smem + Lay::kUK;
  float* bs = smem + Lay::kB;
  float* Am = smem + Lay::kA;
  float* Tm = smem + Lay::kT;
  float* Pm = smem + Lay::kP;
  float* gl = smem + Lay::kGL;
  float* red0 = smem + Lay::kR0;
  float* red1 = smem + Lay::kR1;
  float* sc = smem + Lay::kSC;

  // per-head bases, resolved once and kept in shared memory (read back where used)
  struct io_bases {  // 64 bytes
    const E* q;
    const E* k;
    const E* v;
    E* o;
    int64_t qs0, ks0, vs0, os0;
  };
  static_assert(sizeof(io_bases) <= 128 && sizeof(head_gates) <= 128 && sizeof(state_dst) <= 256,
                "per-block constants overflow their shared-memory slots");
  io_bases& iob = *reinterpret_cast<io_bases*>(smem + Lay::kMisc);
  if (tid == 0) {
    iob.q = static_cast<const E*>(p.q.data) + hk * p.q.stride[1];
    iob.k = static_cast<const E*>(p.k.data) + hk * p.k.stride[1];
    iob.v = static_cast<const E*>(p.v.data) + h * p.v.stride[1] + vt * kGenVT;
    iob.o = static_cast<E*>(const_cast<void*>(p.out.data)) + h * p.out.stride[1] + vt * kGenVT;
    iob.qs0 = p.q.stride[0];
    iob.ks0 = p.k.stride[0];
    iob.vs0 = p.v.stride[0];
    iob.os0 = p.out.stride[0];
  }
  // read back per chunk: keeps the gate fields out of the loop's registers
  head_gates& hgs = *reinterpret_cast<head_gates*>(smem + Lay::kMisc + 32);
  if (tid == 0) hgs = make_head_gates(p, h);

  int64_t bos, eos;
  seq_bounds(p, n, bos, eos);
  const int64_t slot_in = initial_slot(p, n);

  // the state tile goes through shared memory on the way in and out: plain loops keep the
  // dtype/layout switches out of the unrolled register code
  float* stile = qs;  // [K][VT] (q, k, g regions are contiguous: 3 CG 256 >= 16 K floats)
  state_dst& dst = *reinterpret_cast<state_dst*>(smem + Lay::kMisc + 64);
  if (tid == 0) dst = make_state_dst(p, n, h);
  for (int e = tid; e < K * kGenVT; e += kGenThreads)
    stile[e] = load_state(p, slot_in, h, e / kGenVT, vt * kGenVT + e % kGenVT);
  block_sync();
  float hs[kGenNR];
#pragma unroll
  for (int i = 0; i < kGenNR; ++i) {
    const int d = rg + kGenRG * i;
    hs[i] = d < K ? stile[d * kGenVT + vc] : 0.f;
  }
  block_sync();

  for (int64_t t0 = bos; t0 < eos; t0 += cg) {
    const int L = static_cast<int>(eos - t0 < cg ? eos - t0 : cg);
    // 1. load the chunk (zero rows past the sequence end: they change nothing)
    const head_gates hg = hgs;
    const E* qg = iob.q;
    const E* kg = iob.k;
    const E* vg = iob.v;
    const int64_t qs0 = iob.qs0, ks0 = iob.ks0, vs0 = iob.vs0;
    for (int idx = tid; idx < cg * K; idx += kGenThreads) {
      const int j = idx / K, d = idx - j * K;
      const int64_t t = t0 + j;
      float qv = 0.f, kv = 0.f, gv = 0.f;
      if (j < L) {
        qv = T_::to_f(qg[t * qs0 + d]);
        kv = T_::to_f(kg[t * ks0 + d]);
        if (pk) gv = gate_of(hg, t, d);
      }
      qs[idx] = qv;
      ks[idx] = kv;
      if (pk) gs[idx] = gv;
    }
    for (int idx = tid; idx < cg * kGenVT; idx += kGenThreads) {
      const int j = idx / kGenVT, c = idx - j * kGenVT;
      vs[idx] = j < L ? T_::to_f(vg[(t0 + j) * vs0 + c]) : 0.f;
    }
    if (tid < cg) {
      bs[tid] = tid < L ? beta_of(hg, t0 + tid) : 0.f;
      if (!pk) gs[tid] = tid < L ? gate_of(hg, t0 + tid, 0) : 0.f;
    }
    block_sync();

    // 2. l2norm of q and k rows; in-chunk cumulative gates
    if (p.r.qk_l2norm) {
      constexpr int tpr = kGenThreads / (2 * CG);  // threads per row: 8 (CG 16) or 16 (CG 8)
      const int row = tid / tpr, part = tid % tpr;
      float* x = row < cg ? qs + row * K : ks + (row - cg) * K;
      float ss = 0.f;
      for (int d = part; d < K; d += tpr) ss += x[d] * x[d];
      ss = group_sum<tpr>(ss);
      const float rn = 1.f / sqrtf(ss + 1e-6f);
      for (int d = part; d < K; d += tpr) x[d] *= rn;
    }
    if (pk) {
      for (int d = tid; d < K; d += kGenThreads) {
        float acc = 0.f;
        for (int j = 0; j < cg; ++j) {
          acc += gs[j * K + d];
          gs[j * K + d] = acc;
        }
        gl[d] = acc;
      }
    } else if (tid == 0) {
      float acc = 0.f;
      for (int j = 0; j < cg; ++j) {
        acc += gs[j];
        gs[j] = acc;
      }
      gl[0] = acc;
    }
    block_sync();

    // 3. A (strictly lower) and P (lower with diagonal)
    for (int e = tid; e < cg * cg; e += kGenThreads) {
      const int i = e / cg, j = e - i * cg;
      float a = 0.f, pv = 0.f;
      if (j <= i) {
        float skk = 0.f, sqk = 0.f;
        const float* ki = ks + i * K;
        const float* kj = ks + j * K;
        const float* qi = qs + i * K;
        if (pk) {
          const float* gi = gs + i * K;
          const float* gj = gs + j * K;
          for (int d = 0; d < K; ++d) {
            const float w = kj[d] * expf(gi[d] - gj[d]);
            skk += ki[d] * w;
            sqk += qi[d] * w;
          }
        } else {
          for (int d = 0; d < K; ++d) {
            skk += ki[d] * kj[d];
            sqk += qi[d] * kj[d];
          }
          const float dec = expf(gs[i] - gs[j]);
          skk *= dec;
          sqk *= dec;
        }
        a = i > j ? bs[i] * skk : 0.f;
        pv = scale * sqk;
      }
      Am[e] = a;
      Pm[e] = pv;
    }
    block_sync();

    // 4. T = (I + A)^-1 by forward substitution (one column per thread), and the
    //    decayed operands (in place: q, k, G are not needed in their old form any more)
    if (tid < cg) {
      const int j = tid;
      for (int i = 0; i < cg; ++i) Tm[i * cg + j] = i == j ? 1.f : 0.f;
      for (int i = j + 1; i < cg; ++i) {
        float s = Am[i * cg + j];
        for (int m = j + 1; m < i; ++m) s += Am[i * cg + m] * Tm[m * cg + j];
        Tm[i * cg + j] = -s;
      }
    }
    if (pk) {
      for (int idx = tid; idx < cg * K; idx += kGenThreads) {
        const int d = idx % K;
        const float g = gs[idx];
        const float e = expf(g);
        const float kv = ks[idx];
        qs[idx] *= scale * e;
        ks[idx] = kv * e;
        gs[idx] = kv * expf(gl[d] - g);
      }
    } else if (tid >= 32 && tid < 32 + cg) {
      const int j = tid - 32;
      const float e = expf(gs[j]);
      sc[j] = e;
      sc[cg + j] = scale * e;
      sc[2 * cg + j] = expf(gl[0] - gs[j]);
    }
    block_sync();

    // 5. per row group: partial (k exp(G)) S and (q exp(G)) S
#pragma unroll 1
    for (int j = 0; j < cg; ++j) {
      float pr = 0.f, pq = 0.f;
      const float* kr = ks + j * K;
      const float* qr = qs + j * K;
#pragma unroll
      for (int i = 0; i < kGenNR; ++i) {
        const int d = rg + kGenRG * i;
        if (d < K) {
          pr += kr[d] * hs[i];
          pq += qr[d] * hs[i];
        }
      }
      red0[(rg * cg + j) * kGenVT + vc] = pr;
      red1[(rg * cg + j) * kGenVT + vc] = pq;
    }
    block_sync();

    // 6. rr = beta (v - r); the inter-chunk output q S lands in red1[j][c]
    for (int e = tid; e < cg * kGenVT; e += kGenThreads) {
      const int j = e / kGenVT, c = e - j * kGenVT;
      float r = 0.f, qh = 0.f;
      for (int g = 0; g < kGenRG; ++g) {
        r += red0[(g * cg + j) * kGenVT + c];
        qh += red1[(g * cg + j) * kGenVT + c];
      }
      if (!pk) {
        r *= sc[j];
        qh *= sc[cg + j];
      }
      rr[e] = bs[j] * (vs[e] - r);
      red1[e] = qh;
    }
    block_sync();

    // 7. u = T rr
    for (int e = tid; e < cg * kGenVT; e += kGenThreads) {
      const int j = e / kGenVT, c = e - j * kGenVT;
      float u = 0.f;
      for (int m = 0; m <= j; ++m) u += Tm[j * cg + m] * rr[m * kGenVT + c];
      us[e] = u;
      uk[e] = pk ? u : u * sc[2 * cg + j];
    }
    block_sync();

    // 8. output o = q S + P u, and the state update
    E* og = iob.o;
    const int64_t os0 = iob.os0;
    for (int e = tid; e < cg * kGenVT; e += kGenThreads) {
      const int j = e / kGenVT, c = e - j * kGenVT;
      if (j < L) {
        float o = red1[e];
        for (int m = 0; m <= j; ++m) o += Pm[j * cg + m] * us[m * kGenVT + c];
        og[(t0 + j) * os0 + c] = T_::from_f(o);
      }
    }
    const float* kd = pk ? gs : ks;
    const float g0 = pk ? 0.f : expf(gl[0]);
#pragma unroll
    for (int i = 0; i < kGenNR; ++i) {
      const int d = rg + kGenRG * i;
      if (d < K) {
        float acc = hs[i] * (pk ? expf(gl[d]) : g0);
#pragma unroll 4
        for (int j = 0; j < cg; ++j) acc += kd[j * K + d] * uk[j * kGenVT + vc];
        hs[i] = acc;
      }
    }
    block_sync();
  }

#pragma unroll
  for (int i = 0; i < kGenNR; ++i) {
    const int d = rg + kGenRG * i;
    if (d < K) stile[d * kGenVT + vc] = hs[i];
  }
  block_sync();
  const state_dst ds = dst;
  for (int e = tid; e < K * kGenVT; e += kGenThreads)
    store_state(ds, e / kGenVT, vt * kGenVT + e % kGenVT, stile[e]);
}

}  // namespace dk::prefill
