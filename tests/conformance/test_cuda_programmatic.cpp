// CUDA only: DK_OPTION_PROGRAMMATIC_LAUNCH, on by default from sm_90. Decode steps chained on
// one stream, each reading the state the step before it wrote in place, must give bit for bit
// what normal launches give (SPEC §8 determinism), eagerly and captured in one graph, also
// with other work (copies, a second stream) between the steps. A kernel that touched an
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
  dk_gate_kind gate = DK_GATE_SCALAR;
};
const chain_case kCases[] = {
    {"small grid (t1_small)", 2, 1, dt::f32, dt::f32},
    {"t1 grid, bf16 activations (t1_bf16io)", 40, 1, dt::bf16, dt::f32},
    {"t1 grid, fp32 activations (t1)", 40, 1, dt::f32, dt::f32},
    {"one-wave grid, state tile in shared memory (t1_bf16io_smem)", 20, 1, dt::bf16, dt::f32},
    {"small grid, state tile in shared memory, every block prefetching (t1_bf16io_smem)", 2, 1, dt::bf16,
     dt::f32},
    {"t1 grid, state tile in shared memory (t1_bf16io_smem_wide)", 80, 1, dt::bf16, dt::f32},
    {"bf16 state, state tile in shared memory (t1_bf16io_smem)", 80, 1, dt::bf16, dt::bf16},
    {"bf16 state, fp32 activations, large grid (t1_pipe)", 80, 1, dt::f32, dt::bf16},
    {"T = 2 (general)", 6, 2, dt::f32, dt::f32},
    {"T = 4, bf16 activations, 1-4 heads per SM (tn_bf16io_mid)", 40, 4, dt::bf16, dt::f32},
    {"T = 4, bf16 activations, past the first wave (tn_bf16io)", 80, 4, dt::bf16, dt::f32},
    {"T = 4, small grid, every block prefetching (tn_bf16io)", 2, 4, dt::bf16, dt::f32},
    {"V-last, bf16 activations, t1 grid of 4-warp blocks", 40, 1, dt::bf16, dt::f32, DK_STATE_V_LAST},
    {"V-last, T = 4, bf16 activations (tn_vlast)", 40, 4, dt::bf16, dt::f32, DK_STATE_V_LAST},
    {"V-last bf16 state, T = 2, bf16 activations (tn_vlast)", 24, 2, dt::bf16, dt::bf16, DK_STATE_V_LAST},
    {"V-last, T = 4, small grid, every block prefetching (tn_vlast)", 2, 4, dt::bf16, dt::f32, DK_STATE_V_LAST},
    {"V-last, state tile in shared memory (t1_bf16io_smem)", 80, 1, dt::bf16, dt::f32, DK_STATE_V_LAST},
    {"V-last bf16 state, t1 grid (lanes along V first)", 40, 1, dt::bf16, dt::bf16, DK_STATE_V_LAST},
    {"V-last bf16 state, state tile in shared memory (t1_bf16io_smem)", 144, 1, dt::bf16, dt::bf16,
     DK_STATE_V_LAST},
    {"per-key gates, t1 grid (t1_per_key_smem)", 40, 1, dt::bf16, dt::f32, DK_STATE_K_LAST, DK_GATE_PER_KEY},
    {"per-key gates, small grid, every block prefetching (t1_per_key_smem)", 2, 1, dt::bf16, dt::f32,
     DK_STATE_K_LAST, DK_GATE_PER_KEY},
    {"per-key gates, V-last bf16 state (t1_per_key)", 40, 1, dt::bf16, dt::bf16, DK_STATE_V_LAST,
     DK_GATE_PER_KEY},
    {"per-key gates, bf16 state, small grid, every block prefetching (t1_small_per_key)", 2, 1, dt::bf16,
     dt::bf16, DK_STATE_K_LAST, DK_GATE_PER_KEY},
    {"per-key gates, T = 4, small grid, every block prefetching (tn_per_key)", 2, 4, dt::bf16, dt::f32,
     DK_STATE_K_LAST, DK_GATE_PER_KEY},
    {"per-key gates, bf16 state, T = 2, past the first wave (tn_per_key)", 80, 2, dt::bf16, dt::bf16,
     DK_STATE_K_LAST, DK_GATE_PER_KEY},
    {"per-key gates, V-last, T = 4, small grid, every block prefetching (tn_per_key)", 2, 4, dt::bf16, dt::f32,
     DK_STATE_V_LAST, DK_GATE_PER_KEY},
    {"per-key gates, V-last bf16 state, T = 2, past the first wave (tn_per_key)", 80, 2, dt::bf16, dt::bf16,
     DK_STATE_V_LAST, DK_GATE_PER_KEY},
};

