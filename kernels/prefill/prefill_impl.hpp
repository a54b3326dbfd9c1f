// Host-side plan of a prefill call, shared by the entry points (prefill_launch.cu) and the
// per-path launchers (prefill_generic.cu, prefill_tc.cu). Plain C++.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "../launch.hpp"

namespace dk::prefill {

enum class path : int { generic = 0, tc = 1 };

// Everything the launch needs, decided from the target and the host integers alone, so the
// workspace query and the run always agree.
struct plan {
  path kind;
  int cg;          // generic: tokens per chunk (16 or 8)
  int stages;      // tc: shared-memory stages of the sequential kernel (1 or 2)
  int vec_q, vec_k, vec_v, vec_out;  // 16-byte vector access is aligned for this operand
  int64_t ws_bytes;
  const char* name;
};

// Forces a path for testing (-1: automatic). Not thread safe; tools only.
struct plan_overrides {
  int force_path = -1;  // 0 generic, 1 tc
  bool skip_seq = false;  // tc: launch only the parallel stages (timing breakdown)
};
plan_overrides& overrides();

// SUCCESS + plan, or a status after dk::set_error().
dk_status make_plan(const gpu::target& t, const prefill_problem& p, plan* out);

// Shared memory of each path's kernels (bytes), and tc workspace bytes.
int64_t generic_smem(const prefill_problem& p, int cg);
int64_t tc_prep_smem(const prefill_problem& p);
int64_t tc_seq_smem(const prefill_problem& p, int stages);
int64_t tc_workspace(const prefill_problem& p);

dk_status launch_generic(const prefill_problem& p, const plan& pl, void* stream);
dk_status launch_tc(const prefill_problem& p, const plan& pl, void* workspace, void* stream);

}  // namespace dk::prefill
