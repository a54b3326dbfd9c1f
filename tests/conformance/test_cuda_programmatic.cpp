// CUDA only: DK_OPTION_PROGRAMMATIC_LAUNCH. Decode steps chained on one stream, each reading
// the state the step before it wrote in place, must give bit for bit what normal launches
// give (SPEC §8 determinism), eagerly and captured in one graph. A kernel that touched an
// operand before waiting for the previous one would read a state still being written.
#include <cstdio>

#include "cuda_capture.hpp"

namespace dkc {
namespace {

constexpr int kSteps = 6;

// One shape per decode kernel family the option changes. On the H200 (132 SMs) the
// t1 grids of B = 40 and 80 are past the first wave's late blocks, which prefetch
// before the wait (programmatic_late_prefetch_blocks_per_sm, and its V-last twin for
// the V-last grids); B = 20 is one wave.
struct chain_case {
  const char* what;
  int B, T;
  dt io, state;
  dk_state_layout layout = DK_STATE_K_LAST;
};
const chain_case kCases[] = {
    {"small grid (t1_small)", 2, 1, dt::f32, dt::f32},
    {"t1 grid, bf16 activations (t1_bf16io)", 40, 1, dt::bf16, dt::f32},
    {"t1 grid, fp32 activations (t1)", 40, 1, dt::f32, dt::f32},
    {"one-wave grid, state tile in shared memory (t1_bf16io_smem)", 20, 1, dt::bf16, dt::f32},
    {"t1 grid, state tile in shared memory (t1_bf16io_smem_wide)", 80, 1, dt::bf16, dt::f32},
    {"bf16 state, state tile in shared memory (t1_bf16io_smem)", 80, 1, dt::bf16, dt::bf16},
    {"bf16 state, fp32 activations, large grid (t1_pipe)", 80, 1, dt::f32, dt::bf16},
    {"T = 2 (general)", 6, 2, dt::f32, dt::f32},
    {"T = 4, bf16 activations, past the first wave (tn_bf16io)", 40, 4, dt::bf16, dt::f32},
    {"V-last, bf16 activations, t1 grid of 4-warp blocks", 40, 1, dt::bf16, dt::f32, DK_STATE_V_LAST},
    {"V-last, state tile in shared memory (t1_bf16io_smem)", 80, 1, dt::bf16, dt::f32, DK_STATE_V_LAST},
    {"V-last bf16 state, t1 grid (lanes along V first)", 40, 1, dt::bf16, dt::bf16, DK_STATE_V_LAST},
    {"V-last bf16 state, state tile in shared memory (t1_bf16io_smem)", 144, 1, dt::bf16, dt::bf16,
     DK_STATE_V_LAST},
};

decode_spec spec_of(const chain_case& c) {
  return engine_step(c.B, c.T, c.io, c.state, c.layout, 7300 + std::uint64_t(c.B));
}

dk_status set_programmatic(bool on) {
  return dk_context_set_option(ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, on ? 1 : 0);
}

// False when this device cannot launch programmatically; then it must refuse the option
// with UNSUPPORTED, and the case prints the line ctest reports as a skip (CMakeLists.txt).
bool device_takes_option() {
  const dk_status s = set_programmatic(true);
  if (s == DK_STATUS_SUCCESS) return set_programmatic(false) == DK_STATUS_SUCCESS;
  CHECK(s == DK_STATUS_UNSUPPORTED);
  if (s == DK_STATUS_UNSUPPORTED)
    std::printf("SKIP: programmatic launch unsupported on this device: %s\n", dk_last_error());
  return false;
}

// Programmatic launch on for a scope, off again however the scope ends.
struct programmatic_on {
  programmatic_on() { DK_REQUIRE_OK(set_programmatic(true)); }
  ~programmatic_on() { set_programmatic(false); }
};

// kSteps decode calls on `p`, in place, on `stream`: the first status that is not SUCCESS.
dk_status run_chain(decode_problem& p, void* stream) {
  const dk_decode_args a = p.args();
  for (int step = 0; step < kSteps; ++step)
    if (const dk_status s = dk_decode_run(ctx(), &p.config, &a, stream); s != DK_STATUS_SUCCESS)
      return s;
  return DK_STATUS_SUCCESS;
}


// For every case: the normal chain on one problem, `programmatic_chain(problem, stream)` on a
// twin (same seed), then both downloaded and compared byte for byte.
template <class Chain>
void compare_with_normal_chain(Chain&& programmatic_chain) {
  void* stream = nullptr;
  DK_REQUIRE_OK(dk_stream_create(ctx(), &stream));
  for (const chain_case& c : kCases) {
    const decode_spec spec = spec_of(c);
    CAPTURE(c.what);
    INFO(spec.describe());
    decode_problem normal(ctx(), spec), programmatic(ctx(), spec);
    const std::vector<unsigned char> initial_pool = normal.pool.buf->host;
    normal.upload(stream);
    programmatic.upload(stream);
    DK_REQUIRE_OK(run_chain(normal, stream));
    programmatic_chain(programmatic, stream);
    normal.download(stream);
    programmatic.download(stream);
    // The chain did something: the pool moved away from its initial values.
    CHECK(initial_pool != normal.pool.buf->host);
    CHECK(take_snapshot(normal.buffers()) == take_snapshot(programmatic.buffers()));
  }
  DK_REQUIRE_OK(dk_stream_destroy(ctx(), stream));
}

TEST_CASE("cuda programmatic launch: chained decode steps match normal launches bit for bit") {
  if (!device_takes_option()) return;
  compare_with_normal_chain([](decode_problem& p, void* stream) {
    const programmatic_on on;
    DK_REQUIRE_OK(run_chain(p, stream));
  });
}

TEST_CASE("cuda programmatic launch: chained decode steps captured in one graph") {
  if (!device_takes_option()) return;
  compare_with_normal_chain([](decode_problem& p, void* stream) {
    cudaGraphExec_t exec = nullptr;
    {
      const programmatic_on on;
      exec = capture(stream, [&](void* s) { return run_chain(p, s); });
    }
    int64_t left_on = -1;
    DK_REQUIRE_OK(dk_context_get_option(ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, &left_on));
    REQUIRE(left_on == 0);
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    cudaGraphExecDestroy(exec);
  });
}

}  // namespace
}  // namespace dkc
