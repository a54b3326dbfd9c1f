#include "validate.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "dk/hal.hpp"

namespace dk {
namespace {

constexpr int64_t kMaxHeadDim = 256;
constexpr uint64_t kRowAlignment = 16;  // kernels load 16-byte vectors along rows

// Sets of dtypes an operand accepts.
enum dtype_set : unsigned {
  kF32 = 1u << 0, kBF16 = 1u << 1, kF16 = 1u << 2, kI32 = 1u << 3, kI64 = 1u << 4,
  kActivations = kF32 | kBF16 | kF16,
  kParams = kF32 | kBF16,
  kStates = kF32 | kBF16 | kF16,
  kIndices = kI32 | kI64,
};

bool to_dtype(const dk_dtype& d, dtype* out) {
  if (d.lanes != 1) return false;
  if (d.code == DK_DTYPE_CODE_FLOAT && d.bits == 32) return *out = dtype::f32, true;
  if (d.code == DK_DTYPE_CODE_FLOAT && d.bits == 16) return *out = dtype::f16, true;
  if (d.code == DK_DTYPE_CODE_BFLOAT && d.bits == 16) return *out = dtype::bf16, true;
  if (d.code == DK_DTYPE_CODE_INT && d.bits == 32) return *out = dtype::i32, true;
  if (d.code == DK_DTYPE_CODE_INT && d.bits == 64) return *out = dtype::i64, true;
  return false;
}

const char* dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "float32";
    case dtype::bf16: return "bfloat16";
    case dtype::f16: return "float16";
    case dtype::i32: return "int32";
    case dtype::i64: return "int64";
  }
  return "?";
}

const char* allowed_names(unsigned set) {
  switch (set) {
    case kActivations: return "float32, bfloat16 or float16";
    case kParams: return "float32 or bfloat16";
    case kIndices: return "int32 or int64";
  }
  return "a supported dtype";
}

// Validation context of one call: the op name for messages and the device.
struct checker {
  const char* op;
  dk_device device;
  bool need_data;

  dk_status fail(dk_status s, const char* arg, const char* what) const {
    return set_error(s, "%s: %s: %s", op, arg, what);
  }

