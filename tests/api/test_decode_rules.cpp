// One test per validation rule of dk_decode_query / dk_decode_run (SPEC §3, §6 "Bad inputs").
#include <limits>

#include "rejection.hpp"

namespace dka {
namespace {

constexpr dk_status kInvalid = DK_STATUS_INVALID_ARGUMENT;
constexpr dk_status kUnsupported = DK_STATUS_UNSUPPORTED;
using A = dk_decode_args;

decode_spec raw_gates() {
  decode_spec s = valid_decode();
  s.rule.form = DK_GATE_RAW;
  return s;
}

decode_spec per_key() {
  decode_spec s = valid_decode();
  s.rule.gate = DK_GATE_PER_KEY;
  s.rule.form = DK_GATE_RAW;
  return s;
}

decode_spec with_out_slots() {
  decode_spec s = valid_decode();
  s.out_slots = true;
  return s;
}

decode_spec with_token_slots() {
  decode_spec s = valid_decode();
  s.token_slots = true;
  return s;
}

// ---- NULL handles and required operands

TEST_CASE("decode rejects a NULL context") {
  expect_decode_rejected(valid_decode(), kInvalid, {"context"}, kQueryToo, [](decode_call& c) { c.context = nullptr; });
}

TEST_CASE("decode rejects a NULL config") {
  expect_decode_rejected(valid_decode(), kInvalid, {"config"}, kQueryToo, [](decode_call& c) { c.null_config = true; });
}

TEST_CASE("decode rejects NULL args") {
  expect_decode_rejected(valid_decode(), kInvalid, {"args"}, kQueryToo, [](decode_call& c) { c.null_args = true; });
}

TEST_CASE("decode query rejects a NULL out_impl_name") {
  decode_problem p(cpu_ctx(), valid_decode());
  const dk_decode_args a = p.args();
  CHECK(dk_decode_query(cpu_ctx(), &p.config, &a, nullptr) == kInvalid);
  CHECK(names(dk_last_error(), "out_impl_name"));
}

TEST_CASE("decode rejects each NULL required operand") {
  struct operand {
    const dk_tensor* A::*member;
    const char* name;
  };
  for (const operand& o : {operand{&A::q, "q"}, operand{&A::k, "k"}, operand{&A::v, "v"},
                           operand{&A::out, "out"}, operand{&A::g, "g"}, operand{&A::beta, "beta"},
                           operand{&A::state_pool, "state_pool"}, operand{&A::state_indices, "state_indices"}}) {
    CAPTURE(o.name);
    expect_decode_rejected(valid_decode(), kInvalid, {o.name}, kQueryToo, [&](decode_call& c) { c.args.*o.member = nullptr; });
  }
}

TEST_CASE("decode rejects a NULL data pointer in a run") {
  struct operand {
    const dk_tensor* A::*member;
    const char* name;
  };
  for (const operand& o : {operand{&A::q, "q"}, operand{&A::k, "k"}, operand{&A::v, "v"},
                           operand{&A::out, "out"}, operand{&A::g, "g"}, operand{&A::beta, "beta"},
                           operand{&A::A_log, "A_log"}, operand{&A::dt_bias, "dt_bias"},
                           operand{&A::state_pool, "state_pool"}, operand{&A::state_indices, "state_indices"}}) {
    CAPTURE(o.name);
    expect_decode_rejected(raw_gates(), kInvalid, {o.name}, kRunOnly, [&](decode_call& c) { c.edit(o.member)->data = nullptr; });
  }
  expect_decode_rejected(with_token_slots(), kInvalid, {"state_token_indices"}, kRunOnly,
                         [](decode_call& c) { c.edit(&A::state_token_indices)->data = nullptr; });
  expect_decode_rejected(with_out_slots(), kInvalid, {"state_out_indices"}, kRunOnly,
                         [](decode_call& c) { c.edit(&A::state_out_indices)->data = nullptr; });
}

TEST_CASE("decode query accepts NULL data pointers") {
  decode_problem p(cpu_ctx(), raw_gates());
  dk_decode_args a = p.args();
  call_edits e;
  for (const dk_tensor* A::*m : {&A::q, &A::k, &A::v, &A::out, &A::g, &A::beta, &A::A_log, &A::dt_bias,
                                  &A::state_pool, &A::state_indices}) {
    dk_tensor* t = e.copy(a.*m);
    t->data = nullptr;
    a.*m = t;
  }
  const char* impl = nullptr;
  const dk_status s = dk_decode_query(cpu_ctx(), &p.config, &a, &impl);
  INFO(dk_last_error());
  CHECK(s == DK_STATUS_SUCCESS);
  REQUIRE(impl != nullptr);
  CHECK(impl[0] != '\0');
}

// ---- dtypes

TEST_CASE("decode rejects a wrong dtype for each operand") {
  struct bad {
    decode_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    dk_dtype dtype;
  };
  const dk_dtype i32{DK_DTYPE_CODE_INT, 32, 1}, f64{DK_DTYPE_CODE_FLOAT, 64, 1}, bf16{DK_DTYPE_CODE_BFLOAT, 16, 1},
      f16{DK_DTYPE_CODE_FLOAT, 16, 1}, f32{DK_DTYPE_CODE_FLOAT, 32, 1}, i16{DK_DTYPE_CODE_INT, 16, 1},
      u32{DK_DTYPE_CODE_UINT, 32, 1}, i8{DK_DTYPE_CODE_INT, 8, 1}, u64{DK_DTYPE_CODE_UINT, 64, 1};
  const bad cases[] = {
      {valid_decode(), &A::q, "q", i32},
      {valid_decode(), &A::q, "q", f64},
      {valid_decode(), &A::k, "k", bf16},  // activations must share q's dtype
      {valid_decode(), &A::v, "v", f16},
      {valid_decode(), &A::out, "out", bf16},
      {valid_decode(), &A::g, "g", f16},  // gates: fp32 or bf16 only
      {valid_decode(), &A::g, "g", i32},
      {valid_decode(), &A::beta, "beta", f16},
      {raw_gates(), &A::A_log, "A_log", i32},
      {raw_gates(), &A::dt_bias, "dt_bias", f64},
      {valid_decode(), &A::state_pool, "state_pool", i32},
      {valid_decode(), &A::state_pool, "state_pool", f64},
      {valid_decode(), &A::state_indices, "state_indices", f32},
      {valid_decode(), &A::state_indices, "state_indices", i16},
      {valid_decode(), &A::state_indices, "state_indices", u32},
      {valid_decode(), &A::state_indices, "state_indices", u64},
      {with_out_slots(), &A::state_out_indices, "state_out_indices", f32},
      {with_token_slots(), &A::state_token_indices, "state_token_indices", i8},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    CAPTURE(int(b.dtype.code));
    CAPTURE(int(b.dtype.bits));
    expect_decode_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](decode_call& c) { c.edit(b.member)->dtype = b.dtype; });
  }
}