decode_spec spec_of(const chain_case& c) {
  decode_spec s = engine_step(c.B, c.T, c.io, c.state, c.layout, 7300 + std::uint64_t(c.B));
  s.rule.gate = c.gate;
  return s;
}

dk_status set_programmatic(bool on) {
  return dk_context_set_option(ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, on ? 1 : 0);
}

int64_t programmatic_now() {
  int64_t value = -1;
  DK_REQUIRE_OK(dk_context_get_option(ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, &value));
  return value;
}

// False when this device cannot launch programmatically; then it must refuse the option
// with UNSUPPORTED, and the case prints the line ctest reports as a skip (CMakeLists.txt).
bool device_takes_option() {
  const int64_t before = programmatic_now();
  const dk_status s = set_programmatic(true);
  if (s == DK_STATUS_SUCCESS) return dk_context_set_option(ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, before) == DK_STATUS_SUCCESS;
  CHECK(s == DK_STATUS_UNSUPPORTED);
  if (s == DK_STATUS_UNSUPPORTED)
    std::printf("SKIP: programmatic launch unsupported on this device: %s\n", dk_last_error());
  return false;
}

// Programmatic launch on or off for a scope; the value before comes back however the
// scope ends (the context is every case's).
struct programmatic_scope {
  explicit programmatic_scope(bool on) : before(programmatic_now()) { DK_REQUIRE_OK(set_programmatic(on)); }
  ~programmatic_scope() { dk_context_set_option(ctx(), DK_OPTION_PROGRAMMATIC_LAUNCH, before); }
  int64_t before;
};

// kSteps decode calls on `p`, in place, on `stream`: the first status that is not SUCCESS.
dk_status run_chain(decode_problem& p, void* stream) {
  const dk_decode_args a = p.args();
  for (int step = 0; step < kSteps; ++step)
    if (const dk_status s = dk_decode_run(ctx(), &p.config, &a, stream); s != DK_STATUS_SUCCESS)
      return s;
  return DK_STATUS_SUCCESS;
}

// For every case: `chain(problem, stream)` with programmatic launch off on one problem and
// on on a twin (same seed), then both downloaded and compared byte for byte.
template <class Chain>
void compare_with_normal_chain(Chain&& chain) {
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
    {
      const programmatic_scope off(false);
      chain(normal, stream);
    }
    {
      const programmatic_scope on(true);
      chain(programmatic, stream);
    }
    normal.download(stream);
    programmatic.download(stream);
    // The chain did something: the pool moved away from its initial values.
    CHECK(initial_pool != normal.pool.buf->host);
    CHECK(take_snapshot(normal.buffers()) == take_snapshot(programmatic.buffers()));
  }
  DK_REQUIRE_OK(dk_stream_destroy(ctx(), stream));
}

// Runs the graph `capture` makes of `chain(p, s)` (with the context's option as it is now).
template <class Chain>
void capture_and_run(decode_problem& p, void* stream, Chain&& chain) {
  const cudaGraphExec_t exec = capture(stream, [&](void* s) { return chain(p, s); });
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  cudaGraphExecDestroy(exec);
}