  // Checks one tensor view: presence, rank, dtype, device, strides, alignment,
  // and fills `out` (pointer with byte_offset applied, strides in elements).
  // `contiguous_inner` dims at the end must be compact; `row_aligned` asks for
  // 16-byte aligned base and outer strides (vector loads along rows).
  dk_status tensor(const dk_tensor* t, const char* name, int ndim, unsigned dtypes,
                   int contiguous_inner, bool row_aligned, bool is_output, operand* out) const {
    if (!t) return fail(DK_STATUS_INVALID_ARGUMENT, name, "is required but NULL");
    if (t->ndim != ndim)
      return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: %s: expected %d dims, got %d", op, name,
                       ndim, static_cast<int>(t->ndim));
    if (ndim > 0 && !t->shape) return fail(DK_STATUS_INVALID_ARGUMENT, name, "shape is NULL");
    dtype type;
    if (!to_dtype(t->dtype, &type) || !(dtypes & (1u << static_cast<unsigned>(type))))
      return set_error(DK_STATUS_INVALID_ARGUMENT,
                       "%s: %s: dtype (code %u, bits %u, lanes %u) must be %s", op, name,
                       t->dtype.code, t->dtype.bits, t->dtype.lanes, allowed_names(dtypes));
    if (t->device.device_type != device.device_type || t->device.device_id != device.device_id)
      return set_error(DK_STATUS_INVALID_ARGUMENT,
                       "%s: %s: lives on device (type %d, id %d) but the context's device is "
                       "(type %d, id %d)",
                       op, name, t->device.device_type, t->device.device_id, device.device_type,
                       device.device_id);
    for (int d = 0; d < ndim; ++d)
      if (t->shape[d] < 0)
        return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: %s: shape[%d] = %lld is negative", op,
                         name, d, static_cast<long long>(t->shape[d]));
    out->type = type;
    for (int d = 0; d < 4; ++d) out->stride[d] = 0;
    int64_t compact = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t s = t->strides ? t->strides[d] : compact;
      if (s < 0)
        return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: %s: stride[%d] = %lld is negative", op,
                         name, d, static_cast<long long>(s));
      bool must_be_compact = d >= ndim - contiguous_inner;
      if (must_be_compact && t->shape[d] > 1 && s != compact)
        return set_error(DK_STATUS_INVALID_ARGUMENT,
                         "%s: %s: dim %d must be contiguous (stride %lld, expected %lld)", op,
                         name, d, static_cast<long long>(s), static_cast<long long>(compact));
      if (is_output && s == 0 && t->shape[d] > 1)
        return set_error(DK_STATUS_INVALID_ARGUMENT,
                         "%s: %s: stride[%d] is 0; an output cannot broadcast", op, name, d);
      if (row_aligned && !must_be_compact && t->shape[d] > 1 &&
          (static_cast<uint64_t>(s) * dtype_size(type)) % kRowAlignment != 0)
        return set_error(DK_STATUS_INVALID_ARGUMENT,
                         "%s: %s: stride[%d] = %lld elements is not a multiple of %llu bytes", op,
                         name, d, static_cast<long long>(s),
                         static_cast<unsigned long long>(kRowAlignment));
      out->stride[d] = must_be_compact ? compact : s;
      if (__builtin_mul_overflow(compact, t->shape[d] > 0 ? t->shape[d] : 1, &compact))
        return fail(DK_STATUS_INVALID_ARGUMENT, name, "shape is too large: its size overflows int64");
    }
    // The furthest element must be addressable: sum((shape-1) * stride) * size fits in int64.
    int64_t extent = 0;
    for (int d = 0; d < ndim; ++d) {
      int64_t step = 0;
      if (t->shape[d] > 1 &&
          (__builtin_mul_overflow(t->shape[d] - 1, out->stride[d], &step) ||
           __builtin_add_overflow(extent, step, &extent)))
        return fail(DK_STATUS_INVALID_ARGUMENT, name, "shape and strides address more than int64 elements");
    }
    // (extent may be INT64_MAX here: the + 1 is checked too.)
    if (__builtin_add_overflow(extent, int64_t{1}, &extent) ||
        __builtin_mul_overflow(extent, int64_t{dtype_size(type)}, &extent))
      return fail(DK_STATUS_INVALID_ARGUMENT, name, "shape and strides address more than int64 bytes");
    uint64_t address = reinterpret_cast<uintptr_t>(t->data) + t->byte_offset;
    if (need_data && !t->data) return fail(DK_STATUS_INVALID_ARGUMENT, name, "data is NULL");
    uint64_t align = row_aligned ? kRowAlignment : static_cast<uint64_t>(dtype_size(type));
    if (t->data && address % align != 0)
      return set_error(DK_STATUS_INVALID_ARGUMENT,
                       "%s: %s: data + byte_offset is not aligned to %llu bytes", op, name,
                       static_cast<unsigned long long>(align));
    out->data = t->data ? reinterpret_cast<const void*>(address) : nullptr;
    return DK_STATUS_SUCCESS;
  }

  // Like tensor() for optional operands: absent gives a null operand.
  dk_status optional(const dk_tensor* t, const char* name, int ndim, unsigned dtypes,
                     int contiguous_inner, bool row_aligned, bool is_output, operand* out) const {
    *out = operand{nullptr, dtype::f32, {0, 0, 0, 0}};
    if (!t) return DK_STATUS_SUCCESS;
    return tensor(t, name, ndim, dtypes, contiguous_inner, row_aligned, is_output, out);
  }

  // shape[dim] of `t` must equal `expected`.
  dk_status dim(const dk_tensor* t, const char* name, int d, int64_t expected,
                const char* meaning) const {
    if (t->shape[d] != expected)
      return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: %s: shape[%d] = %lld but %s is %lld", op,
                       name, d, static_cast<long long>(t->shape[d]), meaning,
                       static_cast<long long>(expected));
    return DK_STATUS_SUCCESS;
  }
};

#define DK_TRY(expr)                                  \
  do {                                                \
    dk_status dk_try_status_ = (expr);                \
    if (dk_try_status_ != DK_STATUS_SUCCESS) return dk_try_status_; \
  } while (0)

