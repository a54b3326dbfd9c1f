// CUDA only: decode launched from contexts other than the one that launched it first. The
// CUDA backend remembers each kernel's function in the first context that launches it and
// takes a context-independent handle from any other (kernels/common/vendor.cuh); these cases
// check that decode gives correct results from a second context, from contexts created after
// one is destroyed (they take its address) and after a device reset. They check results
// only: the address-only claim before cuCtxGetId passed them too (kernels/decode/NOTES.md v17
// run 2), so which handle launched is not what they can tell.
#include <string>

#include <cuda.h>
#include <cuda_runtime.h>

#include "harness.hpp"

namespace dkc {
namespace {

// Driver entry points through the runtime, as the library takes them: the test links no
// libcuda, so it loads on machines without a driver (where main() skips every case).
void* driver_entry_point(const char* name) {
  void* p = nullptr;
#if CUDART_VERSION >= 12000
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t e = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &found);
#endif
  return e == cudaSuccess && found == cudaDriverEntryPointSuccess ? p : nullptr;
#else  // CUDA 11: no query result
  return cudaGetDriverEntryPoint(name, &p, cudaEnableDefault) == cudaSuccess ? p : nullptr;
#endif
}

struct driver_contexts {
  // cuCtxCreate as of CUDA 11.4 (execution affinity parameters), which CUDA 12.0 gives
  CUresult (*create)(CUcontext*, void*, int, unsigned, CUdevice) = nullptr;
  CUresult (*destroy)(CUcontext) = nullptr;
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*current)(CUcontext*) = nullptr;
  CUresult (*device)(CUdevice*, int) = nullptr;
  bool complete() const { return create && destroy && push && pop && current && device; }
};

const driver_contexts& driver() {
  static const driver_contexts d = [] {
    driver_contexts c;
    c.create = reinterpret_cast<decltype(c.create)>(driver_entry_point("cuCtxCreate"));
    c.destroy = reinterpret_cast<decltype(c.destroy)>(driver_entry_point("cuCtxDestroy"));
    c.push = reinterpret_cast<decltype(c.push)>(driver_entry_point("cuCtxPushCurrent"));
    c.pop = reinterpret_cast<decltype(c.pop)>(driver_entry_point("cuCtxPopCurrent"));
    c.current = reinterpret_cast<decltype(c.current)>(driver_entry_point("cuCtxGetCurrent"));
    c.device = reinterpret_cast<decltype(c.device)>(driver_entry_point("cuDeviceGet"));
    return c;
  }();
  return d;
}

// One shape per decode launcher an engine's step takes (t1_small, t1_bf16io, the one-wave
// shared-memory grid, the wide one, 16-bit state in shared memory, t1_pipe with its 53 KB of
// shared memory, T = 2): each kernel's first launch in the process claims its function for
// the context it comes from.
std::vector<decode_spec> launcher_shapes() {
  struct shape {
    int B, T;
    dt io, state;
  };
  const shape shapes[] = {{2, 1, dt::f32, dt::f32},   {40, 1, dt::bf16, dt::f32}, {20, 1, dt::bf16, dt::f32},
                          {80, 1, dt::bf16, dt::f32}, {80, 1, dt::bf16, dt::bf16}, {80, 1, dt::f32, dt::bf16},
                          {6, 2, dt::f32, dt::f32}};
  std::vector<decode_spec> specs;
  for (const shape& s : shapes)
    specs.push_back(engine_step(s.B, s.T, s.io, s.state, DK_STATE_K_LAST, 8100 + std::uint64_t(s.B * 4 + s.T)));
  return specs;
}

void check_launchers() {
  for (const decode_spec& spec : launcher_shapes()) check_decode(spec);
}

// A context of our own, current on this thread for the scope's length.
struct own_context {
  CUcontext context = nullptr;
  own_context() {
    const driver_contexts& d = driver();
    CUdevice device = 0;
    REQUIRE(d.device(&device, 0) == CUDA_SUCCESS);
    REQUIRE(d.create(&context, nullptr, 0, 0, device) == CUDA_SUCCESS);  // made current by creation
  }
  ~own_context() {
    CUcontext popped = nullptr;
    driver().pop(&popped);
    driver().destroy(context);
  }
};

bool have_driver_contexts() {
  if (driver().complete()) return true;
  FAIL("the CUDA driver offers no cuCtxCreate / cuCtxDestroy / cuCtxPushCurrent / cuCtxPopCurrent");
  return false;
}

TEST_CASE("cuda contexts: decode from a created context, then from one created after it is destroyed") {
  if (!have_driver_contexts()) return;
  // Run alone (ctest runs one case per process), the first context claims every kernel.
  CUcontext first = nullptr;
  {
    const own_context c;
    first = c.context;
    check_launchers();
  }
  for (int round = 0; round < 3; ++round) {
    const own_context c;
    CAPTURE(round);
    // A context created after one is destroyed often takes its address.
    const std::string where = c.context == first ? "the first one's address" : "a new address";
    MESSAGE("created context " << round + 2 << ": " << where);
    check_launchers();
  }
  check_launchers();  // and the primary context after them
}

TEST_CASE("cuda contexts: decode in the primary context and a created one, alternately") {
  if (!have_driver_contexts()) return;
  check_launchers();
  const own_context c;
  check_launchers();
  CUcontext popped = nullptr;
  REQUIRE(driver().pop(&popped) == CUDA_SUCCESS);
  REQUIRE(popped == c.context);
  check_launchers();
  REQUIRE(driver().push(c.context) == CUDA_SUCCESS);
  check_launchers();
}

TEST_CASE("cuda contexts: decode after a device reset") {
  if (!have_driver_contexts()) return;
  // The dk_context holds no device resource; every problem is allocated after the reset.
  CUcontext first = nullptr;
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    check_launchers();
    CUcontext now = nullptr;
    REQUIRE(driver().current(&now) == CUDA_SUCCESS);
    if (round == 0) first = now;
    const std::string where = now == first ? "the first one's address" : "a new address";
    MESSAGE("primary context, round " << round << ": " << where);
    {
      const own_context c;  // and a created context on the reset device
      check_launchers();
    }
    REQUIRE(cudaDeviceReset() == cudaSuccess);
  }
  check_launchers();
}

}  // namespace
}  // namespace dkc