TEST_CASE("decode rejects lanes other than 1") {
  for (auto [member, name] : {std::pair{&A::q, "q"}, std::pair{&A::beta, "beta"}, std::pair{&A::state_pool, "state_pool"},
                              std::pair{&A::state_indices, "state_indices"}}) {
    CAPTURE(name);
    expect_decode_rejected(valid_decode(), kInvalid, {name}, kQueryToo, [&](decode_call& c) { c.edit(member)->dtype.lanes = 2; });
  }
}

// ---- ranks and shapes

TEST_CASE("decode rejects a wrong rank for each operand") {
  const decode_spec s = valid_decode();
  const std::int64_t B = s.B, T = s.T, HQ = s.heads.HQ, HV = s.heads.HV, K = s.heads.K, V = s.heads.V;
  struct bad {
    decode_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    std::vector<std::int64_t> shape;
  };
  const bad cases[] = {
      {s, &A::q, "q", {B * T, HQ, K}},  // prefill-shaped q
      {s, &A::k, "k", {B, T, HQ, K, 1}},
      {s, &A::v, "v", {B, T, HV * V}},
      {s, &A::out, "out", {B * T, HV, V}},
      {s, &A::g, "g", {B, T, HV, 1}},  // scalar gate given per-key-shaped
      {per_key(), &A::g, "g", {B, T, HV}},
      {s, &A::beta, "beta", {B, T}},
      {raw_gates(), &A::A_log, "A_log", {1, HV}},
      {per_key(), &A::dt_bias, "dt_bias", {HV}},  // per-key gate needs dt_bias [HV, K]
      {s, &A::state_pool, "state_pool", {11, HV, V * K}},
      {s, &A::state_indices, "state_indices", {B, 1}},
      {with_token_slots(), &A::state_token_indices, "state_token_indices", {B * T}},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    expect_decode_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](decode_call& c) { c.edits.reshape(c.edit(b.member), b.shape); });
  }
}

