// The HIP backend (AMD GPUs): device discovery and the arch check, memory,
// streams, and the single-source kernels of kernels/ compiled as HIP for
// DK_HIP_ARCHS. Every HIP error becomes a dk_status with a message; nothing
// here aborts or prints. Plain C++ (g++) against the HIP runtime API.
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include "dk/device_scope.hpp"
#include "dk/hal.hpp"
#include "launch.hpp"

#ifndef DK_HIP_COMPILED_ARCHS
#error "DK_HIP_COMPILED_ARCHS (the comma-separated DK_HIP_ARCHS) must be defined by the build"
#endif

namespace dk::hip {
namespace {

struct device_state {
  int id;
  gpu::target target;
};

device_state* state_of(device_handle* d) { return static_cast<device_state*>(d->state); }

dk_status status_of(hipError_t e) {
  switch (e) {
    case hipErrorOutOfMemory: return DK_STATUS_OUT_OF_MEMORY;
    case hipErrorNoDevice:
    case hipErrorInvalidDevice:
    case hipErrorInsufficientDriver: return DK_STATUS_NO_DEVICE;
    case hipErrorInvalidValue:
    case hipErrorInvalidDevicePointer:
    case hipErrorInvalidResourceHandle: return DK_STATUS_INVALID_ARGUMENT;
    default: return DK_STATUS_DEVICE_ERROR;
  }
}

// Reports a failed HIP call as a status (and clears HIP's sticky last error).
dk_status fail(hipError_t e, const char* what) {
  (void)hipGetLastError();
  return set_error(status_of(e), "hip: %s failed: %s (%s, %d)", what, hipGetErrorString(e),
                   hipGetErrorName(e), static_cast<int>(e));
}

#define DK_HIP_TRY(call, what)             \
  do {                                     \
    const hipError_t dk_e_ = (call);       \
    if (dk_e_ != hipSuccess) return fail(dk_e_, what); \
  } while (0)

// HIP's current device is per host thread: every entry point that touches the
// device makes it current for the call and then restores the engine's, so
// contexts on several devices and threads coexist.
using device_scope = dk::device_scope<hipError_t, hipSuccess, hipGetDevice, hipSetDevice>;
#define DK_HIP_SCOPE(d)                            \
  device_scope scope_(state_of(d)->id);            \
  if (scope_.error() != hipSuccess) return fail(scope_.error(), "hipSetDevice")

// "gfx906" from "gfx906:sramecc+:xnack-" (the target features do not matter
// for code built without them).
void arch_name(const char* gcn_arch, char* dst, size_t capacity) {
  size_t n = strcspn(gcn_arch, ":");
  if (n >= capacity) n = capacity - 1;
  memcpy(dst, gcn_arch, n);
  dst[n] = '\0';
}

// The gfx number as an int, parsed once: major * 100 + minor * 10 + stepping,
// minor and stepping being hex digits (gfx906 -> 906, gfx90a -> 910,
// gfx1030 -> 1030). 0 when `name` is not a gfx name.
int gfx_number(const char* name, size_t len) {
  if (len < 6 || strncmp(name, "gfx", 3) != 0) return 0;
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  int major = 0;
  for (size_t i = 3; i + 2 < len; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    major = major * 10 + (name[i] - '0');
  }
  const int minor = hex(name[len - 2]), stepping = hex(name[len - 1]);
  if (major == 0 || minor < 0 || stepping < 0) return 0;
  return major * 100 + minor * 10 + stepping;
}

// Whether this build carries code objects for gfx number `arch`.
bool compiled_for(int arch) {
  const char* s = DK_HIP_COMPILED_ARCHS;
  while (*s) {
    const size_t n = strcspn(s, ",");
    if (gfx_number(s, n) == arch && arch != 0) return true;
    s += n;
    if (*s == ',') ++s;
  }
  return false;
}

// ------------------------------------------------------------ devices

dk_status device_count(int32_t* out_count) {
  *out_count = 0;
  int n = 0;  // hipGetDeviceCount leaves it untouched when it fails
  const hipError_t e = hipGetDeviceCount(&n);
  if (e == hipErrorNoDevice || e == hipErrorInsufficientDriver || e == hipErrorNotInitialized) {
    (void)hipGetLastError();
    return DK_STATUS_SUCCESS;  // no usable AMD GPU / driver here: zero devices
  }
  if (e != hipSuccess) return fail(e, "hipGetDeviceCount");
  *out_count = n > 0 ? n : 0;
  return DK_STATUS_SUCCESS;
}

dk_status device_open(int32_t device_id, device_handle* out) {
  out->state = nullptr;
  hipDeviceProp_t prop;
  memset(&prop, 0, sizeof prop);
  DK_HIP_TRY(hipGetDeviceProperties(&prop, device_id), "hipGetDeviceProperties");
  char arch[32];
  arch_name(prop.gcnArchName, arch, sizeof arch);
  const int gfx = gfx_number(arch, strlen(arch));
  if (!compiled_for(gfx))
    return set_error(DK_STATUS_UNSUPPORTED,
                     "hip: device %d (%s) is %s, but this build carries kernels only for %s; "
                     "rebuild with -DDK_HIP_ARCHS=\"%s\" (a ;-list)",
                     static_cast<int>(device_id), prop.name, arch[0] ? arch : "an unknown arch",
                     DK_HIP_COMPILED_ARCHS, arch);
  if (prop.warpSize != 64)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "hip: device %d (%s) runs %d-lane waves; deltakit's AMD kernels need 64",
                     static_cast<int>(device_id), prop.name, prop.warpSize);

