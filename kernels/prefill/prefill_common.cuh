// Pieces shared by the prefill kernels (generic SIMT path and tensor-core path):
// operand access with run-time dtypes, sequence bounds from cu_seqlens, gate and
// beta conversion, initial/final state access, and the chunk-offset kernel.
// Vendor-neutral: only dk:: shim names, no warp-size assumptions.
#pragma once
#include <stdint.h>

#include "../common/vendor.cuh"
#include "dk/problem.hpp"

namespace dk::prefill {

// ---- run-time dtype element access (sizes: dk::dtype_size) ----
DK_DEVICE float load_f(const void* base, dtype t, int64_t i) {
  switch (t) {
    case dtype::f32: return static_cast<const float*>(base)[i];
    case dtype::bf16: return bf16_bits_to_float(static_cast<const uint16_t*>(base)[i]);
    default: return f16_bits_to_float(static_cast<const uint16_t*>(base)[i]);
  }
}
DK_DEVICE void store_f(void* base, dtype t, int64_t i, float v) {
  switch (t) {
    case dtype::f32: static_cast<float*>(base)[i] = v; break;
    case dtype::bf16: static_cast<uint16_t*>(base)[i] = float_to_bf16_bits(v); break;
    default: static_cast<uint16_t*>(base)[i] = float_to_f16_bits(v); break;
  }
}
DK_DEVICE int64_t load_index(const operand& o, int64_t i) {
  const int64_t j = i * o.stride[0];
  return o.type == dtype::i64 ? static_cast<const int64_t*>(o.data)[j]
                              : static_cast<int64_t>(static_cast<const int32_t*>(o.data)[j]);
}

// ---- compile-time io dtype (q, k, v, out) ----
template <dtype T> struct io;
template <> struct io<dtype::f32> {
  using elem = float;
  DK_DEVICE static float to_f(float x) { return x; }
  DK_DEVICE static float from_f(float x) { return x; }
};
template <> struct io<dtype::bf16> {
  using elem = uint16_t;
  DK_DEVICE static float to_f(uint16_t x) { return bf16_bits_to_float(x); }
  DK_DEVICE static uint16_t from_f(float x) { return float_to_bf16_bits(x); }
};
template <> struct io<dtype::f16> {
  using elem = uint16_t;
  DK_DEVICE static float to_f(uint16_t x) { return f16_bits_to_float(x); }
  DK_DEVICE static uint16_t from_f(float x) { return float_to_f16_bits(x); }
};

// ---- one sequence's token range [bos, eos), clamped so that inconsistent
// cu_seqlens can never index outside the tensors or the workspace ----
DK_DEVICE void seq_bounds(const prefill_problem& p, int64_t n, int64_t& bos, int64_t& eos) {
  int64_t b = load_index(p.cu_seqlens, n);
  int64_t e = load_index(p.cu_seqlens, n + 1);
  b = b < 0 ? 0 : (b > p.num_tokens ? p.num_tokens : b);
  const int64_t lim = b + p.max_seqlen < p.num_tokens ? b + p.max_seqlen : p.num_tokens;
  e = e < b ? b : (e > lim ? lim : e);
  bos = b;
  eos = e;
}

// ---- gates and beta (SPEC §1) ----
DK_DEVICE float softplus20(float x) { return x > 20.f ? x : log1pf(expf(x)); }

// Log gate gamma of (token t, value head h, key d); d ignored unless per-key.
DK_DEVICE float gate_log(const prefill_problem& p, int64_t t, int h, int d) {
  if (p.r.gate == gate_kind::none) return 0.f;
  const bool pk = p.r.gate == gate_kind::per_key;
  const int64_t gi = t * p.g.stride[0] + h * p.g.stride[1] + (pk ? d * p.g.stride[2] : 0);
  const float a = load_f(p.g.data, p.g.type, gi);
  if (!p.r.gate_raw) return a;
  const float alog = load_f(p.a_log.data, p.a_log.type, h * p.a_log.stride[0]);
  float bias = 0.f;
  if (p.dt_bias.data)
    bias = load_f(p.dt_bias.data, p.dt_bias.type,
                  h * p.dt_bias.stride[0] + (pk ? d * p.dt_bias.stride[1] : 0));
  return -expf(alog) * softplus20(a + bias);
}

DK_DEVICE float beta_at(const prefill_problem& p, int64_t t, int h) {
  const float b = load_f(p.beta.data, p.beta.type, t * p.beta.stride[0] + h * p.beta.stride[1]);
  return p.r.beta_logit ? 1.f / (1.f + expf(-b)) : b;
}

// The gate and beta sources of one value head, resolved once per block so that loops
// keep a handful of scalars live instead of the whole problem.
struct head_gates {
  const void* g;       // g + h * stride[1]
  int64_t gs0, gs2;    // token stride, key stride (per-key)
  const void* dtb;     // per-key dt_bias row of head h (raw, per-key), else null
  int64_t ds1;
  const void* b;       // beta + h * stride[1]
  int64_t bs0;
  float neg_a;         // -exp(A_log[h]) (raw gates)
  float dtb0;          // scalar dt_bias[h] (raw, scalar gate)
  dtype gt, dt, bt;
  gate_kind kind;
  bool raw, logit;
};
DK_DEVICE head_gates make_head_gates(const prefill_problem& p, int h) {
  head_gates s;
  s.kind = p.r.gate;
  s.raw = p.r.gate_raw;
  s.logit = p.r.beta_logit;
  s.gt = p.g.type;
  s.g = p.g.data ? static_cast<const char*>(p.g.data) + h * p.g.stride[1] * dtype_size(p.g.type) : nullptr;
  s.gs0 = p.g.stride[0];
  s.gs2 = p.g.stride[2];
  s.bt = p.beta.type;
  s.b = static_cast<const char*>(p.beta.data) + h * p.beta.stride[1] * dtype_size(p.beta.type);
  s.bs0 = p.beta.stride[0];
  s.neg_a = 0.f;
  s.dtb0 = 0.f;
  s.dtb = nullptr;
  s.dt = p.dt_bias.type;
  s.ds1 = p.dt_bias.stride[1];
  if (s.raw && s.kind != gate_kind::none) {
    s.neg_a = -expf(load_f(p.a_log.data, p.a_log.type, h * p.a_log.stride[0]));
    if (p.dt_bias.data) {
      if (s.kind == gate_kind::per_key)
        s.dtb = static_cast<const char*>(p.dt_bias.data) + h * p.dt_bias.stride[0] * dtype_size(p.dt_bias.type);
      else
        s.dtb0 = load_f(p.dt_bias.data, p.dt_bias.type, h * p.dt_bias.stride[0]);
    }
  }
  return s;
}
// Log gate of token t (key d for per-key gates).
DK_DEVICE float gate_of(const head_gates& s, int64_t t, int d) {
  if (s.kind == gate_kind::none) return 0.f;
  const bool pk = s.kind == gate_kind::per_key;
  const float a = load_f(s.g, s.gt, t * s.gs0 + (pk ? d * s.gs2 : 0));
  if (!s.raw) return a;
  const float bias = pk ? (s.dtb ? load_f(s.dtb, s.dt, d * s.ds1) : 0.f) : s.dtb0;
  return s.neg_a * softplus20(a + bias);
}
DK_DEVICE float beta_of(const head_gates& s, int64_t t) {
  const float b = load_f(s.b, s.bt, t * s.bs0);
  return s.logit ? 1.f / (1.f + expf(-b)) : b;
}

// ---- state access: S[d][v] (d key row, v value column) of one (sequence, head) ----
// The element offset of S[d][v] inside one [HV, ., .] state given the layout.
DK_DEVICE int64_t state_offset(const operand& o, state_layout L, int h, int d, int v) {
  return L == state_layout::k_last ? h * o.stride[1] + v * o.stride[2] + d
                                   : h * o.stride[1] + d * o.stride[2] + v;
}
// Pool slot holding sequence n's initial state, or -1 (zeros).
DK_DEVICE int64_t initial_slot(const prefill_problem& p, int64_t n) {
  if (!p.pool.data || !p.initial_indices.data) return -1;
  const int64_t s = load_index(p.initial_indices, n);
  return s >= 0 && s < p.pool_slots ? s : -1;
}
DK_DEVICE int64_t final_slot(const prefill_problem& p, int64_t n) {
  if (!p.pool.data || !p.final_indices.data) return -1;
  const int64_t s = load_index(p.final_indices, n);
  return s >= 0 && s < p.pool_slots ? s : -1;
}
DK_DEVICE float load_state(const prefill_problem& p, int64_t slot, int h, int d, int v) {
  if (slot < 0) return 0.f;
  const int64_t i = slot * p.pool.stride[0] + state_offset(p.pool, p.r.layout, h, d, v);
  return load_f(p.pool.data, p.pool.type, i);
}
// Writes S[d][v] of (sequence n, head h) to the pool slot and/or the dense final_state.
DK_DEVICE void store_state(const prefill_problem& p, int64_t n, int64_t slot, int h, int d, int v,
                           float x) {
  if (slot >= 0) {
    const int64_t i = slot * p.pool.stride[0] + state_offset(p.pool, p.r.layout, h, d, v);
    store_f(const_cast<void*>(p.pool.data), p.pool.type, i, x);
  }
  if (p.final_state.data) {
    const int64_t i = n * p.final_state.stride[0] +
                      state_offset(p.final_state, p.r.layout, h, d, v);
    store_f(const_cast<void*>(p.final_state.data), p.final_state.type, i, x);
  }
}

// Where the final state of one (sequence, head) goes, resolved once: kernels that keep it
// in shared memory let the many problem fields it is made of die early.
struct state_dst {
  void* pool;               // pool slot + head offset, or null
  void* dense;              // final_state + (n, h) offset, or null
  int64_t pool_row, dense_row;  // element stride between rows (stride[2])
  dtype pool_t, dense_t;
  bool k_last;
};
DK_DEVICE state_dst make_state_dst(const prefill_problem& p, int64_t n, int h) {
  state_dst s;
  const int64_t slot = final_slot(p, n);
  s.k_last = p.r.layout == state_layout::k_last;
  s.pool_t = p.pool.type;
  s.pool_row = p.pool.stride[2];
  s.pool = slot >= 0 ? static_cast<char*>(const_cast<void*>(p.pool.data)) +
                           (slot * p.pool.stride[0] + h * p.pool.stride[1]) * dtype_size(p.pool.type)
                     : nullptr;
  s.dense_t = p.final_state.type;
  s.dense_row = p.final_state.stride[2];
  s.dense = p.final_state.data
                ? static_cast<char*>(const_cast<void*>(p.final_state.data)) +
                      (n * p.final_state.stride[0] + h * p.final_state.stride[1]) * dtype_size(p.final_state.type)
                : nullptr;
  return s;
}
DK_DEVICE void store_state(const state_dst& s, int d, int v, float x) {
  if (s.pool) store_f(s.pool, s.pool_t, s.k_last ? v * s.pool_row + d : d * s.pool_row + v, x);
  if (s.dense) store_f(s.dense, s.dense_t, s.k_last ? v * s.dense_row + d : d * s.dense_row + v, x);
}

// ---- chunk offsets: cu_chunks[n] = sum_{m<n} ceil(len_m / chunk), clamped to max_chunks ----
// One block; any block size that is a multiple of the wave size (<= 1024).
template <int kChunk>
__global__ void chunk_offsets_kernel(prefill_problem p, int64_t max_chunks, int32_t* cu_chunks) {
  __shared__ int64_t scan[1024];
  const int tid = threadIdx.x, nt = blockDim.x;
  int64_t carry = 0;
  for (int64_t base = 0; base < p.num_seqs; base += nt) {
    const int64_t n = base + tid;
    int64_t c = 0;
    if (n < p.num_seqs) {
      int64_t bos, eos;
      seq_bounds(p, n, bos, eos);
      c = (eos - bos + kChunk - 1) / kChunk;
    }
    scan[tid] = c;
    block_sync();
    for (int off = 1; off < nt; off <<= 1) {  // inclusive Hillis-Steele scan
      const int64_t add = tid >= off ? scan[tid - off] : 0;
      block_sync();
      scan[tid] += add;
      block_sync();
    }
    if (n < p.num_seqs) {
      const int64_t excl = carry + scan[tid] - c;
      cu_chunks[n] = static_cast<int32_t>(excl < max_chunks ? excl : max_chunks);
    }
    carry += scan[nt - 1];
    block_sync();
  }
  if (tid == 0) cu_chunks[p.num_seqs] = static_cast<int32_t>(carry < max_chunks ? carry : max_chunks);
}

// Largest number of chunks the sequences can need, from host integers only.
inline int64_t max_chunks(const prefill_problem& p, int chunk) {
  if (p.num_seqs <= 0) return 0;
  const int64_t per_seq = (p.max_seqlen + chunk - 1) / chunk;
  const int64_t a = p.num_seqs * per_seq;
  const int64_t b = (p.num_tokens + (chunk - 1) * p.num_seqs) / chunk;
  return a < b ? a : b;
}

}  // namespace dk::prefill