TEST_CASE("decode rejects shape mismatches between operands") {
  const decode_spec s = valid_decode();
  const std::int64_t B = s.B, T = s.T, HQ = s.heads.HQ, HV = s.heads.HV, K = s.heads.K, V = s.heads.V;
  const std::int64_t P = 2 * B + 3;
  decode_spec rect = valid_decode();  // K != V: a V-last config on a K-last pool is caught
  rect.heads.V = 128;
  struct bad {
    decode_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    std::vector<std::int64_t> shape;
  };
  const bad cases[] = {
      {s, &A::k, "k", {B, T, 1, K}},
      {s, &A::k, "k", {B + 1, T, HQ, K}},
      {s, &A::k, "k", {B, T, HQ, 2 * K}},
      {s, &A::v, "v", {B + 1, T, HV, V}},
      {s, &A::v, "v", {B, T + 1, HV, V}},
      {s, &A::out, "out", {B, T, HV, V / 2}},
      {s, &A::out, "out", {B, T, HV / 2, V}},
      {s, &A::out, "out", {B, 1, HV, V}},
      {s, &A::g, "g", {B, T, HV + 1}},
      {s, &A::g, "g", {B, T - 1, HV}},
      {per_key(), &A::g, "g", {B, T, HV, K / 2}},
      {s, &A::beta, "beta", {B, T, HV / 2}},
      {s, &A::beta, "beta", {B + 1, T, HV}},
      {raw_gates(), &A::A_log, "A_log", {HV + 1}},
      {raw_gates(), &A::dt_bias, "dt_bias", {HV - 1}},
      {per_key(), &A::dt_bias, "dt_bias", {HV, K + 16}},
      {s, &A::state_pool, "state_pool", {P, HV / 2, V, K}},
      {s, &A::state_pool, "state_pool", {P, HV, V, K / 2}},
      {rect, &A::state_pool, "state_pool", {P, HV, K, 128}},  // V-last shape, K-last config
      {s, &A::state_indices, "state_indices", {B + 1}},
      {with_out_slots(), &A::state_out_indices, "state_out_indices", {B - 1}},
      {with_token_slots(), &A::state_token_indices, "state_token_indices", {B, T + 1}},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    expect_decode_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](decode_call& c) { c.edits.reshape(c.edit(b.member), b.shape); });
  }
}

TEST_CASE("decode rejects a negative or NULL shape") {
  expect_decode_rejected(valid_decode(), kInvalid, {"q"}, kQueryToo, [](decode_call& c) {
    dk_tensor* q = c.edit(&A::q);
    c.edits.own_shape(q)[0] = -1;
  });
  expect_decode_rejected(valid_decode(), kInvalid, {"v"}, kQueryToo, [](decode_call& c) {
    dk_tensor* v = c.edit(&A::v);
    c.edits.own_shape(v)[2] = -4;
  });
  expect_decode_rejected(valid_decode(), kInvalid, {"q"}, kQueryToo, [](decode_call& c) { c.edit(&A::q)->shape = nullptr; });
}

