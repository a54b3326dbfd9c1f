// decode_body: the general decode body (any T <= 16, gate, K and dtypes).
//
// The block reads its tile of the state once into registers, runs the T <= 16
// tokens on it, and writes it back once (or after every token, for per-token
// slots). q, k, v, beta and the gates (as decays) of all T tokens are staged
// once in shared memory as fp32, so the token loop touches global memory only
// for the outputs. Every load that does not depend on the slot index is issued
// before the slot is known: a block waits on global memory about twice.
//
// Per token, with the state S held as a (keys x values) patch per thread and
// raw q, k (rk, rq: the l2-norm factors, 1 without l2norm; rq carries scale):
//   S *= decay                            (scalar or per key)
//   sk = S^T k, sq = S^T q, k.k, q.q, k.q (partial sums, butterflies over the
//                                          lanes_k lanes, then over warps_k
//                                          warps through shared memory)
//   u  = beta * (v - rk sk)
//   o  = rq sq + u (rk rq k.q)            (= S_new^T q_hat)
//   S += (rk k) u^T
#pragma once
#include "decode_geometry.cuh"
#include "decode_operands.cuh"

namespace dk::gpu::decode_detail {

template <class G, dtype S>
DK_DEVICE void decode_body(const launch_params& lp) {
  constexpr int NK = G::nk, NV = G::nv, LK = G::lanes_k, LV = G::lanes_v, WK = G::warps_k;
  constexpr int VEC = G::vec, KC = G::k_cover, ES = G::esize;
  extern __shared__ f32x4 smem_vec[];
  float* const smem = reinterpret_cast<float*>(smem_vec);

  const decode_problem& p = lp.p;
  const int tid = int(threadIdx.x);
  const int nthreads = int(blockDim.x);
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int kl = lane % LK, vl = lane / LK;  // lane's place along K and along V
  const int kw = warp % WK, wv = warp / WK;  // warp's place along K and along V
  const int v_tile = lp.v_tile;  // a power of two
  const int v_shift = lp.v_shift;

  // blockIdx.x = (b * HV + h) * v_tiles + tile; 32-bit unsigned division (the
  // host keeps the grid below 2^31), far cheaper than 64-bit.
  const uint32_t bh = uint32_t(blockIdx.x) / uint32_t(lp.v_tiles);
  const int tile = int(uint32_t(blockIdx.x) - bh * uint32_t(lp.v_tiles));
  const int64_t b = int64_t(bh / uint32_t(p.hv));
  const int h = int(bh - uint32_t(b) * uint32_t(p.hv));
  const int T = p.tokens, K = p.dk, V = p.dv;
  const int v0 = tile * v_tile;                // block's first value index
  const int vw = v0 + wv * G::v_per_warp;      // warp's first value index
  const operand& out = p.out;
  const int64_t out_bh = b * out.stride[0] + h * out.stride[2];

  // Every load that does not depend on the slot is issued before the slot is
  // used, so the block waits for global memory about twice (slot, then state)
  // rather than once per operand.
  const int64_t slot = p.indices.data ? load_index(p.indices, b * p.indices.stride[0]) : b;
  const bool per_token = p.token_indices.data != nullptr;
  const int64_t out_slot_raw =
      p.out_indices.data ? load_index(p.out_indices, b * p.out_indices.stride[0]) : slot;

  // The T tokens' inputs, to be staged in shared memory. Round 0 (R elements
  // per thread of q/k/per-key gates, and of v) is loaded now, into registers.
  const bool per_key = p.r.gate == gate_kind::per_key;
  const bool scalar_gate = p.r.gate == gate_kind::scalar;
  const bool raw = p.r.gate_raw && p.r.gate != gate_kind::none;
  const bool has_bias = raw && p.dt_bias.data != nullptr;
  const operand &qo = p.q, &ko = p.k, &vo = p.v, &go = p.g, &dto = p.dt_bias;
  const int qk_head = h / (p.hv / p.hq);
  // Each staged operand as (this block's base pointer, token stride, dtype):
  // last dims are contiguous (validation), so no inner strides; few 64-bit
  // values stay live across the staging loop (gfx906 has ~100 SGPRs).
  const stream qst = stream_of(qo, b * qo.stride[0] + qk_head * qo.stride[2], qo.stride[1]);
  const stream kst = stream_of(ko, b * ko.stride[0] + qk_head * ko.stride[2], ko.stride[1]);
  const stream vst = stream_of(vo, b * vo.stride[0] + h * vo.stride[2] + v0, vo.stride[1]);
  const int64_t g_b = b * go.stride[0] + h * go.stride[2];
  const stream gst = stream_of(go, per_key ? g_b : 0, go.stride[1]);
  const stream dst_ = stream_of(dto, per_key && has_bias ? h * dto.stride[0] : 0, 0);
  const int n_qk = T * KC, n_v = T * v_tile;
  constexpr int R = G::stage_rounds;
  uint32_t qb[R], kb[R], gb[R], db[R], vb[R];
  // Issues R elements per thread of the chosen operands (the flags are
  // constants at every call: each later staging loop keeps only its own
  // operands' pointers live).
  auto issue = [&](int i0, bool qk, bool gates, bool vals) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = i0 + r * nthreads;
      qb[r] = kb[r] = gb[r] = db[r] = vb[r] = 0u;
      if (i < n_qk) {
        const int t = i / KC, key = i % KC;
        if (G::exact_k || key < K) {
          if (qk) {
            qb[r] = qst.load(t, key);
            kb[r] = kst.load(t, key);
          }
          if (gates && per_key) {
            gb[r] = gst.load(t, key);
            if (has_bias) db[r] = dst_.load(0, key);
          }
        }
      }
      if (vals && i < n_v) {
        const int t = i >> v_shift, val = i & (v_tile - 1);
        if (v0 + val < V) vb[r] = vst.load(t, val);
      }
    }
  };
  issue(tid, true, true, true);
  const uint32_t a_log_bits = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
  // Per-token scalars, thread t for token t (T <= 16 <= threads).
  uint32_t beta_bits = 0u, gate_bits = 0u, bias_bits = 0u;
  int64_t token_slot = -1;
  if (tid < T) {
    const operand& be = p.beta;
    beta_bits = load_bits(be, b * be.stride[0] + tid * be.stride[1] + h * be.stride[2]);
    if (scalar_gate) {
      gate_bits = load_bits(go, g_b + tid * go.stride[1]);
      if (has_bias) bias_bits = load_bits(dto, h * dto.stride[0]);
    }
    if (per_token) {
      const operand& ti = p.token_indices;
      token_slot = load_index(ti, b * ti.stride[0] + tid * ti.stride[1]);
    }
  }

  // Slot -1 or out of range: padding, the output is zero, the pool untouched.
  if (slot < 0 || slot >= p.pool_slots) {
    for (int i = tid; i < T * v_tile; i += nthreads) {
      const int t = i / v_tile, val = v0 + i % v_tile;
      if (val < V) store_f(out, out_bh + t * out.stride[1] + val, 0.f);
    }
    return;
  }

  // This thread's keys and values: a -> key, j -> value.
  auto key_of = [&](int a) {
    if constexpr (G::k_last) return ((a / VEC) * LK + kl) * VEC + a % VEC;
    else return kw * (NK * LK) + kl * NK + a;
  };
  auto value_of = [&](int j) {
    if constexpr (G::k_last) return vw + j * LV + vl;
    else return vw + ((j / VEC) * LV + vl) * VEC + j % VEC;
  };

  const operand& pool = p.pool;
  const int64_t row_stride = vector_reg(pool.stride[2]);
  auto head_ptr = [&](int64_t sl) {
    return vector_reg(static_cast<const char*>(pool.data) +
                      (sl * pool.stride[0] + int64_t(h) * pool.stride[1]) * ES);
  };
  // Pool rows are 16-byte aligned: validation requires a 16-byte aligned base
  // and outer strides, and the rows (K or V elements, multiples of 16) are compact.
  auto aligned = [](const char*) { return true; };

  // ---- the state tile, read once ----
  float s[NV][NK];
  {
    const char* hp = head_ptr(slot);
    const bool al = aligned(hp);
    if constexpr (G::k_last) {
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int v = value_of(j);
#pragma unroll
        for (int c = 0; c < NK / VEC; ++c) {
          const int k = (c * LK + kl) * VEC;
          if (v < V && (G::exact_k || k < K)) {
            load_vec<S>(hp + (int64_t(v) * row_stride + k) * ES, al, &s[j][c * VEC]);
          } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) s[j][c * VEC + e] = 0.f;
          }
        }
      }
    } else {
#pragma unroll
      for (int a = 0; a < NK; ++a) {
        const int k = key_of(a);
#pragma unroll
        for (int c = 0; c < NV / VEC; ++c) {
          const int v = vw + (c * LV + vl) * VEC;
          float f[VEC];
          if ((G::exact_k || k < K) && v < V) {
            load_vec<S>(hp + (int64_t(k) * row_stride + v) * ES, al, f);
          } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) f[e] = 0.f;
          }
#pragma unroll
          for (int e = 0; e < VEC; ++e) s[c * VEC + e][a] = f[e];
        }
      }
    }
  }
  auto store_state = [&](int64_t sl) {
    char* hp = const_cast<char*>(head_ptr(sl));
    const bool al = aligned(hp);
    // Bounds re-read into vector registers: the store's predicates are then
    // recomputed here instead of the load's being kept live (on wave64 each is
    // a 64-bit lane mask in scalar registers).
    const int V = vector_reg(p.dv), K = vector_reg(p.dk);
    if constexpr (G::k_last) {
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int v = value_of(j);
#pragma unroll
        for (int c = 0; c < NK / VEC; ++c) {
          const int k = (c * LK + kl) * VEC;
          if (v < V && (G::exact_k || k < K))
            store_vec<S>(hp + (int64_t(v) * row_stride + k) * ES, al, &s[j][c * VEC]);
        }
      }
    } else {
#pragma unroll
      for (int a = 0; a < NK; ++a) {
        const int k = key_of(a);
#pragma unroll
        for (int c = 0; c < NV / VEC; ++c) {
          const int v = vw + (c * LV + vl) * VEC;
          float f[VEC];
#pragma unroll
          for (int e = 0; e < VEC; ++e) f[e] = s[c * VEC + e][a];
          if ((G::exact_k || k < K) && v < V)
            store_vec<S>(hp + (int64_t(k) * row_stride + v) * ES, al, f);
        }
      }
    }
  };

  // ---- stage the T tokens' inputs in shared memory ----
  const smem_layout lay = make_smem_layout(T, KC, per_key, v_tile, WK);
  float* const qs = smem + lay.q;
  float* const ks = smem + lay.k;
  float* const gs = smem + lay.gate;
  float* const vs = smem + lay.v;
  float* const sc = smem + lay.scalars;
  float* const red = smem + lay.red;
  {
    const float a_log = bits_to_f(a_log_bits, p.a_log.type);
    auto commit = [&](int i0, bool qk, bool gates, bool vals) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int i = i0 + r * nthreads;
        if (i < n_qk) {
          if (qk) {
            qs[i] = bits_to_f(qb[r], qst.type);
            ks[i] = bits_to_f(kb[r], kst.type);
          }
          if (gates && per_key) {
            const int key = i % KC;
            gs[i] = (G::exact_k || key < K)
                        ? decay_of(bits_to_f(gb[r], gst.type), bits_to_f(db[r], dst_.type), a_log, raw)
                        : 1.f;
          }
        }
        if (vals && i < n_v) vs[i] = bits_to_f(vb[r], vst.type);
      }
    };
    commit(tid, true, true, true);
    // The rest (T > 1 or small blocks), one operand group per loop.
    for (int i0 = tid + R * nthreads; i0 < n_qk; i0 += R * nthreads) {
      issue(i0, true, false, false);
      commit(i0, true, false, false);
    }
    if (per_key) {
      for (int i0 = tid + R * nthreads; i0 < n_qk; i0 += R * nthreads) {
        issue(i0, false, true, false);
        commit(i0, false, true, false);
      }
    }
    for (int i0 = tid + R * nthreads; i0 < n_v; i0 += R * nthreads) {
      issue(i0, false, false, true);
      commit(i0, false, false, true);
    }
    if (tid < T) {
      float bt = bits_to_f(beta_bits, p.beta.type);
      if (p.r.beta_logit) bt = 1.f / (1.f + expf(-bt));
      sc[8 * tid + 0] = bt;
      sc[8 * tid + 1] = scalar_gate ? decay_of(bits_to_f(gate_bits, go.type),
                                               bits_to_f(bias_bits, dto.type), a_log, raw)
                                    : 1.f;
      *reinterpret_cast<int64_t*>(sc + 8 * tid + 4) = token_slot;
    }
  }
  block_sync();

  // Reads this thread's NK keys of a staged row (16-byte shared-memory reads).
  auto read_keys = [&](const float* row, float* x) {
#pragma unroll
    for (int c = 0; c < NK / 4; ++c) {
      int at;
      if constexpr (G::k_last) at = ((c * 4 / VEC) * LK + kl) * VEC + (c * 4) % VEC;
      else at = kw * (NK * LK) + kl * NK + c * 4;
      const f32x4 w = load16f(row + at);
      x[4 * c + 0] = w.x;
      x[4 * c + 1] = w.y;
      x[4 * c + 2] = w.z;
      x[4 * c + 3] = w.w;
    }
  };

  // ---- the tokens ----
  const bool l2norm = p.r.qk_l2norm;
  const float scale = p.r.scale;
  for (int t = 0; t < T; ++t) {
    float kr[NK], qr[NK];
    read_keys(ks + t * KC, kr);
    read_keys(qs + t * KC, qr);
    if (per_key) {
      float dr[NK];
      read_keys(gs + t * KC, dr);
#pragma unroll
      for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int a = 0; a < NK; ++a) s[j][a] *= dr[a];
    } else if (p.r.gate == gate_kind::scalar) {
      const float d = sc[8 * t + 1];
#pragma unroll
      for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int a = 0; a < NK; ++a) s[j][a] *= d;
    }
    // Dots with the raw (staged) k and q; the l2 norms and the output scale are
    // applied to the sums, and k.k, q.q, k.q ride along in the same butterflies.
    float sk[NV], sq[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      float x = 0.f, y = 0.f;
#pragma unroll
      for (int a = 0; a < NK; ++a) {
        x = fmaf(s[j][a], kr[a], x);
        y = fmaf(s[j][a], qr[a], y);
      }
      sk[j] = x;
      sq[j] = y;
    }
    float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma unroll
    for (int a = 0; a < NK; ++a) {
      kk = fmaf(kr[a], kr[a], kk);
      qq = fmaf(qr[a], qr[a], qq);
      kq = fmaf(kr[a], qr[a], kq);
    }
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      sk[j] = group_sum<LK>(sk[j]);
      sq[j] = group_sum<LK>(sq[j]);
    }
    kq = group_sum<LK>(kq);
    if (l2norm) {
      kk = group_sum<LK>(kk);
      qq = group_sum<LK>(qq);
    }
    if constexpr (WK > 1) {
      // Finish the sums over K across warps; double-buffered by token parity,
      // so one barrier per token suffices.
      float* rb = red + (t & 1) * (WK * (2 * v_tile + 4));
      float* rs = rb + WK * 2 * v_tile;  // per warp: k.k, q.q, k.q
      if (kl == 0) {
#pragma unroll
        for (int j = 0; j < NV; ++j) {
          const int lv = value_of(j) - v0;
          rb[(kw * 2 + 0) * v_tile + lv] = sk[j];
          rb[(kw * 2 + 1) * v_tile + lv] = sq[j];
        }
        if (vl == 0 && wv == 0) {
          rs[kw * 4 + 0] = kk;
          rs[kw * 4 + 1] = qq;
          rs[kw * 4 + 2] = kq;
        }
      }
      block_sync();
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int lv = value_of(j) - v0;
        float x = 0.f, y = 0.f;
#pragma unroll
        for (int w = 0; w < WK; ++w) {
          x += rb[(w * 2 + 0) * v_tile + lv];
          y += rb[(w * 2 + 1) * v_tile + lv];
        }
        sk[j] = x;
        sq[j] = y;
      }
      kk = qq = kq = 0.f;
