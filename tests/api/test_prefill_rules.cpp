// One test per validation rule of dk_prefill_query / _workspace_size / _run (SPEC §3, §6).
// Rules the operand checker shares with decode (dtypes, strides, alignment, devices) get one
// representative each here; the prefill-only rules (cu_seqlens, host integers, state sources
// and sinks, workspace) get all their variants.
#include "rejection.hpp"

namespace dka {
namespace {

constexpr dk_status kInvalid = DK_STATUS_INVALID_ARGUMENT;
constexpr dk_status kUnsupported = DK_STATUS_UNSUPPORTED;
using A = dk_prefill_args;

prefill_spec raw_gates() {
  prefill_spec s = valid_prefill();
  s.rule.form = DK_GATE_RAW;
  return s;
}

prefill_spec with_dense() {
  prefill_spec s = valid_prefill();
  s.final = final_dst::slots_and_dense;
  return s;
}

std::int64_t ntok() { return valid_prefill().tokens(); }
std::int64_t nseq() { return std::int64_t(valid_prefill().lens.size()); }

// ---- NULL handles and required operands

TEST_CASE("prefill rejects a NULL context") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"context"}, kQueryToo, [](prefill_call& c) { c.context = nullptr; });
}

TEST_CASE("prefill rejects a NULL config") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"config"}, kQueryToo, [](prefill_call& c) { c.null_config = true; });
}

TEST_CASE("prefill rejects NULL args") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"args"}, kQueryToo, [](prefill_call& c) { c.null_args = true; });
}

TEST_CASE("prefill queries reject NULL out pointers") {
  prefill_problem p(cpu_ctx(), valid_prefill());
  const dk_prefill_args a = p.args();
  CHECK(dk_prefill_query(cpu_ctx(), &p.config, &a, nullptr) == kInvalid);
  CHECK(names(dk_last_error(), "out_impl_name"));
  CHECK(dk_prefill_workspace_size(cpu_ctx(), &p.config, &a, nullptr) == kInvalid);
  CHECK(names(dk_last_error(), "out_bytes"));
}

TEST_CASE("prefill rejects each NULL required operand") {
  for (auto [member, name] : {std::pair{&A::q, "q"}, std::pair{&A::k, "k"}, std::pair{&A::v, "v"},
                              std::pair{&A::out, "out"}, std::pair{&A::g, "g"}, std::pair{&A::beta, "beta"},
                              std::pair{&A::cu_seqlens, "cu_seqlens"}}) {
    CAPTURE(name);
    expect_prefill_rejected(valid_prefill(), kInvalid, {name}, kQueryToo, [&](prefill_call& c) { c.args.*member = nullptr; });
  }
}

TEST_CASE("prefill rejects a NULL data pointer in a run") {
  for (auto [member, name] : {std::pair{&A::q, "q"}, std::pair{&A::out, "out"}, std::pair{&A::beta, "beta"},
                              std::pair{&A::cu_seqlens, "cu_seqlens"}, std::pair{&A::state_pool, "state_pool"},
                              std::pair{&A::initial_state_indices, "initial_state_indices"},
                              std::pair{&A::final_state_indices, "final_state_indices"},
                              std::pair{&A::final_state, "final_state"}}) {
    CAPTURE(name);
    expect_prefill_rejected(with_dense(), kInvalid, {name}, kRunOnly, [&](prefill_call& c) { c.edit(member)->data = nullptr; });
  }
}

TEST_CASE("prefill queries accept NULL data pointers") {
  prefill_problem p(cpu_ctx(), with_dense());
  dk_prefill_args a = p.args();
  call_edits e;
  for (const dk_tensor* A::*m : {&A::q, &A::k, &A::v, &A::out, &A::g, &A::beta, &A::cu_seqlens, &A::state_pool,
                                  &A::initial_state_indices, &A::final_state_indices, &A::final_state}) {
    dk_tensor* t = e.copy(a.*m);
    t->data = nullptr;
    a.*m = t;
  }
  const char* impl = nullptr;
  CHECK(dk_prefill_query(cpu_ctx(), &p.config, &a, &impl) == DK_STATUS_SUCCESS);
  INFO(dk_last_error());
  REQUIRE(impl != nullptr);
  CHECK(impl[0] != '\0');
  std::size_t bytes = 0;
  CHECK(dk_prefill_workspace_size(cpu_ctx(), &p.config, &a, &bytes) == DK_STATUS_SUCCESS);
}

