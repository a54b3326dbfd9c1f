// Long sequences: errors must not accumulate over 65536 tokens (SPEC §6). Few heads, so the
// fp64 golden stays cheap enough for every backend, the CPU included.
#include "harness.hpp"

namespace dkc {
namespace {

// Runs `spec` once per io dtype in `ios`, all on the same bf16-representable inputs, against a
// single golden run (the golden dominates the cost of long cases).
void check_prefill_shared_inputs(prefill_spec spec, const std::vector<dt>& ios) {
  // The bf16 problem's rounded inputs are exact in every io dtype, so one golden serves all.
  spec.types.io = dt::bf16;
  prefill_problem bf16(ctx(), spec);
  const expected e = golden_prefill(bf16);
  for (dt io : ios) {
    spec.types.io = io;
    INFO(spec.describe());
    prefill_problem p(ctx(), spec);
    p.act.in = bf16.act.in;
    p.act.q.fill(p.act.in.q);
    p.act.k.fill(p.act.in.k);
    p.act.v.fill(p.act.in.v);
    if (p.act.g.present()) p.act.g.fill(p.act.in.g);
    p.act.beta.fill(p.act.in.beta);
    if (p.act.a_log.present()) p.act.a_log.fill(p.act.in.a_log);
    if (p.act.dt_bias.present()) p.act.dt_bias.fill(p.act.in.dt_bias);
    const char* impl = nullptr;
    const dk_prefill_args a = p.args();
    DK_REQUIRE_OK(dk_prefill_query(ctx(), &p.config, &a, &impl));
    INFO("implementation: " << std::string(impl));
    // Slots and initial states come from the same seed whatever the io dtype: one golden fits.
    REQUIRE(p.initial_slot == bf16.initial_slot);
    REQUIRE(p.final_slot == bf16.final_slot);
    const std::vector<buffer*> buffers = p.buffers();
    const snapshot before = take_snapshot(buffers);
    DK_REQUIRE_OK(run_prefill(p));
    const verdict v = verify(e, p.act.out, p.pool.present() ? &p.pool : nullptr,
                             p.final_state.present() ? &p.final_state : nullptr, spec.rule, spec.heads,
                             buffers, before);
    INFO(v.describe());
    const double tol = tolerance(spec.types);
    CHECK(v.out.non_finite == 0);
    CHECK(v.out.relative() <= tol);
    CHECK(v.state.non_finite == 0);
    CHECK(v.state.relative() <= tol);
    CHECK(v.changed_bytes == 0);
  }
}

TEST_CASE("prefill: long sequence of 65536 tokens") {
  prefill_spec s;
  s.lens = {65536};
  s.heads = {2, 2, 64, 64};
  s.rule.gate = DK_GATE_SCALAR;  // GDN with log gates in [-0.3, -0.005]: memory of ~200 tokens
  s.initial = false;
  s.final = final_dst::dense;
  s.seed = 5000;
  check_prefill_shared_inputs(s, {dt::f32, dt::bf16});
}

}  // namespace
}  // namespace dkc
