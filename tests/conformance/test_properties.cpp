// SPEC §8 properties through the public API: determinism, isolation of sequences, and one
// context driven from two threads on their own streams.
#include <algorithm>
#include <cmath>
#include <thread>

#include "harness.hpp"

namespace dkc {
namespace {

// Byte ranges [first, last) of a buffer, for comparing parts of two runs.
struct region {
  const buffer* buf;
  std::size_t first, last;
};

// Bytes of the output rows of tokens [first, first + count).
void out_rows(const tensor& out, std::int64_t first, std::int64_t count, std::int64_t row,
              std::vector<region>& r) {
  for (std::int64_t lin = first * row; lin < (first + count) * row; ++lin) {
    const std::size_t byte = out.byte_of(lin);
    r.push_back({out.buf.get(), byte, byte + out.elem_size()});
  }
}

void slot_bytes(const tensor& pool, const rule_spec& rule, const head_spec& h, std::int64_t slot,
                std::vector<char>& mask) {
  for_each_state_element(pool, rule, h, slot, [&](int, int, int, std::size_t byte) {
    std::fill_n(mask.begin() + byte, pool.elem_size(), 1);
  });
}

// Counts bytes in `regions` that differ between two snapshots of `buffers`.
std::int64_t differing(const std::vector<buffer*>& buffers, const snapshot& a, const snapshot& b,
                       const std::vector<region>& regions) {
  std::int64_t n = 0;
  for (const region& r : regions) {
    const std::size_t i = std::size_t(std::find(buffers.begin(), buffers.end(), r.buf) - buffers.begin());
    for (std::size_t byte = r.first; byte < r.last; ++byte) n += a[i][byte] != b[i][byte];
  }
  return n;
}

// Bytes of `t`'s buffer outside `excluded` that differ between the snapshots.
std::int64_t differing_outside(const std::vector<buffer*>& buffers, const snapshot& a,
                               const snapshot& b, const tensor& t, const std::vector<char>& excluded) {
  const std::size_t i = std::size_t(std::find(buffers.begin(), buffers.end(), t.buf.get()) - buffers.begin());
  std::int64_t n = 0;
  for (std::size_t byte = 0; byte < a[i].size(); ++byte) n += !excluded[byte] && a[i][byte] != b[i][byte];
  return n;
}

// NaN and Inf into every input of tokens [first, first + count) (all heads).
void contaminate_tokens(activations& act, const rule_spec& rule, const head_spec& h,
                        std::int64_t first, std::int64_t count) {
  auto rows = [&](tensor& t, std::int64_t per_token, double value) {
    if (!t.present()) return;
    for (std::int64_t lin = first * per_token; lin < (first + count) * per_token; ++lin)
      t.set_at(lin, (lin % 3 == 0) ? INFINITY : value);
  };
  rows(act.q, std::int64_t(h.HQ) * h.K, NAN);
  rows(act.k, std::int64_t(h.HQ) * h.K, NAN);
  rows(act.v, std::int64_t(h.HV) * h.V, NAN);
  rows(act.g, std::int64_t(h.HV) * rule.gate_width(h.K), NAN);
  rows(act.beta, h.HV, NAN);
}

TEST_CASE("decode: determinism") {
  decode_spec s;
  s.B = 6;
  s.T = 4;
  s.heads = {2, 8, 128, 128};
  s.rule.gate = DK_GATE_PER_KEY;
  s.types.io = dt::bf16;
  s.types.state = dt::bf16;
  s.padded = {2};
  s.token_slots = true;
  s.seed = 4000;
  INFO(s.describe());
  decode_problem p(ctx(), s);
  const std::vector<buffer*> buffers = p.buffers();
  const snapshot before = take_snapshot(buffers);
  DK_REQUIRE_OK(run_decode(p));
  const snapshot first = take_snapshot(buffers);
  for (int run = 0; run < 3; ++run) {
    restore_snapshot(buffers, before);
    DK_REQUIRE_OK(run_decode(p));
    CHECK(take_snapshot(buffers) == first);
  }
}

TEST_CASE("prefill: determinism") {
  prefill_spec s;
  s.lens = {700, 300, 65, 1};
  s.heads = {2, 4, 64, 128};
  s.types.io = dt::bf16;
  s.initial = true;
  s.final = final_dst::slots_and_dense;
  s.seed = 4100;
  INFO(s.describe());
  prefill_problem p(ctx(), s);
  const std::vector<buffer*> buffers = p.buffers();
  const snapshot before = take_snapshot(buffers);
  DK_REQUIRE_OK(run_prefill(p));
  const snapshot first = take_snapshot(buffers);
  for (int run = 0; run < 2; ++run) {
    restore_snapshot(buffers, before);
    DK_REQUIRE_OK(run_prefill(p));
    CHECK(take_snapshot(buffers) == first);
  }
}

TEST_CASE("decode: isolation") {
  // NaN/Inf in one sequence's inputs and state changes nothing of any other sequence.
  for (dk_gate_kind gate : {DK_GATE_SCALAR, DK_GATE_PER_KEY}) {
    decode_spec s;
    s.B = 5;
    s.T = 4;
    s.heads = {2, 4, 64, 64};
    s.rule.gate = gate;
    s.padded = {4};
    s.out_slots = true;
    s.seed = 4200 + gate;
    INFO(s.describe());
    const int bad = 2;
    decode_problem p(ctx(), s);
    const std::vector<buffer*> buffers = p.buffers();
    const snapshot before = take_snapshot(buffers);
    DK_REQUIRE_OK(run_decode(p));
    const snapshot clean = take_snapshot(buffers);

    restore_snapshot(buffers, before);
    contaminate_tokens(p.act, s.rule, s.heads, std::int64_t(bad) * s.T, s.T);
    poison_slot(p.pool, s.rule, s.heads, p.read_slot[bad]);
    DK_REQUIRE_OK(run_decode(p));
    const snapshot dirty = take_snapshot(buffers);

    const std::int64_t row = std::int64_t(s.heads.HV) * s.heads.V;
    std::vector<region> others;
    for (int b = 0; b < s.B; ++b)
      if (b != bad) out_rows(p.act.out, std::int64_t(b) * s.T, s.T, row, others);
    CHECK(differing(buffers, clean, dirty, others) == 0);
    std::vector<char> own(p.pool.buf->host.size(), 0);
    slot_bytes(p.pool, s.rule, s.heads, p.read_slot[bad], own);
    if (p.write_slot[bad] >= 0) slot_bytes(p.pool, s.rule, s.heads, p.write_slot[bad], own);
    CHECK(differing_outside(buffers, clean, dirty, p.pool, own) == 0);
  }
}

TEST_CASE("prefill: isolation") {
  for (dk_gate_kind gate : {DK_GATE_SCALAR, DK_GATE_PER_KEY}) {
    prefill_spec s;
    s.lens = {37, 50, 64, 20, 90};  // the bad sequence starts and ends inside chunks
    s.heads = {2, 4, 64, 64};
    s.rule.gate = gate;
    s.initial = true;
    s.final = final_dst::slots_and_dense;
    s.seed = 4300 + gate;
    INFO(s.describe());
    const int bad = 1;
    prefill_problem p(ctx(), s);
    const std::vector<buffer*> buffers = p.buffers();
    const snapshot before = take_snapshot(buffers);
    DK_REQUIRE_OK(run_prefill(p));
    const snapshot clean = take_snapshot(buffers);

    restore_snapshot(buffers, before);
    contaminate_tokens(p.act, s.rule, s.heads, p.cu[bad], s.lens[bad]);
    poison_slot(p.pool, s.rule, s.heads, p.initial_slot[bad]);
    DK_REQUIRE_OK(run_prefill(p));
    const snapshot dirty = take_snapshot(buffers);

    const std::int64_t row = std::int64_t(s.heads.HV) * s.heads.V;
    std::vector<region> others;
    for (std::int64_t n = 0; n < p.num_seqs(); ++n)
      if (n != bad) out_rows(p.act.out, p.cu[n], s.lens[n], row, others);
    CHECK(differing(buffers, clean, dirty, others) == 0);
    std::vector<char> own(p.pool.buf->host.size(), 0);
    slot_bytes(p.pool, s.rule, s.heads, p.initial_slot[bad], own);
    slot_bytes(p.pool, s.rule, s.heads, p.final_slot[bad], own);
    CHECK(differing_outside(buffers, clean, dirty, p.pool, own) == 0);
    std::vector<char> own_row(p.final_state.buf->host.size(), 0);
    slot_bytes(p.final_state, s.rule, s.heads, bad, own_row);
    CHECK(differing_outside(buffers, clean, dirty, p.final_state, own_row) == 0);
  }
}

// One thread's work: its own stream, a decode and a prefill problem run `rounds` times.
struct worker {
  decode_problem decode;
  prefill_problem prefill;
  std::vector<snapshot> decode_results, prefill_results;
  std::string error;

