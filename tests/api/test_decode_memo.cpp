// dk_decode_run / dk_decode_query skip validation when the calling thread's last
// successful call had the same arguments (hal/src/validate_memo.cpp). Each test
// changes, after a successful call, something the validation reads, in place
// where an engine could, and expects the change to count.
#include <cmath>

#include "rejection.hpp"

namespace dka {
namespace {

constexpr dk_status kOk = DK_STATUS_SUCCESS;
constexpr dk_status kInvalid = DK_STATUS_INVALID_ARGUMENT;

dk_status run(decode_problem& p, const dk_decode_args& a) { return dk_decode_run(cpu_ctx(), &p.config, &a, nullptr); }
dk_status query(decode_problem& p, const dk_decode_args& a) {
  const char* impl = nullptr;
  return dk_decode_query(cpu_ctx(), &p.config, &a, &impl);
}

TEST_CASE("decode memo: shape, strides and data changed in place are checked again") {
  decode_problem p(cpu_ctx(), valid_decode());
  dk_decode_args a = p.args();
  call_edits e;
  dk_tensor* q = e.copy(a.q);
  std::int64_t* shape = e.own_shape(q);
  std::int64_t* strides = e.own_strides(q);
  a.q = q;
  REQUIRE(run(p, a) == kOk);
  REQUIRE(run(p, a) == kOk);  // the memoised call

  shape[1] = 17;  // T beyond 16
  CHECK(run(p, a) == kInvalid);
  CHECK(names(dk_last_error(), "q"));
  shape[1] = a.k->shape[1];
  REQUIRE(run(p, a) == kOk);

  const std::int64_t inner = strides[3];
  strides[3] = 2;  // the innermost dim no longer contiguous
  CHECK(run(p, a) == kInvalid);
  CHECK(names(dk_last_error(), "q"));
  strides[3] = inner;
  REQUIRE(run(p, a) == kOk);

  void* const data = q->data;
  q->data = static_cast<char*>(data) + 2;  // off the 16-byte row alignment
  CHECK(run(p, a) == kInvalid);
  CHECK(names(dk_last_error(), "q"));
  q->data = data;
  REQUIRE(run(p, a) == kOk);
}

TEST_CASE("decode memo: the config changed in place is checked again") {
  decode_problem p(cpu_ctx(), valid_decode());
  const dk_decode_args a = p.args();
  REQUIRE(run(p, a) == kOk);
  p.config.gate_form = DK_GATE_RAW;  // a raw gate needs A_log, which this call lacks
  CHECK(run(p, a) == kInvalid);
  CHECK(names(dk_last_error(), "A_log"));
  p.config.gate_form = DK_GATE_LOG;
  CHECK(run(p, a) == kOk);
}

TEST_CASE("decode memo: a query without data does not let a run without data through") {
  decode_problem p(cpu_ctx(), valid_decode());
  dk_decode_args a = p.args();
  call_edits e;
  dk_tensor* v = e.copy(a.v);
  v->data = nullptr;
  a.v = v;
  REQUIRE(query(p, a) == kOk);
  REQUIRE(query(p, a) == kOk);
  CHECK(run(p, a) == kInvalid);
  CHECK(names(dk_last_error(), "v"));
}

TEST_CASE("decode memo: a call on other buffers of the same shapes runs on its own buffers") {
  decode_problem p1(cpu_ctx(), valid_decode()), p2(cpu_ctx(), valid_decode());
  const dk_decode_args a1 = p1.args(), a2 = p2.args();
  REQUIRE(run(p1, a1) == kOk);
  p1.act.poison_out();
  p2.act.poison_out();
  p1.upload();
  p2.upload();
  REQUIRE(run(p2, a2) == kOk);
  p1.download();
  p2.download();
  int p1_written = 0, p2_unwritten = 0;
  for (double x : p1.act.out.values()) p1_written += !std::isnan(x);
  for (double x : p2.act.out.values()) p2_unwritten += std::isnan(x);
  CHECK(p1_written == 0);
  CHECK(p2_unwritten == 0);
}

}  // namespace
}  // namespace dka
