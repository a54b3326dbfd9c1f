// The only file in kernels/ that names vendor APIs. Kernels use dk:: names from
// here, so the CUDA and HIP backends compile the very same sources.
#pragma once
#include <stdint.h>
#include <string.h>

#include <atomic>

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#define DK_VENDOR_HIP 1
#define DK_VENDOR_CUDA 0
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#else
#define DK_VENDOR_HIP 0
#define DK_VENDOR_CUDA 1
#include <cuda.h>  // driver types only: its entry points come through the runtime
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif

#include "arch.cuh"

#define DK_DEVICE __device__ __forceinline__
#define DK_HOST_DEVICE __host__ __device__ __forceinline__
#include "amd.cuh"  // AMD-only pieces (gfx9 DPP reductions)

namespace dk {

// Lanes per warp (CUDA) or wavefront (AMD). Fixed per vendor so that host
// launch code and device code agree: every AMD target deltakit builds for
// (gfx9 / CDNA) runs 64-lane wavefronts. Never use the runtime `warpSize` in
// constant expressions.
#if DK_VENDOR_HIP
inline constexpr int kWarpSize = 64;
#else
inline constexpr int kWarpSize = 32;
#endif
#if DK_ARCH_AMD
static_assert(DK_WAVE64 == 1, "deltakit's AMD targets run 64-lane wavefronts");
#endif

// "cuda" or "hip": the prefix of implementation names.
#if DK_VENDOR_HIP
inline constexpr const char* kVendorName = "hip";
#else
inline constexpr const char* kVendorName = "cuda";
#endif

// ---- host side: errors, streams, launch attributes ----
#if DK_VENDOR_HIP
using gpu_error_t = hipError_t;
using gpu_stream_t = hipStream_t;
inline constexpr gpu_error_t gpu_success = hipSuccess;
inline gpu_error_t gpu_last_error() { return hipGetLastError(); }
inline const char* gpu_error_string(gpu_error_t e) { return hipGetErrorString(e); }
inline const char* gpu_error_name(gpu_error_t e) { return hipGetErrorName(e); }
// Lets `kernel` use more than the default 48 KB of dynamic shared memory.
template <class Kernel>
inline gpu_error_t gpu_set_max_dynamic_smem(Kernel* kernel, int bytes) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                             hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
// Blocks of `kernel` resident per compute unit at `threads` and `smem` bytes.
template <class Kernel>
inline gpu_error_t gpu_resident_blocks(Kernel* kernel, int threads, size_t smem, int* out) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(out, kernel, threads, smem);
}
#else
using gpu_error_t = cudaError_t;
using gpu_stream_t = cudaStream_t;
inline constexpr gpu_error_t gpu_success = cudaSuccess;
inline gpu_error_t gpu_last_error() { return cudaGetLastError(); }
inline const char* gpu_error_string(gpu_error_t e) { return cudaGetErrorString(e); }
inline const char* gpu_error_name(gpu_error_t e) { return cudaGetErrorName(e); }
template <class Kernel>
inline gpu_error_t gpu_set_max_dynamic_smem(Kernel* kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
template <class Kernel>
inline gpu_error_t gpu_resident_blocks(Kernel* kernel, int threads, size_t smem, int* out) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, kernel, threads, smem);
}
#endif
#if DK_VENDOR_CUDA && CUDART_VERSION >= 12010
#define DK_DRIVER_LAUNCH 1
// A driver entry point, fetched once through the runtime (no link to libcuda);
// null where the driver lacks it.
inline void* driver_entry_point(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t e = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &found);
#endif
  return e == cudaSuccess && found == cudaDriverEntryPointSuccess ? p : nullptr;
}
using driver_launch_fn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using driver_current_context_fn = CUresult (*)(CUcontext*);
using driver_context_id_fn = CUresult (*)(CUcontext, unsigned long long*);
struct driver_api {
  driver_launch_fn launch = nullptr;                    // cuLaunchKernelEx
  driver_current_context_fn current_context = nullptr;  // cuCtxGetCurrent
  driver_context_id_fn context_id = nullptr;            // cuCtxGetId (CUDA 12.0 drivers on)
};
inline const driver_api& driver() {
  static const driver_api api = [] {
    driver_api a;
    a.launch = reinterpret_cast<driver_launch_fn>(driver_entry_point("cuLaunchKernelEx"));
    a.current_context = reinterpret_cast<driver_current_context_fn>(driver_entry_point("cuCtxGetCurrent"));
    a.context_id = reinterpret_cast<driver_context_id_fn>(driver_entry_point("cuCtxGetId"));
    return a;
  }();
  return api;
}
// What a launcher remembers of one kernel on one device:
// - `function`, the kernel's function in `context` (cudaGetFuncBySymbol), for
//   launches from that context, the usual one: the fastest launch;
// - `kernel`, its context-independent handle (cudaGetKernel), which the driver
//   runs in the stream's context, for launches from any other context (0.2-0.3
//   us more per launch on the H200's host, kernels/decode/NOTES.md v16 run 10).
// `context` is claimed once (kClaiming while `function` is being set). A context
// is known by its address and its unique id (cuCtxGetId): a context created
// after the claimant was destroyed (a device reset, the engine's own contexts)
// often takes its address, and then claims anew instead of launching a function
// of a context that is gone. A failed launch clears what it used, so that the
// next launch asks again.
struct gpu_kernel_handle {
  std::atomic<void*> context{nullptr};
  std::atomic<unsigned long long> context_id{0};
  std::atomic<void*> function{nullptr};
  std::atomic<void*> kernel{nullptr};  // or kNoDriverKernel
};
inline void* const kNoDriverKernel = reinterpret_cast<void*>(uintptr_t(1));
inline void* const kClaiming = reinterpret_cast<void*>(uintptr_t(1));

