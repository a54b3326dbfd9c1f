// Device helpers of every decode body: the small operands in runtime dtypes,
// the gate and beta, sums over a row's lanes, 16-byte vectors of state
// elements <-> fp32, and the operand streams the general body stages.
#pragma once
#include <stdint.h>

#include "common/vendor.cuh"
#include "dk/problem.hpp"

namespace dk::gpu::decode_detail {

// ---- the small operands: runtime dtypes (uniform branches) ----
// load_bits() only issues the load; the conversion (bits_to_f) comes later.
// A conversion right after each load would make every load wait for the one
// before it (serial DRAM latencies); this way a thread has all of them in flight.
DK_DEVICE uint32_t load_bits(const operand& o, int64_t i) {
  return o.type == dtype::f32 ? static_cast<const uint32_t*>(o.data)[i]
                              : uint32_t(static_cast<const uint16_t*>(o.data)[i]);
}
// Branch-free (selects): 0 bits are 0.0 in every dtype.
DK_DEVICE float bits_to_f(uint32_t bits, dtype t) {
  const float as_f32 = bits_to_float(bits);
  const float as_bf16 = bits_to_float(bits << 16);
  const float as_f16 = f16_bits_to_float(uint16_t(bits));
  return t == dtype::f32 ? as_f32 : t == dtype::bf16 ? as_bf16 : as_f16;
}
DK_DEVICE void store_f(const operand& o, int64_t i, float x) {
  void* d = const_cast<void*>(o.data);
  switch (o.type) {
    case dtype::bf16: static_cast<uint16_t*>(d)[i] = float_to_bf16_bits(x); break;
    case dtype::f16: static_cast<uint16_t*>(d)[i] = float_to_f16_bits(x); break;
    default: static_cast<float*>(d)[i] = x; break;
  }
}
DK_DEVICE int64_t load_index(const operand& o, int64_t i) {
  return o.type == dtype::i64 ? static_cast<const int64_t*>(o.data)[i]
                              : int64_t(static_cast<const int32_t*>(o.data)[i]);
}
// The same as two unconditional 32-bit loads (int32: the same word twice), so
// that a range check waits for the index alone: load_index's predicated-off
// 64-bit load shared a scoreboard with the body's v, q and k loads (SASS).
DK_DEVICE int64_t load_index_words(const operand& o, int64_t i) {
  const bool is_i64 = o.type == dtype::i64;
  const uint32_t* const w = static_cast<const uint32_t*>(o.data) + i * (is_i64 ? 2 : 1);
  const uint32_t lo = w[0], upper = w[is_i64 ? 1 : 0];
  const uint32_t hi = is_i64 ? upper : uint32_t(int32_t(lo) >> 31);
  return int64_t((uint64_t(hi) << 32) | lo);
}
// Sequence b's state slot (b itself without an index array), as instance G reads it.
template <class G>
DK_DEVICE int64_t slot_of(const decode_problem& p, int64_t b) {
  if (!p.indices.data) return b;
  const int64_t i = b * p.indices.stride[0];
  if constexpr (G::slot_words) return load_index_words(p.indices, i);
  else return load_index(p.indices, i);
}

DK_DEVICE float softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }

// exp(gamma) from the gate value; raw: gamma = -exp(A_log) * softplus(a + dt_bias).
// Approx: with the hardware's approximate exp and log (relative error about
// 2^-21, far inside the fp32 tolerance), for the per-key gates, one decay per
// key and thread, where expf / log1pf cost ~60 instructions each.
template <bool Approx = false>
DK_DEVICE float decay_of(float g, float dt_bias, float a_log, bool raw) {
  if constexpr (Approx) {
    if (raw) {
      const float x = g + dt_bias;
      g = -fast_exp(a_log) * (x > 20.f ? x : fast_log(1.f + fast_exp(x)));
    }
    return fast_exp(g);
  } else {
    if (raw) g = -expf(a_log) * softplus(g + dt_bias);
    return expf(g);
  }
}

// The scalar gate's inputs and beta of one (sequence, head) at T = 1: issue()
// starts the loads (they join the caller's other loads in one trip to memory),
// finish() converts them to the decay and beta.
struct head_gate {
  uint32_t beta_bits, gate_bits, a_log_bits, bias_bits;
  DK_DEVICE void issue(const decode_problem& p, int64_t b, int h) {
    const bool scalar_gate = p.r.gate == gate_kind::scalar, raw = p.r.gate_raw && scalar_gate;
    beta_bits = load_bits(p.beta, b * p.beta.stride[0] + h * p.beta.stride[2]);
    gate_bits = scalar_gate ? load_bits(p.g, b * p.g.stride[0] + h * p.g.stride[2]) : 0u;
    a_log_bits = raw ? load_bits(p.a_log, h * p.a_log.stride[0]) : 0u;
    bias_bits = raw && p.dt_bias.data ? load_bits(p.dt_bias, h * p.dt_bias.stride[0]) : 0u;
  }
  DK_DEVICE void finish(const decode_problem& p, float& d, float& beta) const {
    const bool scalar_gate = p.r.gate == gate_kind::scalar, raw = p.r.gate_raw && scalar_gate;
    d = scalar_gate ? decay_of(bits_to_f(gate_bits, p.g.type), bits_to_f(bias_bits, p.dt_bias.type),
                               bits_to_f(a_log_bits, p.a_log.type), raw)
                    : 1.f;
    beta = bits_to_f(beta_bits, p.beta.type);
    if (p.r.beta_logit) beta = 1.f / (1.f + expf(-beta));
  }
};

