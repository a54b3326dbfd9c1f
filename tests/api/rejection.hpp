// Bad-input tests: start from a valid problem in device memory, break one argument, and check
// that the call fails with the exact status, that dk_last_error() names the argument, and that
// every byte of every buffer (pool and outputs included) is unchanged.
#pragma once
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <deltakit/deltakit.h>
#include "dk_test/problem.hpp"

namespace dka {

using namespace dkt;

// The CPU context of the API tests (created on first use).
dk_context* cpu_ctx();

// True when `text` contains `word` with no identifier character on either side.
bool names(const std::string& text, const std::string& word);

// Editable copies of a call's arguments; edited descriptors live as long as the call.
struct call_edits {
  std::deque<dk_tensor> tensors;
  std::deque<std::vector<std::int64_t>> arrays;

  // A copy of *t that the caller may edit (shape/strides still shared until copied).
  dk_tensor* copy(const dk_tensor* t) {
    tensors.push_back(*t);
    return &tensors.back();
  }
  // Gives t its own shape array and returns it.
  std::int64_t* own_shape(dk_tensor* t) {
    arrays.emplace_back(t->shape, t->shape + t->ndim);
    t->shape = arrays.back().data();
    return t->shape;
  }
  // Replaces t's shape (and rank); strides become NULL (compact).
  void reshape(dk_tensor* t, std::vector<std::int64_t> shape) {
    arrays.push_back(std::move(shape));
    t->ndim = std::int32_t(arrays.back().size());
    t->shape = arrays.back().data();
    t->strides = nullptr;
  }
  // Gives t its own explicit strides (compact ones when they were NULL) and returns them.
  std::int64_t* own_strides(dk_tensor* t) {
    std::vector<std::int64_t> s(std::size_t(t->ndim), 1);
    if (t->strides) {
      s.assign(t->strides, t->strides + t->ndim);
    } else {
      for (int d = t->ndim - 1; d > 0; --d) s[std::size_t(d) - 1] = s[std::size_t(d)] * t->shape[d];
    }
    arrays.push_back(std::move(s));
    t->strides = arrays.back().data();
    return t->strides;
  }
};

struct decode_call {
  dk_context* context;
  dk_config config;
  dk_decode_args args;
  call_edits edits;
  bool null_config = false;
  bool null_args = false;
  // Replaces one operand by an editable copy.
  dk_tensor* edit(const dk_tensor* dk_decode_args::*member) {
    dk_tensor* t = edits.copy(args.*member);
    args.*member = t;
    return t;
  }
};

struct prefill_call {
  dk_context* context;
  dk_config config;
  dk_prefill_args args;
  void* workspace = nullptr;     // preset to an allocation of the queried size
  std::size_t workspace_bytes = 0;
  call_edits edits;
  bool null_config = false;
  bool null_args = false;
  dk_tensor* edit(const dk_tensor* dk_prefill_args::*member) {
    dk_tensor* t = edits.copy(args.*member);
    args.*member = t;
    return t;
  }
};

// Which entry points the broken argument must also fail.
enum check_mode {
  kRunOnly = 0,    // only the run (data pointers, workspace: queries do not see them)
  kQueryToo = 1,   // the query (and for prefill the workspace-size query) fails the same way
};

// The valid problems the rules start from.
decode_spec valid_decode();
prefill_spec valid_prefill();

// Builds the problem, applies `mutate`, runs the call (and the queries with kQueryToo), and
// checks status, message and untouched memory.
void expect_decode_rejected(const decode_spec& spec, dk_status expected,
                            const std::vector<std::string>& words, check_mode mode,
                            const std::function<void(decode_call&)>& mutate);
void expect_prefill_rejected(const prefill_spec& spec, dk_status expected,
                             const std::vector<std::string>& words, check_mode mode,
                             const std::function<void(prefill_call&)>& mutate);

}  // namespace dka