// k, v and out must share q's dtype; the message names the first that does not.
template <class Problem>
dk_status same_dtype_as_q(const char* op, const Problem& p) {
  for (auto [name, o] : {std::pair{"k", &p.k}, std::pair{"v", &p.v}, std::pair{"out", &p.out}})
    if (o->type != p.q.type)
      return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: %s: dtype %s differs from q's (%s)", op,
                       name, dtype_name(o->type), dtype_name(p.q.type));
  return DK_STATUS_SUCCESS;
}

dk_status check_config(const char* op, const dk_config* c, int64_t head_k, rule* r) {
  if (!c) return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: config is NULL", op);
  if (c->gate_kind < DK_GATE_NONE || c->gate_kind > DK_GATE_PER_KEY)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: config.gate_kind = %d is not a dk_gate_kind",
                     op, c->gate_kind);
  if (c->gate_form != DK_GATE_LOG && c->gate_form != DK_GATE_RAW)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: config.gate_form = %d is not a dk_gate_form",
                     op, c->gate_form);
  if (c->beta_form != DK_BETA_PROB && c->beta_form != DK_BETA_LOGIT)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: config.beta_form = %d is not a dk_beta_form",
                     op, c->beta_form);
  if (c->state_layout != DK_STATE_K_LAST && c->state_layout != DK_STATE_V_LAST)
    return set_error(DK_STATUS_INVALID_ARGUMENT,
                     "%s: config.state_layout = %d is not a dk_state_layout", op, c->state_layout);
  if (!std::isfinite(c->scale))
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: config.scale is not finite", op);
  r->gate = static_cast<gate_kind>(c->gate_kind);
  r->gate_raw = c->gate_kind != DK_GATE_NONE && c->gate_form == DK_GATE_RAW;
  r->beta_logit = c->beta_form == DK_BETA_LOGIT;
  r->qk_l2norm = c->qk_l2norm != 0;
  r->layout = static_cast<state_layout>(c->state_layout);
  r->scale = c->scale != 0.0f ? c->scale : static_cast<float>(1.0 / std::sqrt(double(head_k)));
  return DK_STATUS_SUCCESS;
}

dk_status check_head_dims(const char* op, int64_t hq, int64_t hv, int64_t k, int64_t v) {
  if (hq < 1 || hv < 1)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: q/v: head counts HQ=%lld, HV=%lld must be >= 1",
                     op, static_cast<long long>(hq), static_cast<long long>(hv));
  if (hv % hq != 0)
    return set_error(DK_STATUS_INVALID_ARGUMENT,
                     "%s: v: HV=%lld value heads is not a multiple of HQ=%lld query/key heads (q)",
                     op, static_cast<long long>(hv), static_cast<long long>(hq));
  for (auto [name, d] : {std::pair{"q (head dim K)", k}, std::pair{"v (head dim V)", v}})
    if (d < 16 || d > kMaxHeadDim || d % 16 != 0)
      return set_error(DK_STATUS_UNSUPPORTED,
                       "%s: %s: %lld is not supported; head dims must be multiples of 16 from 16 "
                       "to %lld",
                       op, name, static_cast<long long>(d), static_cast<long long>(kMaxHeadDim));
  return DK_STATUS_SUCCESS;
}

