// Engine-sized cases, compiled only into GPU instantiations (CMakeLists.txt's source list): the
// fp64 golden of Qwen3-Next heads (HV = 32, K = V = 128) over 65536 tokens is ~70 GFLOP, minutes
// of host time, so a CPU run in CI does not take them. The golden splits heads across threads.
#include "harness.hpp"

namespace dkc {
namespace {

// Qwen3-Next's linear-attention layer: 16 query/key heads, 32 value heads, K = V = 128, raw
// gates (A_log, dt_bias), beta as a logit, L2-normalised q and k.
prefill_spec qwen3next(std::vector<int> lens, std::uint64_t seed) {
  prefill_spec s;
  s.lens = std::move(lens);
  s.heads = {16, 32, 128, 128};
  s.rule.gate = DK_GATE_SCALAR;
  s.rule.form = DK_GATE_RAW;
  s.rule.beta = DK_BETA_LOGIT;
  s.rule.l2norm = true;
  s.seed = seed;
  return s;
}

TEST_CASE("gpu: qwen3next prefill of 65536 tokens") {
  prefill_spec s = qwen3next({65536}, 6000);
  s.types.io = dt::bf16;
  s.initial = false;
  s.final = final_dst::dense;
  check_prefill(s);
}

TEST_CASE("gpu: qwen3next varlen batch of 8 uneven sequences") {
  prefill_spec s = qwen3next({9000, 1, 4096, 777, 12000, 63, 5000, 1831}, 6100);  // 32768 tokens
  s.types.io = dt::bf16;
  s.initial = true;
  s.no_initial = {2};
  s.final = final_dst::in_place;
  check_prefill(s);
}

// One decode step of the same layer: B sequences, bf16 activations, fp32 K-last state.
decode_spec qwen3next_step(int B, std::uint64_t seed) {
  decode_spec s;
  s.B = B;
  s.T = 1;
  s.heads = {16, 32, 128, 128};
  s.rule.gate = DK_GATE_SCALAR;
  s.rule.form = DK_GATE_RAW;
  s.rule.beta = DK_BETA_LOGIT;
  s.types.io = dt::bf16;
  s.seed = seed;
  return s;
}

TEST_CASE("gpu: qwen3next decode batch of 128") {
  decode_spec s = qwen3next_step(128, 6200);
  s.types.state = dt::bf16;
  s.padded = {0, 100, 127};
  check_decode(s);
}

// fp32 K-last state, bf16 activations, enough heads for the full-size T = 1 grid
// on big GPUs (the H200's t1_bf16io kernel), with padding and separate output slots.
TEST_CASE("gpu: qwen3next decode batch of 64, fp32 state") {
  decode_spec s = qwen3next_step(64, 6250);
  s.padded = {1, 62};
  s.out_slots = true;
  check_decode(s);
}

// V-last fp32 state, bf16 activations, on the full-size T = 1 grid (the H200's
// V-last t1 kernel), with padding and separate output slots.
TEST_CASE("gpu: qwen3next decode batch of 48, V-last fp32 state") {
  decode_spec s = qwen3next_step(48, 6275);
  s.rule.layout = DK_STATE_V_LAST;
  s.padded = {0, 47};
  s.out_slots = true;
  check_decode(s);
}

// Large enough for the streaming kernels on big GPUs (t1_pipe: >= 8 heads per SM for
// V-last 16-bit state on the H200), with padding and separate output slots.
TEST_CASE("gpu: qwen3next decode batch of 256, V-last bf16 state") {
  decode_spec s = qwen3next_step(256, 6300);
  s.rule.layout = DK_STATE_V_LAST;
  s.types.state = dt::bf16;
  s.padded = {3, 200};
  s.out_slots = true;
  check_decode(s);
}

}  // namespace
}  // namespace dkc
