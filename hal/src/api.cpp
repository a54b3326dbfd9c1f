// The public C API: argument checks, then a call through the backend vtable.
// Nothing here throws across the C boundary, prints or aborts.
#include <atomic>
#include <cstdint>
#include <new>

#include "deltakit/deltakit.h"
#include "dk/hal.hpp"
#include "error.hpp"
#include "registry.hpp"
#include "validate.hpp"
#include "validate_memo.hpp"

struct dk_context {
  const dk::backend_vtable* backend;
  dk::device_handle device;
  // DK_OPTION_PROGRAMMATIC_LAUNCH; dk_context_create sets it where the device takes it.
  std::atomic<bool> programmatic_launch{false};
};

namespace {

dk_status null_arg(const char* fn, const char* arg) {
  return dk::set_error(DK_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
}

// The status to return after a backend call that succeeded: clears any text a
// backend may have left.
dk_status ok() {
  dk::clear_error();
  return DK_STATUS_SUCCESS;
}

}  // namespace

#define DK_REQUIRE(ptr, fn) \
  do {                      \
    if (!(ptr)) return null_arg(fn, #ptr); \
  } while (0)

extern "C" {

DK_API const char* dk_version_string(void) { return "0.1.0"; }

DK_API const char* dk_backend_name(dk_backend backend) {
  switch (backend) {
    case DK_BACKEND_CPU: return "cpu";
    case DK_BACKEND_CUDA: return "cuda";
    case DK_BACKEND_HIP: return "hip";
  }
  return "unknown";
}

DK_API dk_status dk_backends_compiled(dk_backend* out_backends, int32_t capacity,
                                      int32_t* out_count) {
  dk::clear_error();
  DK_REQUIRE(out_count, "dk_backends_compiled");
  if (capacity < 0)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT, "dk_backends_compiled: capacity is negative");
  if (capacity > 0 && !out_backends) return null_arg("dk_backends_compiled", "out_backends");
  int32_t n = 0;
  for (const dk::backend_vtable* const* b = dk::compiled_backends(); *b; ++b, ++n)
    if (n < capacity) out_backends[n] = (*b)->id;
  *out_count = n;
  return DK_STATUS_SUCCESS;
}

DK_API dk_status dk_device_count(dk_backend backend, int32_t* out_count) {
  dk::clear_error();
  DK_REQUIRE(out_count, "dk_device_count");
  const dk::backend_vtable* be = dk::find_backend(backend);
  if (!be)
    return dk::set_error(DK_STATUS_UNSUPPORTED,
                         "dk_device_count: backend %d (%s) is not compiled into this build",
                         static_cast<int>(backend), dk_backend_name(backend));
  int32_t count = 0;
  dk_status s = be->device_count(&count);
  if (s != DK_STATUS_SUCCESS) return s;
  *out_count = count;
  return ok();
}

DK_API dk_status dk_context_create(dk_backend backend, int32_t device_id,
                                   dk_context** out_context) {
  dk::clear_error();
  DK_REQUIRE(out_context, "dk_context_create");
  *out_context = nullptr;
  const dk::backend_vtable* be = dk::find_backend(backend);
  if (!be)
    return dk::set_error(DK_STATUS_UNSUPPORTED,
                         "dk_context_create: backend %d (%s) is not compiled into this build",
                         static_cast<int>(backend), dk_backend_name(backend));
  if (device_id < 0)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT, "dk_context_create: device_id %d is negative",
                         static_cast<int>(device_id));
  int32_t count = 0;
  dk_status s = be->device_count(&count);
  if (s != DK_STATUS_SUCCESS) return s;
  if (count == 0)
    return dk::set_error(DK_STATUS_NO_DEVICE, "dk_context_create: no %s device is present",
                         be->name);
  if (device_id >= count)
    return dk::set_error(DK_STATUS_NO_DEVICE,
                         "dk_context_create: device_id %d but only %d %s device(s) present",
                         static_cast<int>(device_id), static_cast<int>(count), be->name);
  dk_context* ctx = new (std::nothrow) dk_context{};
  if (!ctx)
    return dk::set_error(DK_STATUS_OUT_OF_MEMORY, "dk_context_create: out of host memory");
  ctx->backend = be;
  s = be->device_open(device_id, &ctx->device);
  if (s != DK_STATUS_SUCCESS) {
    delete ctx;
    return s;
  }
  // Programmatic launch is on by default wherever the device takes it: results are
  // bit for bit those of a normal launch, and it saves launch time on every call
  // (the check's refusal text is cleared by ok() below).
  const auto takes_programmatic = be->programmatic_launch_check;
  ctx->programmatic_launch.store(takes_programmatic && takes_programmatic(&ctx->device) == DK_STATUS_SUCCESS,
                                 std::memory_order_relaxed);
  *out_context = ctx;
  return ok();
}

DK_API dk_status dk_context_create_best(dk_context** out_context) {
  dk::clear_error();
  DK_REQUIRE(out_context, "dk_context_create_best");
  *out_context = nullptr;
  for (const dk::backend_vtable* const* b = dk::compiled_backends(); *b; ++b) {
    int32_t count = 0;
    if ((*b)->device_count(&count) != DK_STATUS_SUCCESS || count == 0) continue;
    if (dk_context_create((*b)->id, 0, out_context) == DK_STATUS_SUCCESS) return ok();
  }
  return dk::set_error(DK_STATUS_NO_DEVICE,
                       "dk_context_create_best: no compiled backend found a usable device");
}

DK_API dk_status dk_context_destroy(dk_context* context) {
  dk::clear_error();
  if (!context) return DK_STATUS_SUCCESS;  // like free(NULL)
  context->backend->device_close(&context->device);
  delete context;
  return DK_STATUS_SUCCESS;
}

DK_API dk_status dk_context_device_info(const dk_context* context, dk_device_info* out_info) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_context_device_info");
  DK_REQUIRE(out_info, "dk_context_device_info");
  *out_info = context->device.info;
  return DK_STATUS_SUCCESS;
}

