// CUDA only: decode and prefill captured once in a CUDA graph, then replayed, the second time
// on other inputs in the same buffers. A replay must compute what an eager call on its inputs
// computes (checked against the golden, like every case): the call may not synchronise with
// the host or bake host-side values into the graph.
#include "cuda_capture.hpp"

namespace dkc {
namespace {

// Replays `exec` twice: first on the captured problem's own inputs, then on those of
// `other` (same spec, another seed: other values, slots and indices) written into the same
// buffers, so that a replay of values baked in at capture fails. Outputs are poisoned again
// before each replay; check(replay, buffers, before) checks one.
template <class Problem, class Verify>
void replay_twice(Problem& p, Problem& other, void* stream, cudaGraphExec_t exec, Verify&& check) {
  const std::vector<buffer*> buffers = p.buffers();
  const snapshot inputs[2] = {take_snapshot(buffers), take_snapshot(other.buffers())};
  REQUIRE(inputs[0].size() == inputs[1].size());
  for (std::size_t i = 0; i < inputs[0].size(); ++i) REQUIRE(inputs[0][i].size() == inputs[1][i].size());
  for (int replay = 0; replay < 2; ++replay) {
    CAPTURE(replay);
    restore_snapshot(buffers, inputs[replay]);
    p.upload(stream);
    REQUIRE(cudaGraphLaunch(exec, static_cast<cudaStream_t>(stream)) == cudaSuccess);
    p.download(stream);  // synchronises the stream
    check(replay, buffers, inputs[replay]);
  }
}

TEST_CASE("cuda graph: decode captured once and replayed") {
  decode_spec spec;
  spec.B = 6;
  spec.T = 2;
  spec.heads = {4, 8, 128, 128};
  spec.rule.form = DK_GATE_RAW;
  spec.rule.beta = DK_BETA_LOGIT;
  spec.types.io = dt::bf16;
  spec.padded = {3};
  spec.seed = 7100;
  INFO(spec.describe());
  decode_spec other_spec = spec;
  other_spec.seed = 7101;
  decode_problem p(ctx(), spec), other(ctx(), other_spec);
  const dk_decode_args a = p.args();
  const expected e[2] = {golden_decode(p), golden_decode(other)};
  void* stream = nullptr;
  DK_REQUIRE_OK(dk_stream_create(ctx(), &stream));
  p.upload(stream);
  DK_REQUIRE_OK(dk_stream_synchronize(ctx(), stream));
  cudaGraphExec_t exec = capture(stream, [&](void* s) {
    return dk_decode_run(ctx(), &p.config, &a, s);
  });
  replay_twice(p, other, stream, exec,
               [&](int replay, const std::vector<buffer*>& buffers, const snapshot& before) {
                 check_verdict(verify(e[replay], p.act.out, &p.pool, nullptr, spec.rule,
                                      spec.heads, buffers, before),
                               tolerance(spec.types), true);
               });
  cudaGraphExecDestroy(exec);
  DK_REQUIRE_OK(dk_stream_destroy(ctx(), stream));
}

TEST_CASE("cuda graph: varlen prefill captured once and replayed") {
  prefill_spec spec;
  spec.lens = {300, 1, 64, 1000};
  spec.heads = {4, 8, 128, 128};
  spec.rule.form = DK_GATE_RAW;
  spec.rule.beta = DK_BETA_LOGIT;
  spec.types.io = dt::bf16;
  spec.initial = true;
  spec.final = final_dst::in_place;
  spec.seed = 7200;
  INFO(spec.describe());
  prefill_spec other_spec = spec;
  other_spec.seed = 7201;
  prefill_problem p(ctx(), spec), other(ctx(), other_spec);
  const dk_prefill_args a = p.args();
  const expected e[2] = {golden_prefill(p), golden_prefill(other)};
  std::size_t bytes = 0;
  DK_REQUIRE_OK(dk_prefill_workspace_size(ctx(), &p.config, &a, &bytes));
  void* workspace = nullptr;
  if (bytes) DK_REQUIRE_OK(dk_malloc(ctx(), bytes, &workspace));
  void* stream = nullptr;
  DK_REQUIRE_OK(dk_stream_create(ctx(), &stream));
  p.upload(stream);
  DK_REQUIRE_OK(dk_stream_synchronize(ctx(), stream));
  cudaGraphExec_t exec = capture(stream, [&](void* s) {
    return dk_prefill_run(ctx(), &p.config, &a, workspace, bytes, s);
  });
  replay_twice(p, other, stream, exec,
               [&](int replay, const std::vector<buffer*>& buffers, const snapshot& before) {
                 check_verdict(verify(e[replay], p.act.out, &p.pool, nullptr, spec.rule,
                                      spec.heads, buffers, before),
                               tolerance(spec.types), true);
               });
  cudaGraphExecDestroy(exec);
  DK_REQUIRE_OK(dk_stream_destroy(ctx(), stream));
  if (workspace) DK_REQUIRE_OK(dk_free(ctx(), workspace));
}

}  // namespace
}  // namespace dkc