TEST_CASE("decode rejects HV not a multiple of HQ") {
  const decode_spec s = valid_decode();  // HQ = 2, HV = 4: make HQ = 3
  expect_decode_rejected(s, kInvalid, {"HV", "HQ"}, kQueryToo, [&](decode_call& c) {
    c.edits.reshape(c.edit(&A::q), {s.B, s.T, 3, s.heads.K});
    c.edits.reshape(c.edit(&A::k), {s.B, s.T, 3, s.heads.K});
  });
}

TEST_CASE("decode answers UNSUPPORTED for head dims that are not multiples of 16 in [16, 256]") {
  const decode_spec s = valid_decode();
  for (std::int64_t K : {8, 40, 100, 272}) {
    CAPTURE(K);
    expect_decode_rejected(s, kUnsupported, {"q"}, kQueryToo, [&](decode_call& c) {
      c.edits.reshape(c.edit(&A::q), {s.B, s.T, s.heads.HQ, K});
      c.edits.reshape(c.edit(&A::k), {s.B, s.T, s.heads.HQ, K});
    });
  }
  for (std::int64_t V : {24, 264}) {
    CAPTURE(V);
    expect_decode_rejected(s, kUnsupported, {"v"}, kQueryToo, [&](decode_call& c) {
      c.edits.reshape(c.edit(&A::v), {s.B, s.T, s.heads.HV, V});
      c.edits.reshape(c.edit(&A::out), {s.B, s.T, s.heads.HV, V});
    });
  }
}

TEST_CASE("decode rejects T > 16 and T = 0") {
  const decode_spec s = valid_decode();
  for (std::int64_t T : {17, 64, 0}) {
    CAPTURE(T);
    expect_decode_rejected(s, kInvalid, {"q"}, kQueryToo, [&](decode_call& c) {
      for (const dk_tensor* A::*m : {&A::q, &A::k})
        c.edits.reshape(c.edit(m), {s.B, T, s.heads.HQ, s.heads.K});
      for (const dk_tensor* A::*m : {&A::v, &A::out})
        c.edits.reshape(c.edit(m), {s.B, T, s.heads.HV, s.heads.V});
      for (const dk_tensor* A::*m : {&A::g, &A::beta}) c.edits.reshape(c.edit(m), {s.B, T, s.heads.HV});
    });
  }
}

// ---- strides, alignment, byte_offset

TEST_CASE("decode rejects a non-contiguous innermost dim") {
  struct bad {
    decode_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    int dim;
    std::int64_t stride;
  };
  const std::int64_t K = valid_decode().heads.K;
  const bad cases[] = {
      {valid_decode(), &A::q, "q", 3, 2},
      {valid_decode(), &A::k, "k", 3, 2},
      {valid_decode(), &A::v, "v", 3, 2},
      {valid_decode(), &A::out, "out", 3, 2},
      {per_key(), &A::g, "g", 3, 2},
      {per_key(), &A::dt_bias, "dt_bias", 1, 2},
      {raw_gates(), &A::A_log, "A_log", 0, 2},
      {valid_decode(), &A::state_pool, "state_pool", 3, 2},
      {valid_decode(), &A::state_pool, "state_pool", 2, K + 16},  // the two inner dims are compact
      {valid_decode(), &A::state_indices, "state_indices", 0, 2},
      {with_token_slots(), &A::state_token_indices, "state_token_indices", 0, 64},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    CAPTURE(b.dim);
    expect_decode_rejected(b.spec, kInvalid, {b.name}, kQueryToo,
                           [&](decode_call& c) { c.edits.own_strides(c.edit(b.member))[b.dim] = b.stride; });
  }
}