// The gate, beta and raw-gate parameter operands shared by decode and prefill.
// `lead` is the number of leading token dims ([B, T] = 2 or [Ntok] = 1).
dk_status check_gates(const checker& c, const rule& r, const dk_tensor* g, const dk_tensor* beta,
                      const dk_tensor* a_log, const dk_tensor* dt_bias, int lead,
                      const int64_t* lead_dims, int64_t hv, int64_t k, operand* og,
                      operand* obeta, operand* oalog, operand* odt) {
  const char* lead_names[2] = {lead == 2 ? "B" : "Ntok", "T"};
  if (r.gate == gate_kind::none) {
    if (g) return c.fail(DK_STATUS_INVALID_ARGUMENT, "g", "given but config.gate_kind is DK_GATE_NONE");
    *og = operand{nullptr, dtype::f32, {0, 0, 0, 0}};
  } else {
    int gdims = lead + (r.gate == gate_kind::per_key ? 2 : 1);
    DK_TRY(c.tensor(g, "g", gdims, kParams, r.gate == gate_kind::per_key ? 1 : 0, false, false, og));
    for (int d = 0; d < lead; ++d) DK_TRY(c.dim(g, "g", d, lead_dims[d], lead_names[d]));
    DK_TRY(c.dim(g, "g", lead, hv, "HV"));
    if (r.gate == gate_kind::per_key) DK_TRY(c.dim(g, "g", lead + 1, k, "K"));
  }
  DK_TRY(c.tensor(beta, "beta", lead + 1, kParams, 0, false, false, obeta));
  for (int d = 0; d < lead; ++d) DK_TRY(c.dim(beta, "beta", d, lead_dims[d], lead_names[d]));
  DK_TRY(c.dim(beta, "beta", lead, hv, "HV"));
  if (r.gate_raw) {
    DK_TRY(c.tensor(a_log, "A_log", 1, kParams, 1, false, false, oalog));
    DK_TRY(c.dim(a_log, "A_log", 0, hv, "HV"));
    int dt_dims = r.gate == gate_kind::per_key ? 2 : 1;
    DK_TRY(c.optional(dt_bias, "dt_bias", dt_dims, kParams, dt_dims, false, false, odt));
    if (dt_bias) {
      DK_TRY(c.dim(dt_bias, "dt_bias", 0, hv, "HV"));
      if (dt_dims == 2) DK_TRY(c.dim(dt_bias, "dt_bias", 1, k, "K"));
    }
  } else {
    if (a_log) return c.fail(DK_STATUS_INVALID_ARGUMENT, "A_log", "given but the gate is not raw (config.gate_form)");
    if (dt_bias) return c.fail(DK_STATUS_INVALID_ARGUMENT, "dt_bias", "given but the gate is not raw (config.gate_form)");
    *oalog = *odt = operand{nullptr, dtype::f32, {0, 0, 0, 0}};
  }
  return DK_STATUS_SUCCESS;
}

// A state tensor [n, HV, V, K] (k_last) or [n, HV, K, V] (v_last) whose two inner
// dims are compact; slot and head strides may be larger (page-strided pools) but
// states must not overlap.
dk_status check_states(const checker& c, const dk_tensor* t, const char* name, const rule& r,
                       int64_t hv, int64_t k, int64_t v, bool is_output, operand* out,
                       int64_t* out_slots) {
  DK_TRY(c.tensor(t, name, 4, kStates, 2, true, is_output, out));
  DK_TRY(c.dim(t, name, 1, hv, "HV"));
  bool k_last = r.layout == state_layout::k_last;
  DK_TRY(c.dim(t, name, 2, k_last ? v : k, k_last ? "V (K-last layout [.., HV, V, K])" : "K (V-last layout [.., HV, K, V])"));
  DK_TRY(c.dim(t, name, 3, k_last ? k : v, k_last ? "K (K-last layout [.., HV, V, K])" : "V (V-last layout [.., HV, K, V])"));
  int64_t state = k * v;
  if (hv > 1 && out->stride[1] < state)
    return c.fail(DK_STATUS_INVALID_ARGUMENT, name, "head stride is smaller than one K*V state: heads overlap");
  if (t->shape[0] > 1 && out->stride[0] < out->stride[1] * (hv - 1) + state)
    return c.fail(DK_STATUS_INVALID_ARGUMENT, name, "slot stride is smaller than HV states: slots overlap");
  *out_slots = t->shape[0];
  return DK_STATUS_SUCCESS;
}

dk_status check_indices(const checker& c, const dk_tensor* t, const char* name, int ndim,
                        const int64_t* dims, const char* const* dim_names, bool required,
                        operand* out) {
  DK_TRY(required ? c.tensor(t, name, ndim, kIndices, ndim, false, false, out)
                  : c.optional(t, name, ndim, kIndices, ndim, false, false, out));
  if (!t) return DK_STATUS_SUCCESS;
  for (int d = 0; d < ndim; ++d) DK_TRY(c.dim(t, name, d, dims[d], dim_names[d]));
  return DK_STATUS_SUCCESS;
}

}  // namespace

