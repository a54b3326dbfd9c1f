// The CUDA backend: devices, memory, streams, and the ops through the
// single-source kernels (kernels/launch.hpp). Every CUDA error becomes a status
// with the CUDA error text in dk_last_error(); nothing here aborts or prints.
#include <cuda_runtime.h>
#include <string.h>

#include <new>

#include "cuda_archs.hpp"
#include "dk/device_scope.hpp"
#include "dk/hal.hpp"
#include "launch.hpp"

namespace dk::cuda {
namespace {

struct device_state {
  int id;
  gpu::target target;
};

device_state* state_of(device_handle* d) { return static_cast<device_state*>(d->state); }

dk_status status_of(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation: return DK_STATUS_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice: return DK_STATUS_NO_DEVICE;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidResourceHandle: return DK_STATUS_INVALID_ARGUMENT;
    default: return DK_STATUS_DEVICE_ERROR;
  }
}

// Records a failed CUDA call and clears the runtime's (non-sticky) last error.
dk_status fail(cudaError_t e, const char* what) {
  cudaGetLastError();
  return set_error(status_of(e), "cuda: %s failed: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

// Makes `id` the calling thread's current device for one call, then restores
// whatever the engine had current.
using device_scope = dk::device_scope<cudaError_t, cudaSuccess, cudaGetDevice, cudaSetDevice>;

#define DK_CUDA_SCOPE(device)                                       \
  device_scope scope_(state_of(device)->id);                        \
  if (scope_.error() != cudaSuccess) return fail(scope_.error(), "cudaSetDevice")

dk_status device_count(int32_t* out_count) {
  int n = 0;  // cudaGetDeviceCount leaves it untouched when there is no driver
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    n = 0;
  }
  *out_count = n;
  return DK_STATUS_SUCCESS;
}

dk_status device_open(int32_t device_id, device_handle* out) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    n = 0;
  }
  if (device_id < 0 || device_id >= n)
    return set_error(DK_STATUS_NO_DEVICE, "cuda: device %d not present (%d CUDA devices)",
                     device_id, n);
  cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, device_id);
  if (e != cudaSuccess) return fail(e, "cudaGetDeviceProperties");

  const compiled_arch* code = pick_compiled_arch(prop.major, prop.minor);
  if (!code)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "cuda: device %d (%s, sm_%d%d) has no code in this build; compiled archs: %s "
                     "(rebuild with DK_CUDA_ARCHS including %d%d%s)",
                     device_id, prop.name, prop.major, prop.minor, kCompiledArchs, prop.major,
                     prop.minor, prop.major >= 9 ? "a" : "");

  dk_device_info& info = out->info;
  memset(&info, 0, sizeof info);
  info.backend = DK_BACKEND_CUDA;
  info.device_id = device_id;
  info.device.device_type = DK_DEVICE_CUDA;
  info.device.device_id = device_id;
  copy_string(info.vendor, sizeof info.vendor, "NVIDIA");
  copy_string(info.name, sizeof info.name, prop.name);
  copy_string(info.arch, sizeof info.arch, code->name);
  copy_string(info.compiled_archs, sizeof info.compiled_archs, kCompiledArchs);
  info.compute_units = prop.multiProcessorCount;
  info.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device_id) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device_id) == cudaSuccess)
    info.peak_bandwidth_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // DDR: 2 per clock
  cudaGetLastError();

  auto* st = new (std::nothrow) device_state;
  if (!st) return set_error(DK_STATUS_OUT_OF_MEMORY, "cuda: out of host memory");
  st->id = device_id;
  st->target.arch = code->number;
  st->target.compute_units = prop.multiProcessorCount;
  st->target.max_smem_per_block = static_cast<int>(prop.sharedMemPerBlockOptin);
  st->target.device = device_id;
  out->state = st;
  return DK_STATUS_SUCCESS;
}

void device_close(device_handle* device) {
  delete state_of(device);
  device->state = nullptr;
}

dk_status mem_alloc(device_handle* device, size_t bytes, void** out_ptr) {
  DK_CUDA_SCOPE(device);
  *out_ptr = nullptr;
  const cudaError_t e = cudaMalloc(out_ptr, bytes == 0 ? 1 : bytes);
  if (e != cudaSuccess) {
    *out_ptr = nullptr;
    cudaGetLastError();
    return set_error(status_of(e), "cuda: cudaMalloc of %zu bytes failed: %s (%s)", bytes,
                     cudaGetErrorString(e), cudaGetErrorName(e));
  }
  return DK_STATUS_SUCCESS;
}

dk_status mem_free(device_handle* device, void* ptr) {
  DK_CUDA_SCOPE(device);
  const cudaError_t e = cudaFree(ptr);
  return e == cudaSuccess ? DK_STATUS_SUCCESS : fail(e, "cudaFree");
}