  void run(int rounds) {
    void* stream = nullptr;
    try {
      check(dk_stream_create(ctx(), &stream), "dk_stream_create");
      const std::vector<buffer*> db = decode.buffers(), pb = prefill.buffers();
      const snapshot d0 = take_snapshot(db), p0 = take_snapshot(pb);
      for (int r = 0; r < rounds; ++r) {
        restore_snapshot(db, d0);
        check(run_decode(decode, stream), "decode");
        decode_results.push_back(take_snapshot(db));
        restore_snapshot(pb, p0);
        check(run_prefill(prefill, stream), "prefill");
        prefill_results.push_back(take_snapshot(pb));
      }
      restore_snapshot(db, d0);
      restore_snapshot(pb, p0);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (stream) dk_stream_destroy(ctx(), stream);
  }
};

decode_spec thread_decode(std::uint64_t seed) {
  decode_spec s;
  s.B = 8;
  s.T = 2;
  s.heads = {2, 4, 64, 64};
  s.padded = {3};
  s.seed = seed;
  return s;
}

prefill_spec thread_prefill(std::uint64_t seed) {
  prefill_spec s;
  s.lens = {300, 1, 129};
  s.heads = {2, 4, 64, 64};
  s.initial = true;
  s.final = final_dst::in_place;
  s.seed = seed;
  return s;
}

TEST_CASE("threads: one context from two threads on their own streams") {
  constexpr int kRounds = 4;
  worker a{decode_problem(ctx(), thread_decode(4400)), prefill_problem(ctx(), thread_prefill(4401)), {}, {}, {}};
  worker b{decode_problem(ctx(), thread_decode(4402)), prefill_problem(ctx(), thread_prefill(4403)), {}, {}, {}};
  const expected ad = golden_decode(a.decode), ap = golden_prefill(a.prefill);
  const expected bd = golden_decode(b.decode), bp = golden_prefill(b.prefill);
  const snapshot a_d0 = take_snapshot(a.decode.buffers()), a_p0 = take_snapshot(a.prefill.buffers());
  const snapshot b_d0 = take_snapshot(b.decode.buffers()), b_p0 = take_snapshot(b.prefill.buffers());

  std::thread ta([&] { a.run(kRounds); });
  std::thread tb([&] { b.run(kRounds); });
  ta.join();
  tb.join();
  REQUIRE_MESSAGE(a.error.empty(), a.error);
  REQUIRE_MESSAGE(b.error.empty(), b.error);

  struct job {
    const char* name;
    worker& w;
    bool is_decode;
    const expected& e;
    const snapshot& before;
  };
  for (const job& j : {job{"thread a decode", a, true, ad, a_d0}, job{"thread a prefill", a, false, ap, a_p0},
                       job{"thread b decode", b, true, bd, b_d0}, job{"thread b prefill", b, false, bp, b_p0}}) {
    INFO(j.name);
    const std::vector<snapshot>& results = j.is_decode ? j.w.decode_results : j.w.prefill_results;
    REQUIRE(results.size() == std::size_t(kRounds));
    for (int r = 1; r < kRounds; ++r) CHECK(results[std::size_t(r)] == results[0]);
    const std::vector<buffer*> buffers = j.is_decode ? j.w.decode.buffers() : j.w.prefill.buffers();
    restore_snapshot(buffers, results[0]);
    tensor& out = j.is_decode ? j.w.decode.act.out : j.w.prefill.act.out;
    const tensor& pool = j.is_decode ? j.w.decode.pool : j.w.prefill.pool;
    const rule_spec& rule = j.is_decode ? j.w.decode.spec.rule : j.w.prefill.spec.rule;
    const head_spec& heads = j.is_decode ? j.w.decode.spec.heads : j.w.prefill.spec.heads;
    const verdict v = verify(j.e, out, &pool, nullptr, rule, heads, buffers, j.before);
    INFO(v.describe());
    CHECK(v.out.relative() <= tolerance(dtype_spec{}));
    CHECK(v.state.relative() <= tolerance(dtype_spec{}));
    CHECK(v.changed_bytes == 0);
    CHECK(v.nonzero_padding == 0);
  }
}

}  // namespace
}  // namespace dkc
