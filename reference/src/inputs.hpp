// Reading one token's inputs out of a dk_ref::sequence (private to the reference library).
#pragma once
#include <cmath>
#include <stdexcept>
#include <vector>

#include "dk_ref/reference.hpp"

namespace dk_ref::detail {

// Query/key head read by value head h: repeat-interleave mapping h / (HV/HQ), never h % HQ.
inline int qk_head_of(const dims& d, int value_head) { return value_head / (d.hv / d.hq); }

inline double output_scale(const config& cfg, const dims& d) {
  return cfg.scale != 0.0 ? cfg.scale : 1.0 / std::sqrt(double(d.dk));
}

// q or k row [K] of token t for query/key head `qk_head`, L2-normalised when the config asks.
std::vector<double> qk_row(const config& cfg, const dims& d, const double* qk, int t, int qk_head);

// Throws std::invalid_argument on head counts or dimensions the math does not define.
void check_dims(const dims& d);

}  // namespace dk_ref::detail