struct driver_choice {
  void* handle;      // null: none (the runtime launches)
  bool is_function;  // `handle` is the claimed function, else the kernel handle
};

// The handle to launch `kernel` with from context `ctx` (unique id `id`).
inline driver_choice driver_handle(gpu_kernel_handle& h, const void* kernel, CUcontext ctx,
                                   unsigned long long id) {
  void* const owner = h.context.load(std::memory_order_acquire);
  void* expected = nullptr;
  bool claimed = false;
  if (owner == ctx) {
    if (h.context_id.load(std::memory_order_acquire) == id) {
      if (void* f = h.function.load(std::memory_order_acquire)) return {f, true};
    } else {
      expected = ctx;  // the claimant is gone and `ctx` took its address
      claimed = h.context.compare_exchange_strong(expected, kClaiming, std::memory_order_acq_rel);
    }
  } else if (!owner) {
    claimed = h.context.compare_exchange_strong(expected, kClaiming, std::memory_order_acq_rel);
  }
  if (claimed) {
    cudaFunction_t f = nullptr;
    if (cudaGetFuncBySymbol(&f, kernel) == cudaSuccess && f) {
      h.function.store(f, std::memory_order_release);
      h.context_id.store(id, std::memory_order_release);
      h.context.store(ctx, std::memory_order_release);
      return {f, true};
    }
    h.context.store(nullptr, std::memory_order_release);
  }
  void* k = h.kernel.load(std::memory_order_acquire);
  if (!k) {
    cudaKernel_t handle = nullptr;
    k = cudaGetKernel(&handle, kernel) == cudaSuccess && handle ? static_cast<void*>(handle) : kNoDriverKernel;
    h.kernel.store(k, std::memory_order_release);
  }
  return {k == kNoDriverKernel ? nullptr : k, false};
}
#else
#define DK_DRIVER_LAUNCH 0
struct gpu_kernel_handle {};  // unused: launches go through the runtime
#endif

// Launches kernel(params); `programmatic`: with programmatic stream
// serialization (the kernel may start before the previous one on the stream
// ends; it must call grid_dependency_wait() first). CUDA only: HIP has no such
// launch, and callers never ask for it there.
// CUDA: with `handle` (the kernel's for the current device, kept by the caller)
// the launch goes straight to the driver's cuLaunchKernelEx: 0.2-0.8 us less
// host time per launch than the runtime's cudaLaunchKernelEx on the H200's host
// (kernels/decode/NOTES.md v16). A failed driver launch forgets the handle it
// used and retries through the runtime, which reports the error.
template <class Params>
inline gpu_error_t gpu_launch(void (*kernel)(Params), unsigned blocks, unsigned threads, size_t smem,
                              gpu_stream_t stream, bool programmatic, const Params& params,
                              gpu_kernel_handle* handle = nullptr) {
#if DK_VENDOR_CUDA
#if DK_DRIVER_LAUNCH
  const driver_api& api = driver();
  CUcontext ctx = nullptr;
  unsigned long long ctx_id = 0;
  if (handle && api.launch && api.current_context && api.context_id && api.current_context(&ctx) == CUDA_SUCCESS &&
      ctx && api.context_id(ctx, &ctx_id) == CUDA_SUCCESS) {
    const driver_choice use = driver_handle(*handle, reinterpret_cast<const void*>(kernel), ctx, ctx_id);
    if (use.handle) {
      CUlaunchAttribute driver_attribute = {};
      driver_attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      driver_attribute.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig config = {};
      config.gridDimX = blocks, config.gridDimY = 1, config.gridDimZ = 1;
      config.blockDimX = threads, config.blockDimY = 1, config.blockDimZ = 1;
      config.sharedMemBytes = static_cast<unsigned>(smem);
      config.hStream = stream;
      config.attrs = &driver_attribute;
      config.numAttrs = programmatic ? 1 : 0;
      void* args[] = {const_cast<Params*>(&params)};
      if (api.launch(&config, static_cast<CUfunction>(use.handle), args, nullptr) == CUDA_SUCCESS) return cudaSuccess;
      // Forget the handle that failed (the next launch asks for it again); the
      // runtime launches this one and reports any error.
      void* expected = use.is_function ? static_cast<void*>(ctx) : use.handle;
      (use.is_function ? handle->context : handle->kernel)
          .compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
    }
  }
#else
  (void)handle;
#endif
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = programmatic ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, params);
#else
  (void)handle;
  if (programmatic) return hipErrorNotSupported;
  kernel<<<blocks, threads, smem, stream>>>(params);
  return gpu_last_error();