#pragma unroll
      for (int w = 0; w < WK; ++w) {
        kk += rs[w * 4 + 0];
        qq += rs[w * 4 + 1];
        kq += rs[w * 4 + 2];
      }
    }
    float rk, rq;
    l2norm_factors(l2norm, scale, kk, qq, rk, rq);
    const float bt = sc[8 * t + 0], kqn = kq * rk * rq;
    const int64_t out_t = vector_reg(out_bh + t * out.stride[1]);
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int v = value_of(j);
      const float u = bt * (vs[t * v_tile + (v - v0)] - rk * sk[j]);
      if (kl == 0 && kw == 0 && v < V)
        store_f(out, out_t + v, fmaf(u, kqn, rq * sq[j]));
      const float uk = u * rk;  // S += (rk k) u^T
#pragma unroll
      for (int a = 0; a < NK; ++a) s[j][a] = fmaf(kr[a], uk, s[j][a]);
    }
    if (per_token) {
      const int64_t sl = *reinterpret_cast<const int64_t*>(sc + 8 * t + 4);
      if (sl >= 0 && sl < p.pool_slots) store_state(sl);
    }
  }

  // ---- the state tile, written once ----
  if (!per_token && out_slot_raw >= 0 && out_slot_raw < p.pool_slots) store_state(out_slot_raw);
}

}  // namespace dk::gpu::decode_detail