  device_state* st = new (std::nothrow) device_state{};
  if (!st) return set_error(DK_STATUS_OUT_OF_MEMORY, "hip: out of host memory");
  st->id = device_id;
  st->target.arch = gfx;
  st->target.compute_units = prop.multiProcessorCount;
  st->target.max_smem_per_block = static_cast<int>(prop.sharedMemPerBlock);
  st->target.device = device_id;
  out->state = st;

  dk_device_info& info = out->info;
  memset(&info, 0, sizeof info);
  info.backend = DK_BACKEND_HIP;
  info.device_id = device_id;
  info.device.device_type = DK_DEVICE_ROCM;
  info.device.device_id = device_id;
  copy_string(info.vendor, sizeof info.vendor, "AMD");
  copy_string(info.name, sizeof info.name, prop.name);
  copy_string(info.arch, sizeof info.arch, arch);
  copy_string(info.compiled_archs, sizeof info.compiled_archs, DK_HIP_COMPILED_ARCHS);
  info.compute_units = prop.multiProcessorCount;
  info.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  // memoryClockRate is in kHz; HBM/GDDR transfer twice per clock.
  info.peak_bandwidth_gbps =
      2.0 * prop.memoryClockRate * 1e3 * (prop.memoryBusWidth / 8.0) / 1e9;
  return DK_STATUS_SUCCESS;
}

void device_close(device_handle* device) {
  delete state_of(device);
  device->state = nullptr;
}

// ------------------------------------------------------------ memory, streams

dk_status mem_alloc(device_handle* d, size_t bytes, void** out_ptr) {
  *out_ptr = nullptr;
  DK_HIP_SCOPE(d);
  void* p = nullptr;
  const hipError_t e = hipMalloc(&p, bytes == 0 ? 256 : bytes);  // 0 bytes: still a unique pointer
  if (e != hipSuccess) {
    (void)hipGetLastError();
    return set_error(status_of(e) == DK_STATUS_OUT_OF_MEMORY ? DK_STATUS_OUT_OF_MEMORY
                                                              : DK_STATUS_DEVICE_ERROR,
                     "dk_malloc: hipMalloc(%zu bytes) failed: %s (%s)", bytes,
                     hipGetErrorString(e), hipGetErrorName(e));
  }
  *out_ptr = p;
  return DK_STATUS_SUCCESS;
}

dk_status mem_free(device_handle* d, void* ptr) {
  DK_HIP_SCOPE(d);
  DK_HIP_TRY(hipFree(ptr), "dk_free: hipFree");
  return DK_STATUS_SUCCESS;
}

dk_status mem_copy(device_handle* d, void* dst, const void* src, size_t bytes, dk_copy_kind kind,
                   void* stream) {
  DK_HIP_SCOPE(d);
  hipMemcpyKind k = hipMemcpyDeviceToDevice;
  switch (kind) {
    case DK_COPY_HOST_TO_DEVICE: k = hipMemcpyHostToDevice; break;
    case DK_COPY_DEVICE_TO_HOST: k = hipMemcpyDeviceToHost; break;
    case DK_COPY_DEVICE_TO_DEVICE: k = hipMemcpyDeviceToDevice; break;
    case DK_COPY_HOST_TO_HOST: k = hipMemcpyHostToHost; break;
  }
  hipStream_t s = static_cast<hipStream_t>(stream);
  DK_HIP_TRY(hipMemcpyAsync(dst, src, bytes, k, s), "dk_memcpy: hipMemcpyAsync");
  // Copies that touch host memory are synchronous for the host (deltakit.h).
  if (kind != DK_COPY_DEVICE_TO_DEVICE)
    DK_HIP_TRY(hipStreamSynchronize(s), "dk_memcpy: hipStreamSynchronize");
  return DK_STATUS_SUCCESS;
}

dk_status mem_set(device_handle* d, void* dst, int value, size_t bytes, void* stream) {
  DK_HIP_SCOPE(d);
  DK_HIP_TRY(hipMemsetAsync(dst, value, bytes, static_cast<hipStream_t>(stream)),
             "dk_memset: hipMemsetAsync");
  return DK_STATUS_SUCCESS;
}

dk_status stream_create(device_handle* d, void** out_stream) {
  *out_stream = nullptr;
  DK_HIP_SCOPE(d);
  hipStream_t s = nullptr;
  DK_HIP_TRY(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "dk_stream_create");
  *out_stream = s;
  return DK_STATUS_SUCCESS;
}

dk_status stream_destroy(device_handle* d, void* stream) {
  DK_HIP_SCOPE(d);
  DK_HIP_TRY(hipStreamDestroy(static_cast<hipStream_t>(stream)), "dk_stream_destroy");
  return DK_STATUS_SUCCESS;
}

dk_status stream_sync(device_handle* d, void* stream) {
  DK_HIP_SCOPE(d);
  DK_HIP_TRY(hipStreamSynchronize(static_cast<hipStream_t>(stream)), "dk_stream_synchronize");
  return DK_STATUS_SUCCESS;
}

dk_status device_sync(device_handle* d) {
  DK_HIP_SCOPE(d);
  DK_HIP_TRY(hipDeviceSynchronize(), "dk_context_synchronize");
  return DK_STATUS_SUCCESS;
}

// ------------------------------------------------------------ ops

dk_status decode_query(device_handle* d, const decode_problem& p, const char** out_name) {
  return gpu::decode_query(state_of(d)->target, p, out_name);
}

dk_status decode_run(device_handle* d, const decode_problem& p, void* stream) {
  DK_HIP_SCOPE(d);
  return gpu::decode_launch(state_of(d)->target, p, stream);
}

dk_status prefill_query(device_handle* d, const prefill_problem& p, const char** out_name) {
  return gpu::prefill_query(state_of(d)->target, p, out_name);
}

dk_status prefill_workspace(device_handle* d, const prefill_problem& p, size_t* out_bytes) {
  return gpu::prefill_workspace_bytes(state_of(d)->target, p, out_bytes);
}

dk_status prefill_run(device_handle* d, const prefill_problem& p, void* workspace,
                      size_t workspace_bytes, void* stream) {
  DK_HIP_SCOPE(d);
  return gpu::prefill_launch(state_of(d)->target, p, workspace, workspace_bytes, stream);
}

#undef DK_HIP_TRY
#undef DK_HIP_SCOPE

}  // namespace
}  // namespace dk::hip

const dk::backend_vtable dk_hip_backend = {
    .id = DK_BACKEND_HIP,
    .name = "hip",
    .device_count = dk::hip::device_count,
    .device_open = dk::hip::device_open,
    .device_close = dk::hip::device_close,
    .mem_alloc = dk::hip::mem_alloc,
    .mem_free = dk::hip::mem_free,
    .mem_copy = dk::hip::mem_copy,
    .mem_set = dk::hip::mem_set,
    .stream_create = dk::hip::stream_create,
    .stream_destroy = dk::hip::stream_destroy,
    .stream_sync = dk::hip::stream_sync,
    .device_sync = dk::hip::device_sync,
    .decode_query = dk::hip::decode_query,
    .decode_run = dk::hip::decode_run,
    .prefill_query = dk::hip::prefill_query,
    .prefill_workspace = dk::hip::prefill_workspace,
    .prefill_run = dk::hip::prefill_run,
};