#endif
}

// ---- warp-level exchange (all lanes of the warp participate) ----
DK_DEVICE float shfl_xor(float v, int lane_mask, int width = kWarpSize) {
#if DK_VENDOR_HIP
  return __shfl_xor(v, lane_mask, width);
#else
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
#endif
}
DK_DEVICE float shfl(float v, int src_lane, int width = kWarpSize) {
#if DK_VENDOR_HIP
  return __shfl(v, src_lane, width);
#else
  return __shfl_sync(0xffffffffu, v, src_lane, width);
#endif
}
DK_DEVICE int shfl(int v, int src_lane, int width = kWarpSize) {
#if DK_VENDOR_HIP
  return __shfl(v, src_lane, width);
#else
  return __shfl_sync(0xffffffffu, v, src_lane, width);
#endif
}
// Sum over groups of `width` consecutive lanes (width a power of two <= kWarpSize).
template <int width = kWarpSize>
DK_DEVICE float group_sum(float v) {
#if DK_HAS_DPP
  return amd::group_sum_dpp<width>(v);  // gfx9: DPP row ops instead of ds_bpermute
#else
#pragma unroll
  for (int m = width / 2; m > 0; m >>= 1) v += shfl_xor(v, m, width);
  return v;
#endif
}
// A per-block constant (4 or 8 bytes) kept in vector registers: on gfx9 it
// frees scalar registers (about 100 per wave) for values that only feed
// per-thread address math; elsewhere the value itself.
template <class T>
DK_DEVICE T vector_reg(T x) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values");
#if DK_HAS_DPP
  uint32_t w[sizeof(T) / 4];
  memcpy(w, &x, sizeof(T));
  for (unsigned i = 0; i < sizeof(T) / 4; ++i) w[i] = amd::vgpr_copy(w[i]);
  memcpy(&x, w, sizeof(T));
#endif
  return x;
}
// A kernel's FIRST parameter (a by-value struct), for the body to read through:
// on AMD straight from the kernarg segment (amd.cuh says why), else the parameter.
template <class T>
DK_DEVICE const T& kernel_param(const T& first_param) {
#if DK_ARCH_AMD
  (void)first_param;
  return amd::kernarg_first<T>();
#else
  return first_param;
#endif
}
DK_DEVICE void warp_sync() {
#if DK_VENDOR_CUDA
  __syncwarp();
#endif
}
// Barrier over the whole block.
DK_DEVICE void block_sync() { __syncthreads(); }
// Stops the kernel with a device fault (for code paths that must never run).
DK_DEVICE void trap() {
#if DK_VENDOR_HIP
  __builtin_trap();
#else
  __trap();
#endif
}

