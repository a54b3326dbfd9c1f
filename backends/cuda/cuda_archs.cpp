#include "cuda_archs.hpp"

#include <string.h>

#ifndef DK_CUDA_COMPILED_ARCHS
#error "DK_CUDA_COMPILED_ARCHS must come from backends/cuda/CMakeLists.txt"
#endif

namespace dk::cuda {

const char* const kCompiledArchs = DK_CUDA_COMPILED_ARCHS;

int parse_arch_list(const char* list, compiled_arch* out, int capacity) {
  int n = 0;
  const char* p = list;
  while (*p) {
    const char* end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const size_t len = size_t(end - p);
    if (len < 5 || len >= sizeof out->name || strncmp(p, "sm_", 3) != 0) return -1;
    int number = 0;
    const char* q = p + 3;
    while (q < end && *q >= '0' && *q <= '9') number = number * 10 + (*q++ - '0');
    const bool specific = q < end && *q == 'a';
    if (specific) ++q;
    if (q != end || number < 10) return -1;
    if (n < capacity) {
      memcpy(out[n].name, p, len);
      out[n].name[len] = '\0';
      out[n].number = number;
      out[n].arch_specific = specific;
    }
    ++n;
    p = *end ? end + 1 : end;
  }
  return n;
}

const compiled_arch* match_arch(const compiled_arch* list, int count, int major, int minor) {
  const int cc = major * 10 + minor;
  const compiled_arch* best = nullptr;
  for (int i = 0; i < count; ++i) {
    const compiled_arch& a = list[i];
    const bool runs = a.arch_specific ? a.number == cc : (a.number / 10 == major && a.number <= cc);
    if (runs && (!best || a.number > best->number)) best = &a;
  }
  return best;
}

const compiled_arch* pick_compiled_arch(int major, int minor) {
  struct table {
    compiled_arch entries[16];
    int count;
    table() { count = parse_arch_list(kCompiledArchs, entries, 16); }
  };
  static const table archs;  // thread-safe one-time parse
  if (archs.count <= 0) return nullptr;
  return match_arch(archs.entries, archs.count > 16 ? 16 : archs.count, major, minor);
}

}  // namespace dk::cuda
