// Random, valid decode and prefill problems living in device memory, described by small specs.
// The conformance suite checks them against the golden; the API tests break one argument at a
// time. Every value a kernel reads is rounded to its storage dtype here, and `inputs` holds the
// rounded values, so the reference sees exactly what the kernel sees.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <deltakit/deltakit.h>

#include "dk_test/device.hpp"
#include "dk_test/numeric.hpp"

namespace dkt {

// What the op computes (the dk_config knobs).
struct rule_spec {
  dk_gate_kind gate = DK_GATE_SCALAR;
  dk_gate_form form = DK_GATE_LOG;
  dk_beta_form beta = DK_BETA_PROB;
  bool l2norm = true;
  dk_state_layout layout = DK_STATE_K_LAST;
  float scale = 0.0f;
  bool dt_bias = true;  // raw gates: pass dt_bias (else it is absent, i.e. zero)
  bool fast_decay = false;  // log gates ~ U(-3, -1) instead of U(-0.3, -0.005)

  bool raw() const { return gate != DK_GATE_NONE && form == DK_GATE_RAW; }
  int gate_width(int K) const { return gate == DK_GATE_PER_KEY ? K : 1; }
  dk_config config() const;
  std::string describe() const;
};

struct head_spec {
  int HQ = 2, HV = 2, K = 64, V = 64;
};

struct dtype_spec {
  dt io = dt::f32;     // q, k, v, out
  dt aux = dt::f32;    // g, beta, A_log, dt_bias
  dt state = dt::f32;  // state pool / final_state
  dt index = dt::i32;  // indices and cu_seqlens
};

// How q/k/v (and g/beta) are laid out in memory.
enum class qkv_layout {
  compact,      // one compact tensor each
  fused,        // one [tokens, q | k | v | pad] buffer: token stride > compact
  interleaved,  // one [tokens, (q_h k_h) for each key head | v | pad] buffer: head stride > K too
};

// Memory-layout knobs shared by decode and prefill.
struct memory_spec {
  qkv_layout qkv = qkv_layout::compact;
  bool strided_out = false;    // out is a view into a wider buffer, not at its start
  bool strided_gates = false;  // g (scalar gate) and beta are columns of one [tokens, 2*HV + pad] buffer
  bool byte_offset = false;    // views carry their offset in dk_tensor.byte_offset, not in data
  std::int64_t slot_pad = 0;   // extra elements between pool slots (page-strided pool)
  std::int64_t head_pad = 0;   // extra elements between heads of a slot
  std::string describe() const;
};

// Dense row-major copies of what the kernel reads, already rounded to the storage dtypes.
// Token-major: q, k [tokens][HQ][K], v [tokens][HV][V], g [tokens][HV](x K), beta [tokens][HV].
struct token_inputs {
  std::vector<double> q, k, v, g, beta, a_log, dt_bias;
};

// The realistic, seeded inputs of SPEC §6: q, k, v ~ U(-1, 1) (k / sqrt(K) without l2norm so
// beta |k|^2 < 2), log gates ~ U(-0.3, -0.005), raw a ~ N(0, 1) with A_log ~ U(-2, 0) and
// dt_bias ~ U(-1, 1), beta ~ U(0.05, 0.95) (or its logit). Not yet rounded. With
// rule_spec::fast_decay, log gates ~ U(-3, -1): the state decays by e^-16 .. e^-48 over 16 tokens.
token_inputs random_inputs(const rule_spec& r, const head_spec& h, std::int64_t tokens, rng& gen);

// The q, k, v, out, g, beta, A_log, dt_bias tensors of `tokens` tokens whose leading dims are
// `lead` ({B, T} for decode, {Ntok} for prefill).
struct activations {
  tensor q, k, v, out, g, beta, a_log, dt_bias;
  token_inputs in;  // the rounded values written into the tensors