// ---- dtypes and ranks

TEST_CASE("prefill rejects a wrong dtype for each operand") {
  const dk_dtype i32{DK_DTYPE_CODE_INT, 32, 1}, f32{DK_DTYPE_CODE_FLOAT, 32, 1}, f16{DK_DTYPE_CODE_FLOAT, 16, 1},
      bf16{DK_DTYPE_CODE_BFLOAT, 16, 1}, u64{DK_DTYPE_CODE_UINT, 64, 1}, i16{DK_DTYPE_CODE_INT, 16, 1};
  struct bad {
    prefill_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    dk_dtype dtype;
  };
  const bad cases[] = {
      {valid_prefill(), &A::q, "q", i32},
      {valid_prefill(), &A::v, "v", bf16},
      {valid_prefill(), &A::g, "g", f16},
      {raw_gates(), &A::A_log, "A_log", f16},
      {valid_prefill(), &A::cu_seqlens, "cu_seqlens", f32},
      {valid_prefill(), &A::cu_seqlens, "cu_seqlens", u64},
      {valid_prefill(), &A::cu_seqlens, "cu_seqlens", i16},
      {valid_prefill(), &A::state_pool, "state_pool", i32},
      {valid_prefill(), &A::initial_state_indices, "initial_state_indices", f32},
      {valid_prefill(), &A::final_state_indices, "final_state_indices", i16},
      {with_dense(), &A::final_state, "final_state", i32},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    expect_prefill_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](prefill_call& c) { c.edit(b.member)->dtype = b.dtype; });
  }
  expect_prefill_rejected(valid_prefill(), kInvalid, {"cu_seqlens"}, kQueryToo,
                          [](prefill_call& c) { c.edit(&A::cu_seqlens)->dtype.lanes = 4; });
}

TEST_CASE("prefill rejects a wrong rank for each operand") {
  const prefill_spec s = valid_prefill();
  const std::int64_t N = nseq(), HQ = s.heads.HQ, HV = s.heads.HV, K = s.heads.K, V = s.heads.V;
  struct bad {
    prefill_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    std::vector<std::int64_t> shape;
  };
  const bad cases[] = {
      {s, &A::q, "q", {1, ntok(), HQ, K}},  // decode-shaped q
      {s, &A::out, "out", {ntok(), HV * V}},
      {s, &A::beta, "beta", {ntok(), HV, 1}},
      {s, &A::cu_seqlens, "cu_seqlens", {N + 1, 1}},
      {s, &A::initial_state_indices, "initial_state_indices", {1, N}},
      {with_dense(), &A::final_state, "final_state", {N, HV, V * K}},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    expect_prefill_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](prefill_call& c) { c.edits.reshape(c.edit(b.member), b.shape); });
  }
}

// ---- shapes and host integers

TEST_CASE("prefill rejects shape mismatches between operands") {
  const prefill_spec s = valid_prefill();
  const std::int64_t N = nseq(), T = ntok(), HQ = s.heads.HQ, HV = s.heads.HV, K = s.heads.K, V = s.heads.V;
  const std::int64_t P = 2 * N + 2;
  struct bad {
    prefill_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    std::vector<std::int64_t> shape;
  };
  const bad cases[] = {
      {s, &A::k, "k", {T - 1, HQ, K}},
      {s, &A::v, "v", {T + 1, HV, V}},
      {s, &A::out, "out", {T, HV, V + 16}},
      {s, &A::g, "g", {T - 1, HV}},
      {s, &A::g, "g", {T, HV * 2}},
      {s, &A::beta, "beta", {T, HV - 1}},
      {s, &A::cu_seqlens, "cu_seqlens", {N + 2}},
      {s, &A::cu_seqlens, "cu_seqlens", {N}},
      {s, &A::state_pool, "state_pool", {P, HV, V, K + 16}},
      {s, &A::initial_state_indices, "initial_state_indices", {N + 1}},
      {s, &A::final_state_indices, "final_state_indices", {N - 1}},
      {with_dense(), &A::final_state, "final_state", {N + 1, HV, V, K}},
      {with_dense(), &A::final_state, "final_state", {N, HV / 2, V, K}},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    expect_prefill_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](prefill_call& c) { c.edits.reshape(c.edit(b.member), b.shape); });
  }
}

