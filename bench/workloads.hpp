// The standard workloads of SPEC §7 and their device set-up.
//
// Every workload uses the configuration engines run: bf16 q/k/v/out, the raw
// scalar gate (a in bf16, A_log and dt_bias in fp32; "kimi-linear" rows: per
// key), beta as a bf16 logit,
// q/k L2 normalisation, a K-last state pool addressed by int32 indices (the
// full set adds V-last decode rows, "qwen3next-vlast").
// Inputs are seeded random and never zero.
#pragma once
#include <deltakit/deltakit.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "buffers.hpp"

namespace dkb {

struct workload {
  std::string name;   // stable across machines: "decode/qwen3next/b32/state-f32"
  std::string op;     // "decode" or "prefill"
  std::string model;  // "qwen3next", "contest", "qwen3next-tp8" ...
  int hq = 0, hv = 0, dk = 0, dv = 0;
  int batch = 0, tokens = 0;     // decode: B sequences of T tokens
  std::vector<int64_t> seqlens;  // prefill: one entry per packed sequence
  elem state = elem::f32;
  bool v_last = false;  // decode: V-last state pool [.., K, V] (default K-last [.., V, K])
  bool per_key = false;  // decode: per-key gates (KDA: a [B, T, HV, K], dt_bias [HV, K])
  bool ascending_slots = false;  // indices 0, 1, 2 ... (default: a seeded permutation)
  // decode: the new states go to B other slots (state_out_indices into a pool of
  // 2B, slots B..2B-1 in the same order as the read slots) instead of in place
  bool other_out_slots = false;

  int64_t num_tokens() const;        // B*T (decode) or the sum of seqlens (prefill)
  int64_t num_states() const;        // state slots read and written: B or N
  int64_t state_pool_bytes() const;  // the state slots the call touches, once
  // Bytes an ideal kernel moves: every state slot touched read + written, and
  // q/k/v/out/gate/beta/parameter/index bytes once each.
  int64_t bytes_moved() const;
  // 4 * Ntok * HV * K * V: the convention peers publish for "TFLOP/s".
  double flops() const;
  std::string shape_json() const;
  std::string dtypes_json() const;
};

// Full sizes (SPEC §7), or the smaller --quick set for the 2-core CPU machine.
std::vector<workload> standard_workloads(bool quick);

// One workload's tensors in device memory and the call that runs it.
class bench_case {
 public:
  virtual ~bench_case() = default;
  // dk_*_query: the implementation name, or UNSUPPORTED with dk_last_error().
  virtual dk_status query(const char** out_impl) = 0;
  virtual dk_status launch(void* stream) = 0;
  // Non-finite values in the output after the runs (a broken kernel shows here).
  virtual int64_t non_finite_outputs() const = 0;
};

// Allocates and fills everything (throws dk_failure on a failed dk_* call).
// Replica r > 0 of a decode workload is another, independent set of its
// tensors filled from other seeds (the in-graph timing rotates through them).
std::unique_ptr<bench_case> make_case(dk_context* ctx, const workload& w, int replica = 0);

// The dk_config every workload uses.
dk_config engine_config();

}  // namespace dkb