  void build(dk_context* ctx, dk_device dev, const rule_spec& r, const head_spec& h,
             const dtype_spec& d, const memory_spec& m, const std::vector<std::int64_t>& lead,
             rng& gen);
  // NaN into every element of out (padding around a strided out stays as it is).
  void poison_out() { out.poison(); }
};

// A pool of `slots` states [slots, HV, V, K] (K-last) or [slots, HV, K, V] (V-last), optionally
// page-strided, every logical element random U(-0.5, 0.5) and every padding byte random.
tensor make_state_tensor(dk_context* ctx, dk_device dev, const rule_spec& r, const head_spec& h,
                         dt type, std::int64_t slots, const memory_spec& m, rng& gen);
// State of slot `slot` as [HV][K][V] (the reference's layout), read from the host mirror.
std::vector<double> read_state(const tensor& pool, const rule_spec& r, const head_spec& h,
                               std::int64_t slot);
// Calls f(h, i, j, byte offset) for every element of slot `slot` (i key, j value).
template <class F>
void for_each_state_element(const tensor& pool, const rule_spec& r, const head_spec& h,
                            std::int64_t slot, F&& f) {
  const bool k_last = r.layout == DK_STATE_K_LAST;
  for (int hh = 0; hh < h.HV; ++hh)
    for (int i = 0; i < h.K; ++i)
      for (int j = 0; j < h.V; ++j) {
        const std::int64_t e = pool.offset + slot * pool.strides[0] + hh * pool.strides[1] +
                               (k_last ? j * pool.strides[2] + i : i * pool.strides[2] + j);
        f(hh, i, j, std::size_t(e) * pool.elem_size());
      }
}
// NaN into every element of one slot.
void poison_slot(tensor& pool, const rule_spec& r, const head_spec& h, std::int64_t slot);

// An index tensor holding `values` (shape given; dtype i32 or i64).
tensor make_index_tensor(dk_context* ctx, dk_device dev, dt type, std::vector<std::int64_t> shape,
                         const std::vector<std::int64_t>& values);

// ------------------------------------------------------------------ decode

struct decode_spec {
  int B = 2, T = 1;
  head_spec heads;
  rule_spec rule;
  dtype_spec types;
  memory_spec mem;
  std::vector<int> padded;        // sequences whose state index is -1
  std::vector<int> out_of_range;  // sequences whose state index lies outside [-1, P)
  bool out_slots = false;         // separate state_out_indices (one of them -1, one in place)
  bool token_slots = false;       // state_token_indices [B, T] (some -1)
  std::uint64_t seed = 1;

  std::string describe() const;
};

struct decode_problem {
  decode_problem(dk_context* ctx, const decode_spec& spec);

  decode_spec spec;
  dk_context* ctx;
  dk_device device;
  dk_config config;
  activations act;
  tensor pool, indices, out_indices, token_indices;
  std::int64_t slots = 0;
  std::vector<std::int64_t> read_slot;   // [B]: as given (-1 / out of range = padding)
  std::vector<std::int64_t> write_slot;  // [B]: final write (state_out_indices or in place)
  std::vector<std::int64_t> token_slot;  // [B * T] when token_slots

  bool is_padding(int b) const { return read_slot[b] < 0 || read_slot[b] >= slots; }
  // Descriptors of every operand (call after the problem stops moving).
  dk_decode_args args();
  // Distinct buffers, for upload/download.
  std::vector<buffer*> buffers();
  void upload(void* stream = nullptr);
  void download(void* stream = nullptr);
};

// ------------------------------------------------------------------ prefill

enum class final_dst {
  none,            // no final state
  in_place,        // final_state_indices is the initial_state_indices tensor
  slots,           // separate final_state_indices
  dense,           // dense final_state tensor
  slots_and_dense  // both
};

struct prefill_spec {
  std::vector<int> lens{64};
  head_spec heads;
  rule_spec rule;
  dtype_spec types;
  memory_spec mem;
  bool initial = false;  // initial states from the pool (initial_state_indices)
  final_dst final = final_dst::none;
  std::vector<int> no_initial;  // sequences whose initial index is -1 (zero initial state)
  std::vector<int> no_final;    // sequences whose final index is -1 (not written; slots only)
  std::int64_t max_seqlen_extra = 0;  // pass max_seqlen larger than the longest sequence
  std::uint64_t seed = 1;

  bool uses_pool() const {
    return initial || final == final_dst::in_place || final == final_dst::slots ||
           final == final_dst::slots_and_dense;
  }
  bool writes_slots() const {
    return final == final_dst::in_place || final == final_dst::slots || final == final_dst::slots_and_dense;
  }
  bool writes_dense() const { return final == final_dst::dense || final == final_dst::slots_and_dense; }
  std::int64_t tokens() const;
  std::string describe() const;
};

struct prefill_problem {
  prefill_problem(dk_context* ctx, const prefill_spec& spec);

  prefill_spec spec;
  dk_context* ctx;
  dk_device device;
  dk_config config;
  activations act;
  tensor cu_seqlens, pool, initial_indices, final_indices, final_state;
  std::int64_t slots = 0;
  std::vector<std::int64_t> cu;             // host copy of cu_seqlens
  std::vector<std::int64_t> initial_slot;   // [N]: -1 = zero initial state
  std::vector<std::int64_t> final_slot;     // [N]: -1 = not written to the pool

  std::int64_t num_seqs() const { return std::int64_t(spec.lens.size()); }
  std::int64_t max_seqlen() const;
  dk_prefill_args args();
  std::vector<buffer*> buffers();
  void upload(void* stream = nullptr);
  void download(void* stream = nullptr);
};

}  // namespace dkt