TEST_CASE("decode rejects negative strides") {
  for (auto [member, name, dim] : {std::tuple{&A::q, "q", 0}, std::tuple{&A::v, "v", 2}, std::tuple{&A::beta, "beta", 2},
                                   std::tuple{&A::g, "g", 0}, std::tuple{&A::state_pool, "state_pool", 0},
                                   std::tuple{&A::state_pool, "state_pool", 1}}) {
    CAPTURE(name);
    CAPTURE(dim);
    expect_decode_rejected(valid_decode(), kInvalid, {name}, kQueryToo, [&](decode_call& c) {
      std::int64_t* s = c.edits.own_strides(c.edit(member));
      s[dim] = -s[dim];
    });
  }
}

TEST_CASE("decode rejects strides whose furthest element is exactly INT64_MAX elements away") {
  // beta is [B=2, T=2, HV=4]: (2-1) * s0 + (2-1) * 4 + (4-1) * 1 = INT64_MAX elements, so
  // the byte size (extent + 1) * 4 (fp32) overflows; this used to be a signed overflow in the check.
  expect_decode_rejected(valid_decode(), kInvalid, {"beta"}, kQueryToo, [](decode_call& c) {
    c.edits.own_strides(c.edit(&A::beta))[0] = std::numeric_limits<std::int64_t>::max() - 7;
  });
}

TEST_CASE("decode rejects an output that broadcasts (stride 0)") {
  expect_decode_rejected(valid_decode(), kInvalid, {"out"}, kQueryToo,
                         [](decode_call& c) { c.edits.own_strides(c.edit(&A::out))[0] = 0; });
  expect_decode_rejected(valid_decode(), kInvalid, {"state_pool"}, kQueryToo,
                         [](decode_call& c) { c.edits.own_strides(c.edit(&A::state_pool))[0] = 0; });
}

TEST_CASE("decode rejects overlapping pool slots or heads") {
  const decode_spec s = valid_decode();
  const std::int64_t state = std::int64_t(s.heads.K) * s.heads.V;
  expect_decode_rejected(s, kInvalid, {"state_pool"}, kQueryToo,
                         [&](decode_call& c) { c.edits.own_strides(c.edit(&A::state_pool))[0] = state; });
  expect_decode_rejected(s, kInvalid, {"state_pool"}, kQueryToo,
                         [&](decode_call& c) { c.edits.own_strides(c.edit(&A::state_pool))[1] = state / 2; });
}

TEST_CASE("decode rejects misaligned data pointers") {
  struct bad {
    decode_spec spec;
    const dk_tensor* A::*member;
    const char* name;
    std::size_t bytes;
  };
  const bad cases[] = {
      {valid_decode(), &A::q, "q", 4},  // rows are loaded as 16-byte vectors
      {valid_decode(), &A::k, "k", 8},
      {valid_decode(), &A::v, "v", 2},
      {valid_decode(), &A::out, "out", 4},
      {valid_decode(), &A::beta, "beta", 2},  // element alignment
      {valid_decode(), &A::g, "g", 1},
      {valid_decode(), &A::state_pool, "state_pool", 8},
      {valid_decode(), &A::state_indices, "state_indices", 2},
      {raw_gates(), &A::A_log, "A_log", 3},
  };
  for (const bad& b : cases) {
    CAPTURE(b.name);
    expect_decode_rejected(b.spec, kInvalid, {b.name}, kQueryToo, [&](decode_call& c) {
      dk_tensor* t = c.edit(b.member);
      t->data = static_cast<char*>(t->data) + b.bytes;
    });
  }
}

TEST_CASE("decode rejects a byte_offset that misaligns the data") {
  for (auto [member, name, bytes] : {std::tuple{&A::q, "q", 4}, std::tuple{&A::state_pool, "state_pool", 2},
                                     std::tuple{&A::beta, "beta", 1}, std::tuple{&A::state_indices, "state_indices", 2}}) {
    CAPTURE(name);
    expect_decode_rejected(valid_decode(), kInvalid, {name}, kQueryToo,
                           [&](decode_call& c) { c.edit(member)->byte_offset = std::uint64_t(bytes); });
  }
}