dk_status mem_copy(device_handle* device, void* dst, const void* src, size_t bytes,
                   dk_copy_kind kind, void* stream) {
  DK_CUDA_SCOPE(device);
  cudaMemcpyKind k;
  switch (kind) {
    case DK_COPY_HOST_TO_DEVICE: k = cudaMemcpyHostToDevice; break;
    case DK_COPY_DEVICE_TO_HOST: k = cudaMemcpyDeviceToHost; break;
    case DK_COPY_DEVICE_TO_DEVICE: k = cudaMemcpyDeviceToDevice; break;
    case DK_COPY_HOST_TO_HOST: k = cudaMemcpyHostToHost; break;
    default: return set_error(DK_STATUS_INVALID_ARGUMENT, "cuda: unknown copy kind %d", int(kind));
  }
  if (bytes == 0) return DK_STATUS_SUCCESS;
  auto s = static_cast<cudaStream_t>(stream);
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, k, s);
  if (e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
  if (kind != DK_COPY_DEVICE_TO_DEVICE) {  // host memory involved: done when we return
    e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return fail(e, "cudaStreamSynchronize after a host copy");
  }
  return DK_STATUS_SUCCESS;
}

dk_status mem_set(device_handle* device, void* dst, int value, size_t bytes, void* stream) {
  DK_CUDA_SCOPE(device);
  if (bytes == 0) return DK_STATUS_SUCCESS;
  const cudaError_t e = cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? DK_STATUS_SUCCESS : fail(e, "cudaMemsetAsync");
}

dk_status stream_create(device_handle* device, void** out_stream) {
  DK_CUDA_SCOPE(device);
  cudaStream_t s = nullptr;
  const cudaError_t e = cudaStreamCreate(&s);
  if (e != cudaSuccess) return fail(e, "cudaStreamCreate");
  *out_stream = s;
  return DK_STATUS_SUCCESS;
}

dk_status stream_destroy(device_handle* device, void* stream) {
  DK_CUDA_SCOPE(device);
  if (!stream) return DK_STATUS_SUCCESS;  // the default stream is not ours to destroy
  const cudaError_t e = cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? DK_STATUS_SUCCESS : fail(e, "cudaStreamDestroy");
}

dk_status stream_sync(device_handle* device, void* stream) {
  DK_CUDA_SCOPE(device);
  const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? DK_STATUS_SUCCESS : fail(e, "cudaStreamSynchronize");
}

dk_status device_sync(device_handle* device) {
  DK_CUDA_SCOPE(device);
  const cudaError_t e = cudaDeviceSynchronize();
  return e == cudaSuccess ? DK_STATUS_SUCCESS : fail(e, "cudaDeviceSynchronize");
}

// Programmatic dependent launch needs sm_90 (griddepcontrol).
dk_status programmatic_launch_check(device_handle* device) {
  const int arch = state_of(device)->target.arch;
  if (arch >= 90) return DK_STATUS_SUCCESS;
  return set_error(DK_STATUS_UNSUPPORTED,
                   "dk_context_set_option: programmatic dependent launch needs sm_90 or newer; "
                   "this device is sm_%d",
                   arch);
}

dk_status decode_query(device_handle* device, const decode_problem& p, const char** out_name) {
  return gpu::decode_query(state_of(device)->target, p, out_name);
}

dk_status decode_run(device_handle* device, const decode_problem& p, void* stream) {
  DK_CUDA_SCOPE(device);
  return gpu::decode_launch(state_of(device)->target, p, stream);
}

dk_status prefill_query(device_handle* device, const prefill_problem& p, const char** out_name) {
  return gpu::prefill_query(state_of(device)->target, p, out_name);
}

dk_status prefill_workspace(device_handle* device, const prefill_problem& p, size_t* out_bytes) {
  return gpu::prefill_workspace_bytes(state_of(device)->target, p, out_bytes);
}

dk_status prefill_run(device_handle* device, const prefill_problem& p, void* workspace,
                      size_t workspace_bytes, void* stream) {
  DK_CUDA_SCOPE(device);
  return gpu::prefill_launch(state_of(device)->target, p, workspace, workspace_bytes, stream);
}

#undef DK_CUDA_SCOPE

}  // namespace
}  // namespace dk::cuda

extern "C++" const dk::backend_vtable dk_cuda_backend = {
    .id = DK_BACKEND_CUDA,
    .name = "cuda",
    .device_count = dk::cuda::device_count,
    .device_open = dk::cuda::device_open,
    .device_close = dk::cuda::device_close,
    .mem_alloc = dk::cuda::mem_alloc,
    .mem_free = dk::cuda::mem_free,
    .mem_copy = dk::cuda::mem_copy,
    .mem_set = dk::cuda::mem_set,
    .stream_create = dk::cuda::stream_create,
    .stream_destroy = dk::cuda::stream_destroy,
    .stream_sync = dk::cuda::stream_sync,
    .device_sync = dk::cuda::device_sync,
    .programmatic_launch_check = dk::cuda::programmatic_launch_check,
    .decode_query = dk::cuda::decode_query,
    .decode_run = dk::cuda::decode_run,
    .prefill_query = dk::cuda::prefill_query,
    .prefill_workspace = dk::cuda::prefill_workspace,
    .prefill_run = dk::cuda::prefill_run,
};