// The sum over a row's W lanes, which sit STRIDE lanes apart.
template <int W, int STRIDE = 1>
DK_DEVICE float lanes_sum(float v) {
  if constexpr (STRIDE == 1) {
    return group_sum<W>(v);
  } else {
#pragma unroll
    for (int m = STRIDE; m < STRIDE * W; m <<= 1) v += shfl_xor(v, m);
    return v;
  }
}
// The q/k l2 norm's epsilon (SPEC: q / sqrt(q.q + 1e-6)).
constexpr float kQkNormEps = 1e-6f;
// The l2-norm factors of k and q from the sums k.k and q.q (rq carrying the
// output scale); 1 and the scale when the norm is off.
DK_DEVICE void l2norm_factors(bool l2norm, float scale, float kk, float qq, float& rk, float& rq) {
  rk = 1.f, rq = scale;
  if (l2norm) {
    rk = rsqrtf(kk + kQkNormEps);
    rq *= rsqrtf(qq + kQkNormEps);
  }
}

// T = 1: k.q, and k.k and q.q when the norms are needed, from a thread's
// partial sums to the sums over its row's W lanes.
template <int W, int STRIDE = 1>
DK_DEVICE void finish_qk_sums(const decode_problem& p, float& kk, float& qq, float& kq) {
  kq = lanes_sum<W, STRIDE>(kq);
  if (p.r.qk_l2norm) {
    kk = lanes_sum<W, STRIDE>(kk);
    qq = lanes_sum<W, STRIDE>(qq);
  }
}

// ---- 16-byte vectors of state elements <-> fp32 ----
template <dtype S>
DK_DEVICE float elem_to_float(const void* base, int e) {
  if constexpr (S == dtype::f32) return static_cast<const float*>(base)[e];
  else if constexpr (S == dtype::bf16) return bf16_bits_to_float(static_cast<const uint16_t*>(base)[e]);
  else return f16_bits_to_float(static_cast<const uint16_t*>(base)[e]);
}
template <dtype S>
DK_DEVICE void float_to_elem(void* base, int e, float x) {
  if constexpr (S == dtype::f32) static_cast<float*>(base)[e] = x;
  else if constexpr (S == dtype::bf16) static_cast<uint16_t*>(base)[e] = float_to_bf16_bits(x);
  else static_cast<uint16_t*>(base)[e] = float_to_f16_bits(x);
}
template <dtype S>
DK_DEVICE float half_to_float(uint32_t bits) {
  if constexpr (S == dtype::bf16) return bf16_bits_to_float(uint16_t(bits));
  else return f16_bits_to_float(uint16_t(bits));
}
template <dtype S>
DK_DEVICE uint32_t pack_halves(float lo, float hi) {
  if constexpr (S == dtype::bf16) return pack_bf16x2(lo, hi);
  else return pack_f16x2(lo, hi);
}

// Loads the 16 bytes at p into f[0 .. 16/esize): one 128-bit load when aligned.
template <dtype S>
DK_DEVICE void load_vec(const char* p, bool aligned, float* f) {
  constexpr int n = S == dtype::f32 ? 4 : 8;
  if (aligned) {
    const u32x4 w = load16(p);
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
    if constexpr (S == dtype::f32) {
#pragma unroll
      for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(words[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        f[2 * i] = half_to_float<S>(words[i] & 0xffffu);
        f[2 * i + 1] = half_to_float<S>(words[i] >> 16);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < n; ++i) f[i] = elem_to_float<S>(p, i);
  }
}
template <dtype S>
DK_DEVICE void store_vec(char* p, bool aligned, const float* f) {
  constexpr int n = S == dtype::f32 ? 4 : 8;
  if (aligned) {
    uint32_t words[4];
    if constexpr (S == dtype::f32) {
#pragma unroll
      for (int i = 0; i < 4; ++i) words[i] = __float_as_uint(f[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) words[i] = pack_halves<S>(f[2 * i], f[2 * i + 1]);
    }
    store16(p, u32x4{words[0], words[1], words[2], words[3]});
  } else {
#pragma unroll
    for (int i = 0; i < n; ++i) float_to_elem<S>(p, i, f[i]);
  }
}

// One operand of one (sequence, head) as the general kernel stages it: element
// (t, i) is at base + (t * tstride + i) << shift (inner dims contiguous).
// Base and token stride are per-block constants kept in vector registers
// (dk::vector_reg): on gfx906 the five streams would otherwise hold ~25 of its
// ~100 scalar registers across the staging loops and spill.
struct stream {
  const char* base;
  int64_t tstride;
  dtype type;
  int shift;
  DK_DEVICE uint32_t load(int t, int i) const {
    const char* at = base + ((t * tstride + i) << shift);
    return shift == 2 ? *reinterpret_cast<const uint32_t*>(at)
                      : uint32_t(*reinterpret_cast<const uint16_t*>(at));
  }
};
DK_DEVICE stream stream_of(const operand& o, int64_t offset, int64_t tstride) {
  const int shift = o.type == dtype::f32 ? 2 : 1;
  return {vector_reg(static_cast<const char*>(o.data) + (offset << shift)), vector_reg(tstride), o.type,
          shift};
}

}  // namespace dk::gpu::decode_detail