dk_status validate_decode(const dk_device& device, const dk_config* config,
                          const dk_decode_args* a, bool need_data, decode_problem* p) {
  checker c{need_data ? "dk_decode_run" : "dk_decode_query", device, need_data};
  if (!a) return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: args is NULL", c.op);
  *p = decode_problem{};
  // q fixes B, T, HQ, K; everything else is checked against it.
  DK_TRY(c.tensor(a->q, "q", 4, kActivations, 1, true, false, &p->q));
  const int64_t B = a->q->shape[0], T = a->q->shape[1], HQ = a->q->shape[2], K = a->q->shape[3];
  if (T < 1 || T > kMaxDecodeTokens)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: q: T = %lld tokens per sequence; decode takes 1 to %lld",
                     c.op, static_cast<long long>(T), static_cast<long long>(kMaxDecodeTokens));
  if (B > INT32_MAX) return c.fail(DK_STATUS_INVALID_ARGUMENT, "q", "batch exceeds INT32_MAX");
  DK_TRY(c.tensor(a->k, "k", 4, kActivations, 1, true, false, &p->k));
  DK_TRY(c.tensor(a->v, "v", 4, kActivations, 1, true, false, &p->v));
  DK_TRY(c.tensor(a->out, "out", 4, kActivations, 1, true, true, &p->out));
  DK_TRY(same_dtype_as_q(c.op, *p));
  for (int d = 0; d < 4; ++d) DK_TRY(c.dim(a->k, "k", d, a->q->shape[d], "the same dim of q"));
  const int64_t HV = a->v->shape[2], V = a->v->shape[3];
  DK_TRY(c.dim(a->v, "v", 0, B, "B (q)"));
  DK_TRY(c.dim(a->v, "v", 1, T, "T (q)"));
  for (int d = 0; d < 4; ++d) DK_TRY(c.dim(a->out, "out", d, a->v->shape[d], "the same dim of v"));
  DK_TRY(check_config(c.op, config, K, &p->r));
  DK_TRY(check_head_dims(c.op, HQ, HV, K, V));

  const int64_t lead[2] = {B, T};
  DK_TRY(check_gates(c, p->r, a->g, a->beta, a->A_log, a->dt_bias, 2, lead, HV, K, &p->g, &p->beta,
                     &p->a_log, &p->dt_bias));
  DK_TRY(check_states(c, a->state_pool, "state_pool", p->r, HV, K, V, true, &p->pool, &p->pool_slots));
  const char* const names_b[] = {"B (q)", "T (q)"};
  DK_TRY(check_indices(c, a->state_indices, "state_indices", 1, lead, names_b, true, &p->indices));
  DK_TRY(check_indices(c, a->state_out_indices, "state_out_indices", 1, lead, names_b, false, &p->out_indices));
  DK_TRY(check_indices(c, a->state_token_indices, "state_token_indices", 2, lead, names_b, false, &p->token_indices));
  if (a->state_out_indices && a->state_token_indices)
    return c.fail(DK_STATUS_INVALID_ARGUMENT, "state_token_indices",
                  "cannot be combined with state_out_indices (per-token slots replace the final write)");
  p->batch = static_cast<int32_t>(B);
  p->tokens = static_cast<int32_t>(T);
  p->hq = static_cast<int32_t>(HQ);
  p->hv = static_cast<int32_t>(HV);
  p->dk = static_cast<int32_t>(K);
  p->dv = static_cast<int32_t>(V);
  return DK_STATUS_SUCCESS;
}

