// CUDA only: decode and prefill captured once in a CUDA graph, then replayed. A replay must
// compute what an eager call computes (checked against the golden, like every case): the call
// may not synchronise with the host or bake host-side values into the graph.
#include "cuda_capture.hpp"

namespace dkc {
namespace {

// Replays `exec` twice, each time from the original inputs (re-uploaded, outputs poisoned
// again), and checks both replays.
template <class Problem, class Verify>
void replay_twice(Problem& p, void* stream, cudaGraphExec_t exec, Verify&& check) {
  const std::vector<buffer*> buffers = p.buffers();
  const snapshot before = take_snapshot(buffers);
  for (int replay = 0; replay < 2; ++replay) {
    CAPTURE(replay);
    restore_snapshot(buffers, before);
    p.upload(stream);
    REQUIRE(cudaGraphLaunch(exec, static_cast<cudaStream_t>(stream)) == cudaSuccess);
    p.download(stream);  // synchronises the stream
    check(buffers, before);
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
  decode_problem p(ctx(), spec);
  const dk_decode_args a = p.args();
  const expected e = golden_decode(p);
  void* stream = nullptr;
  DK_REQUIRE_OK(dk_stream_create(ctx(), &stream));
  p.upload(stream);
  DK_REQUIRE_OK(dk_stream_synchronize(ctx(), stream));
  cudaGraphExec_t exec = capture(stream, [&](void* s) {
    return dk_decode_run(ctx(), &p.config, &a, s);
  });
  replay_twice(p, stream, exec, [&](const std::vector<buffer*>& buffers, const snapshot& before) {
    check_verdict(verify(e, p.act.out, &p.pool, nullptr, spec.rule, spec.heads, buffers, before),
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
  prefill_problem p(ctx(), spec);
  const dk_prefill_args a = p.args();
  const expected e = golden_prefill(p);
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
  replay_twice(p, stream, exec, [&](const std::vector<buffer*>& buffers, const snapshot& before) {
    check_verdict(verify(e, p.act.out, &p.pool, nullptr, spec.rule, spec.heads, buffers, before),
                  tolerance(spec.types), true);
  });
  cudaGraphExecDestroy(exec);
  DK_REQUIRE_OK(dk_stream_destroy(ctx(), stream));
  if (workspace) DK_REQUIRE_OK(dk_free(ctx(), workspace));
}

}  // namespace
}  // namespace dkc
