// Which compiled code path (if any) a CUDA device runs. The list comes from
// the one CMake cache variable DK_CUDA_ARCHS, passed in as the compile
// definition DK_CUDA_COMPILED_ARCHS ("sm_80,sm_90a,sm_100a,sm_120a").
#pragma once

namespace dk::cuda {

struct compiled_arch {
  char name[16];       // "sm_90a"
  int number;          // 10*major+minor: 90
  bool arch_specific;  // "a" suffix: runs only on exactly this compute capability
};

// The comma-separated list this build carries.
extern const char* const kCompiledArchs;

// Parses a list like "sm_80,sm_90a" into out[0..capacity); returns the count,
// or -1 on a malformed entry.
int parse_arch_list(const char* list, compiled_arch* out, int capacity);

// The entry a device of compute capability major.minor runs: an "a" entry
// only on its exact capability; a plain sm_XY (SASS, no PTX is embedded) on
// the same major with minor >= Y. The highest match wins; nullptr if none.
const compiled_arch* match_arch(const compiled_arch* list, int count, int major, int minor);

// match_arch() over this build's list.
const compiled_arch* pick_compiled_arch(int major, int minor);

}  // namespace dk::cuda