// Decode steps with other work between them, on `stream` and a second stream `side`:
// step 0 first (in a capture: the graph's first node), then by turns a memset of q's
// bytes on `stream`, a memset of v's bytes on `side` joined back by events (two
// dependencies), and nothing (decode after decode).
struct mixed_work {
  cudaStream_t side = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  mixed_work() {
    REQUIRE(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming) == cudaSuccess);
    REQUIRE(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming) == cudaSuccess);
  }
  ~mixed_work() {
    cudaEventDestroy(joined);
    cudaEventDestroy(forked);
    cudaStreamDestroy(side);
  }
  static void* bytes_of(tensor& t) { return static_cast<unsigned char*>(t.buf->dev) + t.first_byte(); }
  static size_t span_of(const tensor& t) { return t.end_byte() - t.first_byte(); }

  dk_status chain(decode_problem& p, void* stream) {
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const dk_decode_args a = p.args();
    for (int step = 0; step < kSteps; ++step) {
      if (step % 3 == 1) {
        if (cudaMemsetAsync(bytes_of(p.act.q), 0x3c, span_of(p.act.q), s) != cudaSuccess)
          return DK_STATUS_DEVICE_ERROR;
      } else if (step % 3 == 2) {
        if (cudaEventRecord(forked, s) != cudaSuccess || cudaStreamWaitEvent(side, forked, 0) != cudaSuccess ||
            cudaMemsetAsync(bytes_of(p.act.v), 0xbc, span_of(p.act.v), side) != cudaSuccess ||
            cudaEventRecord(joined, side) != cudaSuccess || cudaStreamWaitEvent(s, joined, 0) != cudaSuccess)
          return DK_STATUS_DEVICE_ERROR;
      }
      if (const dk_status st = dk_decode_run(ctx(), &p.config, &a, stream); st != DK_STATUS_SUCCESS) return st;
    }
    return DK_STATUS_SUCCESS;
  }
};

TEST_CASE("cuda programmatic launch: on by default from sm_90") {
  dk_device_info info{};
  DK_REQUIRE_OK(dk_context_device_info(ctx(), &info));
  cudaDeviceProp prop{};
  REQUIRE(cudaGetDeviceProperties(&prop, info.device_id) == cudaSuccess);
  dk_context* fresh = nullptr;
  DK_REQUIRE_OK(dk_context_create(DK_BACKEND_CUDA, info.device_id, &fresh));
  CHECK(dk_last_error()[0] == '\0');  // the creation's check of the device left no text
  int64_t value = -1;
  CHECK(dk_context_get_option(fresh, DK_OPTION_PROGRAMMATIC_LAUNCH, &value) == DK_STATUS_SUCCESS);
  CHECK(value == (prop.major >= 9 ? 1 : 0));
  CHECK(dk_context_set_option(fresh, DK_OPTION_PROGRAMMATIC_LAUNCH, 0) == DK_STATUS_SUCCESS);
  CHECK(dk_context_get_option(fresh, DK_OPTION_PROGRAMMATIC_LAUNCH, &value) == DK_STATUS_SUCCESS);
  CHECK(value == 0);
  DK_REQUIRE_OK(dk_context_destroy(fresh));
}

TEST_CASE("cuda programmatic launch: chained decode steps match normal launches bit for bit") {
  if (!device_takes_option()) return;
  compare_with_normal_chain([](decode_problem& p, void* stream) { DK_REQUIRE_OK(run_chain(p, stream)); });
}

TEST_CASE("cuda programmatic launch: chained decode steps captured in one graph") {
  if (!device_takes_option()) return;
  compare_with_normal_chain([](decode_problem& p, void* stream) { capture_and_run(p, stream, run_chain); });
}

TEST_CASE("cuda programmatic launch: decode steps between copies and a second stream's work") {
  if (!device_takes_option()) return;
  mixed_work work;
  auto eager = [&](decode_problem& p, void* stream) { DK_REQUIRE_OK(work.chain(p, stream)); };
  auto captured = [&](decode_problem& p, void* stream) {
    capture_and_run(p, stream, [&](decode_problem& q, void* s) { return work.chain(q, s); });
  };
  SUBCASE("eagerly") { compare_with_normal_chain(eager); }
  SUBCASE("captured in one graph") { compare_with_normal_chain(captured); }
}

}  // namespace
}  // namespace dkc