TEST_CASE("prefill rejects num_tokens that disagrees with q") {
  for (std::int64_t n : {ntok() + 1, ntok() - 1, std::int64_t(0), std::int64_t(-1)}) {
    CAPTURE(n);
    expect_prefill_rejected(valid_prefill(), kInvalid, {"num_tokens"}, kQueryToo, [&](prefill_call& c) { c.args.num_tokens = n; });
  }
}

TEST_CASE("prefill rejects num_seqs below 1 or disagreeing with cu_seqlens") {
  for (std::int64_t n : {std::int64_t(0), std::int64_t(-3)}) {
    CAPTURE(n);
    expect_prefill_rejected(valid_prefill(), kInvalid, {"num_seqs"}, kQueryToo, [&](prefill_call& c) { c.args.num_seqs = n; });
  }
  // cu_seqlens holds num_seqs + 1 entries: a num_seqs off by one is caught through its length.
  expect_prefill_rejected(valid_prefill(), kInvalid, {"cu_seqlens"}, kQueryToo,
                          [](prefill_call& c) { c.args.num_seqs = nseq() + 1; });
}

TEST_CASE("prefill rejects max_seqlen inconsistent with num_tokens and num_seqs") {
  // Valid range: ceil(Ntok / N) <= max_seqlen <= Ntok.
  for (std::int64_t m : {ntok() + 1, std::int64_t(1), std::int64_t(-1)}) {
    CAPTURE(m);
    expect_prefill_rejected(valid_prefill(), kInvalid, {"max_seqlen"}, kQueryToo, [&](prefill_call& c) { c.args.max_seqlen = m; });
  }
}

// ---- state sources and sinks

TEST_CASE("prefill rejects a state_pool without indices") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"state_pool"}, kQueryToo, [](prefill_call& c) {
    c.args.initial_state_indices = nullptr;
    c.args.final_state_indices = nullptr;
  });
}

TEST_CASE("prefill rejects state indices without a state_pool") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"initial_state_indices"}, kQueryToo, [](prefill_call& c) {
    c.args.state_pool = nullptr;
    c.args.final_state_indices = nullptr;
  });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"final_state_indices"}, kQueryToo, [](prefill_call& c) {
    c.args.state_pool = nullptr;
    c.args.initial_state_indices = nullptr;
  });
}

// ---- shared operand rules, one representative each

TEST_CASE("prefill rejects HV not a multiple of HQ") {
  const prefill_spec s = valid_prefill();
  expect_prefill_rejected(s, kInvalid, {"HV", "HQ"}, kQueryToo, [&](prefill_call& c) {
    c.edits.reshape(c.edit(&A::q), {ntok(), 3, s.heads.K});
    c.edits.reshape(c.edit(&A::k), {ntok(), 3, s.heads.K});
  });
}

TEST_CASE("prefill answers UNSUPPORTED for head dims that are not multiples of 16 in [16, 256]") {
  const prefill_spec s = valid_prefill();
  for (std::int64_t K : {8, 40, 272}) {
    CAPTURE(K);
    expect_prefill_rejected(s, kUnsupported, {"q"}, kQueryToo, [&](prefill_call& c) {
      c.edits.reshape(c.edit(&A::q), {ntok(), s.heads.HQ, K});
      c.edits.reshape(c.edit(&A::k), {ntok(), s.heads.HQ, K});
    });
  }
  expect_prefill_rejected(s, kUnsupported, {"v"}, kQueryToo, [&](prefill_call& c) {
    c.edits.reshape(c.edit(&A::v), {ntok(), s.heads.HV, 56});
    c.edits.reshape(c.edit(&A::out), {ntok(), s.heads.HV, 56});
  });
}

