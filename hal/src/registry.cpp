#include "registry.hpp"

namespace dk {

namespace {
const backend_vtable* const kBackends[] = {
#if DK_WITH_CUDA
    &dk_cuda_backend,
#endif
#if DK_WITH_HIP
    &dk_hip_backend,
#endif
#if DK_WITH_CPU
    &dk_cpu_backend,
#endif
    nullptr};
}  // namespace

const backend_vtable* const* compiled_backends() { return kBackends; }

const backend_vtable* find_backend(dk_backend id) {
  for (const backend_vtable* const* b = kBackends; *b; ++b)
    if ((*b)->id == id) return *b;
  return nullptr;
}

}  // namespace dk
