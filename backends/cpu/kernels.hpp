// The CPU kernels, compiled once per ISA (kernels_generic.cpp, kernels_avx2.cpp,
// kernels_avx512.cpp) into namespaces of their own; cpu_backend.cpp picks one
// table at device_open from what the running CPU supports.
#pragma once
#include <stddef.h>
#include "dk/problem.hpp"

namespace dk::cpu {

// One ISA's kernels. The runs take per-thread scratch carved from one buffer of
// threads * *_scratch_floats(p) floats (64-byte aligned); they cannot fail.
struct kernel_table {
  const char* isa;           // "avx512", "avx2", "generic"
  const char* arch;          // dk_device_info.arch: "x86-64-avx512" ...
  const char* decode_name;   // "cpu:avx512:decode"
  const char* prefill_name;  // "cpu:avx512:prefill_chunk64"
  size_t (*decode_scratch_floats)(const decode_problem& p);
  void (*decode)(const decode_problem& p, int threads, float* scratch);
  size_t (*prefill_scratch_floats)(const prefill_problem& p);
  void (*prefill)(const prefill_problem& p, int threads, float* scratch);
};

namespace generic { extern const kernel_table table; }
#if DK_CPU_HAVE_AVX2
namespace avx2 { extern const kernel_table table; }
#endif
#if DK_CPU_HAVE_AVX512
namespace avx512 { extern const kernel_table table; }
#endif

}  // namespace dk::cpu
