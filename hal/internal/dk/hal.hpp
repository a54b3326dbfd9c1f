// The interface a backend implements: a small vtable of plain functions, one
// static instance per backend, registered in hal/src/registry.cpp.
// Backends report failures with dk::set_error() and a status; they never print.
#pragma once
#include <stddef.h>
#include "deltakit/deltakit.h"
#include "dk/problem.hpp"

namespace dk {

// One opened device; what `state` points to belongs to the backend.
struct device_handle {
  void* state;
  dk_device_info info;
};

struct backend_vtable {
  dk_backend id;
  const char* name;
  // Devices usable now; 0 (and DK_STATUS_SUCCESS) when none.
  dk_status (*device_count)(int32_t* out_count);
  // Checks the device (arch against compiled archs) and fills out->info.
  dk_status (*device_open)(int32_t device_id, device_handle* out);
  void (*device_close)(device_handle* device);

  dk_status (*mem_alloc)(device_handle* device, size_t bytes, void** out_ptr);
  dk_status (*mem_free)(device_handle* device, void* ptr);
  dk_status (*mem_copy)(device_handle* device, void* dst, const void* src, size_t bytes,
                        dk_copy_kind kind, void* stream);
  dk_status (*mem_set)(device_handle* device, void* dst, int value, size_t bytes, void* stream);
  dk_status (*stream_create)(device_handle* device, void** out_stream);
  dk_status (*stream_destroy)(device_handle* device, void* stream);
  dk_status (*stream_sync)(device_handle* device, void* stream);
  dk_status (*device_sync)(device_handle* device);
  // Whether the device can launch decode with programmatic dependent launch
  // (SUCCESS), else UNSUPPORTED + set_error(). NULL: it cannot.
  dk_status (*programmatic_launch_check)(device_handle* device);

  // Problems arrive validated (shapes, dtypes, strides). A query answers
  // SUCCESS + a static implementation name, or UNSUPPORTED + set_error().
  // dk_decode_run calls only decode_run (B > 0), which must refuse what
  // decode_query refuses, with the same status and message. Likewise
  // dk_prefill_workspace_size and dk_prefill_run call prefill_workspace
  // (then prefill_run), not prefill_query: it must refuse what prefill_query does.
  dk_status (*decode_query)(device_handle* device, const decode_problem& p, const char** out_name);
  dk_status (*decode_run)(device_handle* device, const decode_problem& p, void* stream);
  dk_status (*prefill_query)(device_handle* device, const prefill_problem& p, const char** out_name);
  dk_status (*prefill_workspace)(device_handle* device, const prefill_problem& p, size_t* out_bytes);
  dk_status (*prefill_run)(device_handle* device, const prefill_problem& p, void* workspace,
                           size_t workspace_bytes, void* stream);
};

// Sets the calling thread's dk_last_error() text (printf-style) and returns `status`.
dk_status set_error(dk_status status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Copies `text` into a fixed char array, always NUL-terminated.
void copy_string(char* dst, size_t capacity, const char* text);

}  // namespace dk

// Each backend defines its vtable under this name, compiled in when DK_WITH_<NAME> is set.
extern "C++" const dk::backend_vtable dk_cpu_backend;
extern "C++" const dk::backend_vtable dk_cuda_backend;
extern "C++" const dk::backend_vtable dk_hip_backend;