// ---- programmatic dependent launch (CUDA sm_90+; no-ops elsewhere) ----
// A kernel launched with the programmatic-serialization attribute may start
// while the kernel before it on the stream still runs. wait: blocks until that
// kernel has completed and its writes are visible (returns at once after a
// normal launch). allow: lets the next such kernel launch once every block of
// this grid has called it or exited.
DK_DEVICE void grid_dependency_wait() {
#if DK_VENDOR_CUDA && DK_ARCH_CUDA >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
DK_DEVICE void allow_dependent_launch() {
#if DK_VENDOR_CUDA && DK_ARCH_CUDA >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Brings the line holding p into L2 (not L1): no effect on any result, and
// safe on memory another kernel is still writing (L2 is where writes land).
DK_DEVICE void prefetch_l2(const void* p) {
#if DK_VENDOR_CUDA
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}
// Brings the line holding p into L1 ahead of a load of it (read-only data of
// this kernel: L1 is not coherent with other kernels' writes).
DK_DEVICE void prefetch_l1(const void* p) {
#if DK_VENDOR_CUDA
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}
// A load that bypasses L1 (int32_t / int64_t), for a value read before
// grid_dependency_wait() that may be stale: nothing of it stays in L1.
template <class T>
DK_DEVICE T load_l2(const T* p) {
#if DK_VENDOR_CUDA
  return __ldcg(p);
#else
  return __builtin_nontemporal_load(p);
#endif
}

// ---- 16-byte vector memory access: one 128-bit load/store per call ----
// Our own type: HIP's uint4/float4 are not trivially copyable on ROCm 5.2.
struct alignas(16) u32x4 {
  uint32_t x, y, z, w;
};
struct alignas(16) f32x4 {
  float x, y, z, w;
};
struct alignas(8) u32x2 {
  uint32_t x, y;
};
DK_DEVICE u32x4 load16(const void* p) { return *static_cast<const u32x4*>(p); }
DK_DEVICE void store16(void* p, const u32x4& v) { *static_cast<u32x4*>(p) = v; }
// 16-byte access with a streaming hint: data touched once (evict first from
// the caches). CUDA ld/st.global.cs; AMD nontemporal (glc slc) accesses.
DK_DEVICE u32x4 load16_stream(const void* p) {
#if DK_VENDOR_CUDA
  const uint4 v = __ldcs(static_cast<const uint4*>(p));
  return u32x4{v.x, v.y, v.z, v.w};
#else
  const u32x4* q = static_cast<const u32x4*>(p);
  return u32x4{__builtin_nontemporal_load(&q->x), __builtin_nontemporal_load(&q->y),
               __builtin_nontemporal_load(&q->z), __builtin_nontemporal_load(&q->w)};
#endif
}
DK_DEVICE void store16_stream(void* p, const u32x4& v) {
#if DK_VENDOR_CUDA
  __stcs(static_cast<uint4*>(p), make_uint4(v.x, v.y, v.z, v.w));
#else
  u32x4* q = static_cast<u32x4*>(p);
  __builtin_nontemporal_store(v.x, &q->x);
  __builtin_nontemporal_store(v.y, &q->y);
  __builtin_nontemporal_store(v.z, &q->z);
  __builtin_nontemporal_store(v.w, &q->w);
#endif
}
// 8-byte access (one 64-bit load/store): four 16-bit floats.
DK_DEVICE u32x2 load8(const void* p) { return *static_cast<const u32x2*>(p); }
DK_DEVICE void store8(void* p, const u32x2& v) { *static_cast<u32x2*>(p) = v; }
DK_DEVICE f32x4 load16f(const float* p) { return *reinterpret_cast<const f32x4*>(p); }

// ---- 16-bit float storage: kernels keep bf16/fp16 as raw uint16_t bits ----
// Bit casts usable on host and device (memcpy compiles to a register move).
DK_HOST_DEVICE float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
DK_HOST_DEVICE uint32_t float_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
DK_HOST_DEVICE float bf16_bits_to_float(uint16_t bits) {
  return bits_to_float(static_cast<uint32_t>(bits) << 16);
}
// Round to nearest even; NaN stays NaN.
DK_HOST_DEVICE uint16_t float_to_bf16_bits(float f) {
  uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
DK_DEVICE float f16_bits_to_float(uint16_t bits) {
  return __half2float(__ushort_as_half(bits));
}
DK_DEVICE uint16_t float_to_f16_bits(float f) {
  return __half_as_ushort(__float2half_rn(f));
}

// Two floats -> a packed pair of 16-bit floats (lo in bits 0..15), round to
// nearest even: one cvt instruction on sm_80+, the bit recipe elsewhere.
DK_DEVICE uint32_t pack_bf16x2(float lo, float hi) {
#if DK_VENDOR_CUDA && DK_ARCH_CUDA >= 800
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u;
#else
  return uint32_t(float_to_bf16_bits(lo)) | (uint32_t(float_to_bf16_bits(hi)) << 16);
#endif
}
DK_DEVICE uint32_t pack_f16x2(float lo, float hi) {
  return uint32_t(float_to_f16_bits(lo)) | (uint32_t(float_to_f16_bits(hi)) << 16);
}

// ---- fast math with one name on both vendors ----
DK_DEVICE float fast_exp(float x) { return __expf(x); }
DK_DEVICE float fast_log(float x) { return __logf(x); }
DK_DEVICE float fast_rsqrt(float x) { return rsqrtf(x); }

}  // namespace dk