dk_status validate_prefill(const dk_device& device, const dk_config* config,
                           const dk_prefill_args* a, bool need_data, prefill_problem* p) {
  checker c{need_data ? "dk_prefill_run" : "dk_prefill_query", device, need_data};
  if (!a) return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: args is NULL", c.op);
  *p = prefill_problem{};
  DK_TRY(c.tensor(a->q, "q", 3, kActivations, 1, true, false, &p->q));
  const int64_t Ntok = a->q->shape[0], HQ = a->q->shape[1], K = a->q->shape[2];
  DK_TRY(c.tensor(a->k, "k", 3, kActivations, 1, true, false, &p->k));
  DK_TRY(c.tensor(a->v, "v", 3, kActivations, 1, true, false, &p->v));
  DK_TRY(c.tensor(a->out, "out", 3, kActivations, 1, true, true, &p->out));
  DK_TRY(same_dtype_as_q(c.op, *p));
  for (int d = 0; d < 3; ++d) DK_TRY(c.dim(a->k, "k", d, a->q->shape[d], "the same dim of q"));
  const int64_t HV = a->v->shape[1], V = a->v->shape[2];
  DK_TRY(c.dim(a->v, "v", 0, Ntok, "Ntok (q)"));
  for (int d = 0; d < 3; ++d) DK_TRY(c.dim(a->out, "out", d, a->v->shape[d], "the same dim of v"));
  DK_TRY(check_config(c.op, config, K, &p->r));
  DK_TRY(check_head_dims(c.op, HQ, HV, K, V));

  const int64_t lead[1] = {Ntok};
  DK_TRY(check_gates(c, p->r, a->g, a->beta, a->A_log, a->dt_bias, 1, lead, HV, K, &p->g, &p->beta,
                     &p->a_log, &p->dt_bias));

  // Host integers must agree with the shapes; device contents cannot be checked
  // without a synchronisation, so kernels clamp what they read from cu_seqlens.
  if (a->num_tokens != Ntok)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: num_tokens = %lld but q has %lld tokens", c.op,
                     static_cast<long long>(a->num_tokens), static_cast<long long>(Ntok));
  if (a->num_seqs < 1 || a->num_seqs > INT32_MAX)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "%s: num_seqs = %lld must be in [1, 2^31)", c.op,
                     static_cast<long long>(a->num_seqs));
  const int64_t N = a->num_seqs;
  const int64_t seq_dims[1] = {N + 1};
  const char* const seq_names[] = {"num_seqs + 1"};
  DK_TRY(check_indices(c, a->cu_seqlens, "cu_seqlens", 1, seq_dims, seq_names, true, &p->cu_seqlens));
  int64_t covered = 0;  // max_seqlen * N, the most tokens N sequences can hold
  if (__builtin_mul_overflow(a->max_seqlen, N, &covered)) covered = INT64_MAX;
  if (a->max_seqlen < 0 || a->max_seqlen > Ntok || (Ntok > 0 && covered < Ntok))
    return set_error(DK_STATUS_INVALID_ARGUMENT,
                     "%s: max_seqlen = %lld is inconsistent with num_tokens = %lld over num_seqs = %lld",
                     c.op, static_cast<long long>(a->max_seqlen), static_cast<long long>(Ntok),
                     static_cast<long long>(N));

  const int64_t n_dims[1] = {N};
  const char* const n_names[] = {"num_seqs"};
  if (a->state_pool) {
    DK_TRY(check_states(c, a->state_pool, "state_pool", p->r, HV, K, V, true, &p->pool, &p->pool_slots));
    if (!a->initial_state_indices && !a->final_state_indices)
      return c.fail(DK_STATUS_INVALID_ARGUMENT, "state_pool",
                    "given but neither initial_state_indices nor final_state_indices is");
  } else {
    p->pool = operand{nullptr, dtype::f32, {0, 0, 0, 0}};
    if (a->initial_state_indices)
      return c.fail(DK_STATUS_INVALID_ARGUMENT, "initial_state_indices", "given without state_pool");
    if (a->final_state_indices)
      return c.fail(DK_STATUS_INVALID_ARGUMENT, "final_state_indices", "given without state_pool");
  }
  DK_TRY(check_indices(c, a->initial_state_indices, "initial_state_indices", 1, n_dims, n_names, false, &p->initial_indices));
  DK_TRY(check_indices(c, a->final_state_indices, "final_state_indices", 1, n_dims, n_names, false, &p->final_indices));
  if (a->final_state) {
    int64_t slots = 0;
    DK_TRY(check_states(c, a->final_state, "final_state", p->r, HV, K, V, true, &p->final_state, &slots));
    DK_TRY(c.dim(a->final_state, "final_state", 0, N, "num_seqs"));
  } else {
    p->final_state = operand{nullptr, dtype::f32, {0, 0, 0, 0}};
  }
  p->hq = static_cast<int32_t>(HQ);
  p->hv = static_cast<int32_t>(HV);
  p->dk = static_cast<int32_t>(K);
  p->dv = static_cast<int32_t>(V);
  p->num_seqs = N;
  p->num_tokens = Ntok;
  p->max_seqlen = a->max_seqlen;
  return DK_STATUS_SUCCESS;
}

}  // namespace dk