TEST_CASE("prefill rejects bad strides and alignment") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"q"}, kQueryToo,
                          [](prefill_call& c) { c.edits.own_strides(c.edit(&A::q))[2] = 2; });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"cu_seqlens"}, kQueryToo,
                          [](prefill_call& c) { c.edits.own_strides(c.edit(&A::cu_seqlens))[0] = 2; });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"k"}, kQueryToo, [](prefill_call& c) {
    std::int64_t* s = c.edits.own_strides(c.edit(&A::k));
    s[0] = -s[0];
  });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"v"}, kQueryToo, [](prefill_call& c) {
    dk_tensor* t = c.edit(&A::v);
    t->data = static_cast<char*>(t->data) + 4;
  });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"cu_seqlens"}, kQueryToo,
                          [](prefill_call& c) { c.edit(&A::cu_seqlens)->byte_offset = 2; });
  expect_prefill_rejected(with_dense(), kInvalid, {"final_state"}, kQueryToo,
                          [](prefill_call& c) { c.edits.own_strides(c.edit(&A::final_state))[0] = 0; });
}

TEST_CASE("prefill rejects a raw gate without A_log") {
  expect_prefill_rejected(raw_gates(), kInvalid, {"A_log"}, kQueryToo, [](prefill_call& c) { c.args.A_log = nullptr; });
}

TEST_CASE("prefill rejects a tensor on another device") {
  for (auto [member, name] : {std::pair{&A::q, "q"}, std::pair{&A::cu_seqlens, "cu_seqlens"},
                              std::pair{&A::final_state, "final_state"}}) {
    CAPTURE(name);
    expect_prefill_rejected(with_dense(), kInvalid, {name}, kQueryToo,
                            [&](prefill_call& c) { c.edit(member)->device = dk_device{DK_DEVICE_CUDA, 0}; });
  }
}

TEST_CASE("prefill rejects invalid dk_config values") {
  expect_prefill_rejected(valid_prefill(), kInvalid, {"gate_kind"}, kQueryToo, [](prefill_call& c) { c.config.gate_kind = 9; });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"state_layout"}, kQueryToo, [](prefill_call& c) { c.config.state_layout = -1; });
}

// ---- workspace

TEST_CASE("prefill rejects a workspace smaller than dk_prefill_workspace_size") {
  prefill_problem p(cpu_ctx(), valid_prefill());
  const dk_prefill_args a = p.args();
  std::size_t needed = 0;
  REQUIRE(dk_prefill_workspace_size(cpu_ctx(), &p.config, &a, &needed) == DK_STATUS_SUCCESS);
  if (needed == 0) {
    // Nothing to undercut on this backend; the conformance suite checks the rule on every
    // backend that asks for scratch.
    MESSAGE("the CPU backend needs no workspace for this problem");
    return;
  }
  expect_prefill_rejected(valid_prefill(), DK_STATUS_INSUFFICIENT_WORKSPACE, {"workspace_bytes"}, kRunOnly,
                          [](prefill_call& c) { c.workspace_bytes -= 1; });
  expect_prefill_rejected(valid_prefill(), kInvalid, {"workspace"}, kRunOnly, [](prefill_call& c) { c.workspace = nullptr; });
}

TEST_CASE("prefill rejects a workspace not aligned to 256 bytes") {
  void* ws = nullptr;
  REQUIRE(dk_malloc(cpu_ctx(), 4096, &ws) == DK_STATUS_SUCCESS);
  expect_prefill_rejected(valid_prefill(), kInvalid, {"workspace"}, kRunOnly, [&](prefill_call& c) {
    c.workspace = static_cast<char*>(ws) + 64;
    c.workspace_bytes = std::max<std::size_t>(c.workspace_bytes, 1024);
  });
  dk_free(cpu_ctx(), ws);
}

}  // namespace
}  // namespace dka
