// The validated, normalised description of one op call that backends receive.
// Plain data only (no std types) so that CUDA/HIP device code can take it by value.
#pragma once
#include <stdint.h>

namespace dk {

enum class dtype : uint8_t { f32 = 0, bf16 = 1, f16 = 2, i32 = 3, i64 = 4 };
enum class gate_kind : uint8_t { none = 0, scalar = 1, per_key = 2 };
enum class state_layout : uint8_t { k_last = 0, v_last = 1 };

// The most tokens per sequence a decode call takes (validation rejects more;
// backends may rely on it when they pick kernels).
constexpr int kMaxDecodeTokens = 16;

// One operand after validation. data has byte_offset applied; it is nullptr
// for an absent optional operand (and for every operand in a query).
// stride[d] is the element stride of logical dim d (outermost first); dims
// that are contiguous by contract still carry their stride (always 1 there).
struct operand {
  const void* data;
  dtype type;
  int64_t stride[4];
};

// Semantics shared by decode and prefill (SPEC §1).
struct rule {
  gate_kind gate;
  bool gate_raw;    // g holds `a`: gamma = -exp(A_log[h]) * softplus(a + dt_bias)
  bool beta_logit;  // beta = sigmoid(b)
  bool qk_l2norm;   // q, k *= rsqrt(sum(x^2) + 1e-6)
  state_layout layout;
  float scale;      // resolved: never 0
};

// Logical dims of every operand, outermost first:
//   q, k [B, T, HQ, K]; v, out [B, T, HV, V]; g [B, T, HV] or [B, T, HV, K];
//   beta [B, T, HV]; a_log [HV]; dt_bias [HV] or [HV, K];
//   pool [P, HV, V, K] (k_last) or [P, HV, K, V] (v_last);
//   indices [B]; out_indices [B]; token_indices [B, T].
struct decode_problem {
  rule r;
  int32_t batch, tokens, hq, hv, dk, dv;
  int64_t pool_slots;
  operand q, k, v, out, g, beta, a_log, dt_bias;
  operand pool, indices, out_indices, token_indices;
  // How the call launches, not what it computes: programmatic dependent launch
  // (DK_OPTION_PROGRAMMATIC_LAUNCH), taken from the context.
  bool programmatic_launch;
};

// Logical dims: q, k [Ntok, HQ, K]; v, out [Ntok, HV, V]; g [Ntok, HV] or
// [Ntok, HV, K]; beta [Ntok, HV]; a_log, dt_bias as decode; cu_seqlens [N+1];
// pool [P, HV, ., .]; initial_indices, final_indices [N];
// final_state [N, HV, ., .] (layout as r.layout).
struct prefill_problem {
  rule r;
  int32_t hq, hv, dk, dv;
  int64_t num_seqs, num_tokens, max_seqlen;
  int64_t pool_slots;
  operand q, k, v, out, g, beta, a_log, dt_bias;
  operand cu_seqlens, pool, initial_indices, final_indices, final_state;
};

inline constexpr int dtype_size(dtype t) {
  return t == dtype::f32 || t == dtype::i32 ? 4 : t == dtype::i64 ? 8 : 2;
}

}  // namespace dk
