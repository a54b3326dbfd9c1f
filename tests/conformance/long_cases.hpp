// Helpers shared by the long-sequence cases (test_long.cpp, test_gpu_large.cpp).
#pragma once
#include <vector>

#include "harness.hpp"

namespace dkc {

// Runs `spec` once per io dtype in `ios`, all on the same bf16-representable inputs, against a
// single golden run (the golden dominates the cost of long cases).
void check_prefill_shared_inputs(prefill_spec spec, const std::vector<dt>& ios);

}  // namespace dkc
