// Host entry points of the single-source GPU kernels. The CUDA backend compiles
// kernels/*.cu as CUDA, the HIP backend compiles the same files as HIP; both
// backends call only these functions. Plain C++: includable from .cpp files.
#pragma once
#include <stddef.h>
#include "deltakit/deltakit.h"
#include "dk/problem.hpp"

namespace dk::gpu {

// The device a launch targets, parsed once at context creation.
struct target {
  int arch;           // CUDA: 10*major+minor (80, 90, 100, 120); AMD: gfx number (906)
  int compute_units;  // SMs / CUs
  int max_smem_per_block;
  int device = 0;     // the runtime's device id (keys per-device caches)
};

// Each answers SUCCESS, or a status after calling dk::set_error().
dk_status decode_query(const target& t, const decode_problem& p, const char** out_name);
dk_status decode_launch(const target& t, const decode_problem& p, void* stream);

dk_status prefill_query(const target& t, const prefill_problem& p, const char** out_name);
dk_status prefill_workspace_bytes(const target& t, const prefill_problem& p, size_t* out_bytes);
dk_status prefill_launch(const target& t, const prefill_problem& p, void* workspace,
                         size_t workspace_bytes, void* stream);

}  // namespace dk::gpu
