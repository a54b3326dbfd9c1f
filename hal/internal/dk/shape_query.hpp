// For host tools that ask a backend's launch code about problem shapes with no
// data behind them (backends/hip/lds_budget.cpp, backends/cuda/tools/dispatch_dump.cpp).
#pragma once
#include <string.h>

#include "dk/problem.hpp"

namespace dk::shape_query {

// An operand of dtype t with no data, its innermost dim contiguous.
inline void set_operand(operand& o, dtype t) {
  memset(&o, 0, sizeof o);
  o.type = t;
  o.stride[3] = 1;
}

inline const char* const kDtype[] = {"f32", "bf16", "f16"};  // by dk::dtype, state dtypes
inline const char* const kGate[] = {"none", "scalar", "per_key"};  // by dk::gate_kind

}  // namespace dk::shape_query