TEST_CASE("decode rejects row strides that break 16-byte row alignment") {
  const decode_spec s = valid_decode();
  expect_decode_rejected(s, kInvalid, {"q"}, kQueryToo, [&](decode_call& c) {
    std::int64_t* st = c.edits.own_strides(c.edit(&A::q));
    st[2] = s.heads.K + 1;  // fp32: 260-byte head stride
    st[1] = st[2] * s.heads.HQ;
    st[0] = st[1] * s.T;
  });
  expect_decode_rejected(s, kInvalid, {"state_pool"}, kQueryToo, [&](decode_call& c) {
    std::int64_t* st = c.edits.own_strides(c.edit(&A::state_pool));
    st[0] += 1;  // page stride one element off
  });
}

// ---- index operands

TEST_CASE("decode rejects state_out_indices together with state_token_indices") {
  expect_decode_rejected(with_token_slots(), kInvalid, {"state_token_indices", "state_out_indices"}, kQueryToo,
                         [](decode_call& c) { c.args.state_out_indices = c.args.state_indices; });
}

// ---- gates

TEST_CASE("decode rejects a raw gate without A_log") {
  expect_decode_rejected(raw_gates(), kInvalid, {"A_log"}, kQueryToo, [](decode_call& c) { c.args.A_log = nullptr; });
  expect_decode_rejected(per_key(), kInvalid, {"A_log"}, kQueryToo, [](decode_call& c) { c.args.A_log = nullptr; });
}

TEST_CASE("decode rejects A_log or dt_bias with a log-space gate") {
  expect_decode_rejected(raw_gates(), kInvalid, {"A_log"}, kQueryToo, [](decode_call& c) { c.config.gate_form = DK_GATE_LOG; });
  expect_decode_rejected(raw_gates(), kInvalid, {"dt_bias"}, kQueryToo, [](decode_call& c) {
    c.config.gate_form = DK_GATE_LOG;
    c.args.A_log = nullptr;
  });
}

TEST_CASE("decode rejects a gate tensor with DK_GATE_NONE") {
  expect_decode_rejected(valid_decode(), kInvalid, {"g"}, kQueryToo, [](decode_call& c) { c.config.gate_kind = DK_GATE_NONE; });
}

// ---- devices and config

TEST_CASE("decode rejects a tensor on another device") {
  struct bad {
    const dk_tensor* A::*member;
    const char* name;
    dk_device device;
  };
  for (const bad& b : {bad{&A::q, "q", {DK_DEVICE_CUDA, 0}}, bad{&A::q, "q", {DK_DEVICE_CPU, 1}},
                       bad{&A::out, "out", {DK_DEVICE_ROCM, 0}}, bad{&A::g, "g", {DK_DEVICE_CUDA, 0}},
                       bad{&A::state_pool, "state_pool", {DK_DEVICE_CUDA, 0}},
                       bad{&A::state_indices, "state_indices", {DK_DEVICE_ROCM, 0}}}) {
    CAPTURE(b.name);
    expect_decode_rejected(valid_decode(), kInvalid, {b.name}, kQueryToo, [&](decode_call& c) { c.edit(b.member)->device = b.device; });
  }
}

TEST_CASE("decode rejects invalid dk_config values") {
  struct bad {
    const char* word;
    void (*apply)(dk_config&);
  };
  const bad cases[] = {
      {"gate_kind", [](dk_config& c) { c.gate_kind = 3; }},
      {"gate_kind", [](dk_config& c) { c.gate_kind = -1; }},
      {"gate_form", [](dk_config& c) { c.gate_form = 2; }},
      {"beta_form", [](dk_config& c) { c.beta_form = 7; }},
      {"state_layout", [](dk_config& c) { c.state_layout = 2; }},
      {"scale", [](dk_config& c) { c.scale = NAN; }},
      {"scale", [](dk_config& c) { c.scale = INFINITY; }},
  };
  for (const bad& b : cases) {
    CAPTURE(b.word);
    expect_decode_rejected(valid_decode(), kInvalid, {b.word}, kQueryToo, [&](decode_call& c) { b.apply(c.config); });
  }
}

}  // namespace
}  // namespace dka