// ---- memory and streams ----

DK_API dk_status dk_malloc(dk_context* context, size_t bytes, void** out_ptr) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_malloc");
  DK_REQUIRE(out_ptr, "dk_malloc");
  *out_ptr = nullptr;
  dk_status s = context->backend->mem_alloc(&context->device, bytes, out_ptr);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_free(dk_context* context, void* ptr) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_free");
  if (!ptr) return DK_STATUS_SUCCESS;
  dk_status s = context->backend->mem_free(&context->device, ptr);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_memcpy(dk_context* context, void* dst, const void* src, size_t bytes,
                           dk_copy_kind kind, void* stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_memcpy");
  if (kind < DK_COPY_HOST_TO_DEVICE || kind > DK_COPY_HOST_TO_HOST)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT, "dk_memcpy: kind = %d is not a dk_copy_kind",
                         static_cast<int>(kind));
  if (bytes == 0) return DK_STATUS_SUCCESS;
  DK_REQUIRE(dst, "dk_memcpy");
  DK_REQUIRE(src, "dk_memcpy");
  dk_status s = context->backend->mem_copy(&context->device, dst, src, bytes, kind, stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_memset(dk_context* context, void* dst, int value, size_t bytes, void* stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_memset");
  if (bytes == 0) return DK_STATUS_SUCCESS;
  DK_REQUIRE(dst, "dk_memset");
  dk_status s = context->backend->mem_set(&context->device, dst, value, bytes, stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_stream_create(dk_context* context, void** out_stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_stream_create");
  DK_REQUIRE(out_stream, "dk_stream_create");
  *out_stream = nullptr;
  dk_status s = context->backend->stream_create(&context->device, out_stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_stream_destroy(dk_context* context, void* stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_stream_destroy");
  if (!stream) return DK_STATUS_SUCCESS;
  dk_status s = context->backend->stream_destroy(&context->device, stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_stream_synchronize(dk_context* context, void* stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_stream_synchronize");
  dk_status s = context->backend->stream_sync(&context->device, stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_context_synchronize(dk_context* context) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_context_synchronize");
  dk_status s = context->backend->device_sync(&context->device);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

// ---- options ----

DK_API dk_status dk_context_set_option(dk_context* context, int32_t option, int64_t value) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_context_set_option");
  if (option != DK_OPTION_PROGRAMMATIC_LAUNCH)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT, "dk_context_set_option: unknown option %d",
                         static_cast<int>(option));
  if (value != 0 && value != 1)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT,
                         "dk_context_set_option: DK_OPTION_PROGRAMMATIC_LAUNCH takes 0 or 1, not %lld",
                         static_cast<long long>(value));
  if (value == 1) {
    const auto check = context->backend->programmatic_launch_check;
    if (!check)
      return dk::set_error(DK_STATUS_UNSUPPORTED,
                           "dk_context_set_option: the %s backend has no programmatic dependent "
                           "launch",
                           context->backend->name);
    if (const dk_status s = check(&context->device); s != DK_STATUS_SUCCESS) return s;
  }
  context->programmatic_launch.store(value == 1, std::memory_order_relaxed);
  return ok();
}

DK_API dk_status dk_context_get_option(const dk_context* context, int32_t option,
                                       int64_t* out_value) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_context_get_option");
  DK_REQUIRE(out_value, "dk_context_get_option");
  if (option != DK_OPTION_PROGRAMMATIC_LAUNCH)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT, "dk_context_get_option: unknown option %d",
                         static_cast<int>(option));
  *out_value = context->programmatic_launch.load(std::memory_order_relaxed) ? 1 : 0;
  return DK_STATUS_SUCCESS;
}

// ---- ops ----

DK_API dk_status dk_decode_query(dk_context* context, const dk_config* config,
                                 const dk_decode_args* args, const char** out_impl_name) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_decode_query");
  DK_REQUIRE(out_impl_name, "dk_decode_query");
  *out_impl_name = nullptr;
  dk::decode_problem p;
  dk_status s = dk::validate_decode_memo(context->device.info.device, config, args, false, &p);
  if (s != DK_STATUS_SUCCESS) return s;
  s = context->backend->decode_query(&context->device, p, out_impl_name);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_decode_run(dk_context* context, const dk_config* config,
                               const dk_decode_args* args, void* stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_decode_run");
  dk::decode_problem p;
  dk_status s = dk::validate_decode_memo(context->device.info.device, config, args, true, &p);
  if (s != DK_STATUS_SUCCESS) return s;
  p.programmatic_launch = context->programmatic_launch.load(std::memory_order_relaxed);
  if (p.batch == 0) {  // nothing to run, but an unsupported problem is still reported
    const char* name = nullptr;
    s = context->backend->decode_query(&context->device, p, &name);
    return s == DK_STATUS_SUCCESS ? ok() : s;
  }
  // The backend's run makes the same checks as its query (one kernel choice per call).
  s = context->backend->decode_run(&context->device, p, stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_prefill_query(dk_context* context, const dk_config* config,
                                  const dk_prefill_args* args, const char** out_impl_name) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_prefill_query");
  DK_REQUIRE(out_impl_name, "dk_prefill_query");
  *out_impl_name = nullptr;
  dk::prefill_problem p;
  dk_status s = dk::validate_prefill(context->device.info.device, config, args, false, &p);
  if (s != DK_STATUS_SUCCESS) return s;
  s = context->backend->prefill_query(&context->device, p, out_impl_name);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_prefill_workspace_size(dk_context* context, const dk_config* config,
                                           const dk_prefill_args* args, size_t* out_bytes) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_prefill_workspace_size");
  DK_REQUIRE(out_bytes, "dk_prefill_workspace_size");
  *out_bytes = 0;
  dk::prefill_problem p;
  dk_status s = dk::validate_prefill(context->device.info.device, config, args, false, &p);
  if (s != DK_STATUS_SUCCESS) return s;
  // prefill_workspace plans the call as prefill_query does: same checks, same errors.
  s = context->backend->prefill_workspace(&context->device, p, out_bytes);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

DK_API dk_status dk_prefill_run(dk_context* context, const dk_config* config,
                                const dk_prefill_args* args, void* workspace,
                                size_t workspace_bytes, void* stream) {
  dk::clear_error();
  DK_REQUIRE(context, "dk_prefill_run");
  dk::prefill_problem p;
  dk_status s = dk::validate_prefill(context->device.info.device, config, args, true, &p);
  if (s != DK_STATUS_SUCCESS) return s;
  size_t needed = 0;  // (prefill_workspace also refuses what the backend cannot run)
  s = context->backend->prefill_workspace(&context->device, p, &needed);
  if (s != DK_STATUS_SUCCESS) return s;
  if (workspace_bytes < needed)
    return dk::set_error(DK_STATUS_INSUFFICIENT_WORKSPACE,
                         "dk_prefill_run: workspace_bytes = %zu but this problem needs %zu "
                         "(dk_prefill_workspace_size)",
                         workspace_bytes, needed);
  if (needed > 0 && !workspace) return null_arg("dk_prefill_run", "workspace");
  if (workspace && reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    return dk::set_error(DK_STATUS_INVALID_ARGUMENT,
                         "dk_prefill_run: workspace is not aligned to 256 bytes");
  s = context->backend->prefill_run(&context->device, p, workspace, workspace_bytes, stream);
  return s == DK_STATUS_SUCCESS ? ok() : s;
}

}  // extern "C"
