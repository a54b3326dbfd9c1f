// The conformance harness: one suite, compiled once per backend (DK_CONFORMANCE_BACKEND).
// Each case builds a random problem in device memory, runs it through the public API, and
// compares outputs and states with the fp64 golden (dk_ref::recurrent); every byte the call
// must not write is compared bit for bit with what was there before.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <deltakit/deltakit.h>
#include "dk_ref/reference.hpp"
#include "dk_test/problem.hpp"

#ifndef DK_CONFORMANCE_BACKEND
#error "DK_CONFORMANCE_BACKEND must name the backend under test (DK_BACKEND_CPU, ...)"
#endif

namespace dkc {

using namespace dkt;

constexpr dk_backend kBackend = DK_CONFORMANCE_BACKEND;
constexpr bool kIsCpu = kBackend == DK_BACKEND_CPU;

// The context every case uses, created by main() before any case runs.
dk_context* ctx();
void set_ctx(dk_context* c);

// Cases this backend does not run, with the reason (skips/<backend>.cpp).
struct skipped_case {
  const char* test_case;
  const char* reason;
};
const std::vector<skipped_case>& skipped_cases();

// A decode step as an engine takes it: Qwen3-Next-like heads (HQ=4, HV=8, K=V=128), raw
// gate, beta logit, sequence 1 padded (the CUDA-only cases' shape for each launcher).
decode_spec engine_step(int B, int T, dt io, dt state, dk_state_layout layout, std::uint64_t seed);

// SPEC §6 tolerances on relative L2 error.
double tolerance(const dtype_spec& types);

dk_ref::config ref_config(const rule_spec& r);

// The golden over tokens [first, first + count) of `in`: state [HV][K][V] is read and
// overwritten, out [count][HV][V] written. Heads run on several threads when the work is large.
void golden(const rule_spec& r, const head_spec& h, const token_inputs& in, std::int64_t first,
            std::int64_t count, double* state, double* out);

// What a call must produce, computed from the host mirrors before the run.
struct expected {
  std::vector<double> out;             // [tokens][HV][V]
  std::vector<char> out_zero;          // [tokens]: 1 where the output must be exactly zero
  std::map<std::int64_t, std::vector<double>> slots;  // pool slot -> [HV][K][V]
  std::vector<std::vector<double>> dense;             // final_state rows -> [HV][K][V]
};
expected golden_decode(const decode_problem& p);
expected golden_prefill(const prefill_problem& p);

// Host copies of buffers, to tell written bytes from untouched ones.
using snapshot = std::vector<std::vector<unsigned char>>;
snapshot take_snapshot(const std::vector<buffer*>& buffers);
void restore_snapshot(const std::vector<buffer*>& buffers, const snapshot& s);

struct verdict {
  error_norm out, state;
  std::int64_t nonzero_padding = 0;  // outputs of padded sequences that are not exactly 0
  std::int64_t changed_bytes = 0;    // bytes written outside what the call may write
  std::string first_change;
  std::string describe() const;
};

// Compares the downloaded buffers with `e` and `before`.
verdict verify(const expected& e, tensor& out, const tensor* pool, const tensor* final_state,
               const rule_spec& r, const head_spec& h, const std::vector<buffer*>& buffers,
               const snapshot& before);

// CHECKs a verdict against a tolerance: finite, within `tol`, padding zero, nothing else written.
void check_verdict(const verdict& v, double tol, bool has_states);

// Builds, runs and checks one case: REQUIREs success, CHECKs every tolerance.
void check_decode(const decode_spec& spec);
void check_prefill(const prefill_spec& spec);

// Runs an already built problem (no checks) on `stream`: upload, run, download.
dk_status run_decode(decode_problem& p, void* stream = nullptr);
dk_status run_prefill(prefill_problem& p, void* stream = nullptr);

}  // namespace dkc

// REQUIREs a dk call to succeed, reporting the status and dk_last_error() otherwise.
#define DK_REQUIRE_OK(call)                                                              \
  do {                                                                                   \
    const dk_status dk_status_ = (call);                                                 \
    const std::string dk_message_ = std::string(#call) + " -> " +                        \
                                    dk_status_string(dk_status_) + ": " + dk_last_error(); \
    INFO(dk_message_);                                                                   \
    REQUIRE(dk_status_ == DK_STATUS_SUCCESS);                                            \
  } while (0)
