// The CPU backend: host memory, no-op streams, and the kernels of the best ISA
// the running CPU supports (chosen once per device_open).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <new>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dk/hal.hpp"
#include "kernels.hpp"

namespace dk::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
#define DK_CPU_X86 1
#else
#define DK_CPU_X86 0
#endif

// Compiled kernel tables, best first.
const kernel_table* const kTables[] = {
#if DK_CPU_HAVE_AVX512
    &avx512::table,
#endif
#if DK_CPU_HAVE_AVX2
    &avx2::table,
#endif
    &generic::table,
};

#if DK_CPU_X86
// F16C (CPUID.1:ECX bit 29); not every compiler's __builtin_cpu_supports knows it.
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}
#endif

bool supported(const kernel_table* t) {
#if DK_CPU_X86
  __builtin_cpu_init();
#if DK_CPU_HAVE_AVX512
  if (t == &avx512::table)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
#endif
#if DK_CPU_HAVE_AVX2
  if (t == &avx2::table)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
#endif
#endif
  return t == &generic::table;
}

// The best supported table; DK_CPU_ISA=generic|avx2|avx512 picks a lower one
// (for testing every path on one machine) when the CPU supports it.
const kernel_table* select_kernels() {
  const char* forced = getenv("DK_CPU_ISA");
  if (forced && *forced)
    for (const kernel_table* t : kTables)
      if (strcmp(forced, t->isa) == 0 && supported(t)) return t;
  for (const kernel_table* t : kTables)
    if (supported(t)) return t;
  return &generic::table;
}

const kernel_table* kernels_of(const device_handle* device) {
  return device && device->state ? static_cast<const kernel_table*>(device->state) : &generic::table;
}

int max_threads() {
#if defined(_OPENMP)
  const int n = omp_get_max_threads();
  return n > 0 ? n : 1;
#else
  return 1;
#endif
}

// "model name : AMD EPYC ..." from /proc/cpuinfo, or "CPU".
void cpu_model_name(char* dst, size_t capacity) {
  copy_string(dst, capacity, "CPU");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char* colon = strchr(line, ':');
    if (!colon) continue;
    const char* s = colon + 1;
    while (*s == ' ' || *s == '\t') ++s;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) --n;
    if (n == 0) continue;
    char name[256];
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, s, n);
    name[n] = '\0';
    copy_string(dst, capacity, name);
    break;
  }
  fclose(f);
}

int64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? int64_t(pages) * int64_t(page_size) : 0;
}

// ------------------------------------------------------------ devices

dk_status device_count(int32_t* out_count) {
  *out_count = 1;
  return DK_STATUS_SUCCESS;
}

dk_status device_open(int32_t device_id, device_handle* out) {
  if (device_id != 0)
    return set_error(DK_STATUS_NO_DEVICE, "cpu: device %d does not exist (the CPU is device 0)",
                     static_cast<int>(device_id));
  const kernel_table* k = select_kernels();
  out->state = const_cast<kernel_table*>(k);
  dk_device_info& info = out->info;
  memset(&info, 0, sizeof info);
  info.backend = DK_BACKEND_CPU;
  info.device_id = 0;
  info.device.device_type = DK_DEVICE_CPU;
  info.device.device_id = 0;
#if DK_CPU_X86
  copy_string(info.vendor, sizeof info.vendor, "x86-64");
#elif defined(__aarch64__)
  copy_string(info.vendor, sizeof info.vendor, "aarch64");
#else
  copy_string(info.vendor, sizeof info.vendor, "generic");
#endif
  cpu_model_name(info.name, sizeof info.name);
  copy_string(info.arch, sizeof info.arch, k->arch);
  char archs[128] = "";
  for (const kernel_table* t : kTables) {
    if (archs[0]) strncat(archs, ",", sizeof archs - strlen(archs) - 1);
    strncat(archs, t->arch, sizeof archs - strlen(archs) - 1);
  }
  copy_string(info.compiled_archs, sizeof info.compiled_archs, archs);
  info.compute_units = max_threads();
  info.memory_bytes = host_memory_bytes();
  info.peak_bandwidth_gbps = 0.0;
  return DK_STATUS_SUCCESS;
}

void device_close(device_handle* device) { device->state = nullptr; }

// ------------------------------------------------------------ memory, streams

constexpr size_t kAlignment = 256;

dk_status mem_alloc(device_handle*, size_t bytes, void** out_ptr) {
  *out_ptr = nullptr;
  if (bytes > SIZE_MAX - kAlignment)
    return set_error(DK_STATUS_OUT_OF_MEMORY, "dk_malloc: %zu bytes is more than host memory can hold",
                     bytes);
  // aligned_alloc wants a multiple of the alignment; 0 bytes still gets a unique pointer.
  const size_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) & ~(kAlignment - 1);
  void* p = aligned_alloc(kAlignment, rounded);
  if (!p) return set_error(DK_STATUS_OUT_OF_MEMORY, "dk_malloc: could not allocate %zu bytes of host memory", bytes);
  *out_ptr = p;
  return DK_STATUS_SUCCESS;
}

dk_status mem_free(device_handle*, void* ptr) {
  free(ptr);
  return DK_STATUS_SUCCESS;
}

// Every copy kind is host memory to host memory here. One thread cannot draw the
// memory bandwidth the kernels' threads do, so a large copy between disjoint
// ranges is split over the same OpenMP threads (slices of whole cache lines);
// small or overlapping copies stay one memmove, which handles the overlap.
constexpr size_t kParallelCopyBytes = size_t(1) << 20;
constexpr size_t kMinCopySlice = size_t(512) << 10;
// Beyond the size of a last-level cache the destination cannot stay cached, and
// ordinary stores would first read every destination line: non-temporal stores
// skip that read (glibc's memcpy reached ~60% of their bandwidth on a Zen VM).
constexpr size_t kStreamCopyBytes = size_t(32) << 20;

void copy_slice(char* dst, const char* src, size_t bytes, bool stream) {
#if defined(__SSE2__)
  if (stream) {
    const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
    memcpy(dst, src, head);
    size_t i = head;
    for (; i + 64 <= bytes; i += 64)
      for (size_t j = 0; j < 64; j += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + j),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + j)));
    _mm_sfence();  // order the streaming stores before the copy is reported done
    memcpy(dst + i, src + i, bytes - i);
    return;
  }
#endif
  (void)stream;
  memcpy(dst, src, bytes);
}

dk_status mem_copy(device_handle*, void* dst, const void* src, size_t bytes, dk_copy_kind, void*) {
  if (bytes == 0 || dst == src) return DK_STATUS_SUCCESS;
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  const bool overlap = d < s + bytes && s < d + bytes;
  const int threads = int(std::min<size_t>(size_t(max_threads()), bytes / kMinCopySlice));
  if (overlap || bytes < kParallelCopyBytes || threads < 2) {
    memmove(dst, src, bytes);
    return DK_STATUS_SUCCESS;
  }
  const bool stream = bytes >= kStreamCopyBytes;
#if defined(_OPENMP)
  const size_t lines = (bytes + 63) / 64;
#pragma omp parallel num_threads(threads)
  {
    const size_t t = size_t(omp_get_thread_num()), n = size_t(omp_get_num_threads());
    const size_t begin = std::min(bytes, lines * t / n * 64), end = std::min(bytes, lines * (t + 1) / n * 64);
    copy_slice(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin, stream);
  }
#else
  copy_slice(static_cast<char*>(dst), static_cast<const char*>(src), bytes, stream);
#endif
  return DK_STATUS_SUCCESS;
}

dk_status mem_set(device_handle*, void* dst, int value, size_t bytes, void*) {
  if (bytes > 0) memset(dst, value, bytes);
  return DK_STATUS_SUCCESS;
}

// CPU work completes before each call returns: a stream is a token.
char g_stream_token;

dk_status stream_create(device_handle*, void** out_stream) {
  *out_stream = &g_stream_token;
  return DK_STATUS_SUCCESS;
}
dk_status stream_destroy(device_handle*, void*) { return DK_STATUS_SUCCESS; }
dk_status stream_sync(device_handle*, void*) { return DK_STATUS_SUCCESS; }
dk_status device_sync(device_handle*) { return DK_STATUS_SUCCESS; }

// ------------------------------------------------------------ ops

// Problems arrive validated (hal/src/validate.cpp: head counts, head dims 16..256 in
// steps of 16, B, T, N): the CPU kernels take every validated shape, so the queries
// only name the kernel and the runs refuse nothing the queries accept.

// Per-thread fp32 scratch, 64-byte aligned, freed however the run ends; empty
// when out of memory.
struct free_deleter {
  void operator()(float* p) const { free(p); }
};
using scratch_ptr = std::unique_ptr<float, free_deleter>;
scratch_ptr alloc_scratch(size_t floats_per_thread, int threads) {
  const size_t count = floats_per_thread * size_t(threads);
  if (floats_per_thread == 0 || count / size_t(threads) != floats_per_thread || count > SIZE_MAX / 8) return nullptr;
  const size_t bytes = (count * sizeof(float) + 63) & ~size_t(63);
  return scratch_ptr(static_cast<float*>(aligned_alloc(64, bytes)));
}

// Threads for `items` independent work items of `work` state-element updates in
// all: at most one per item, and none for less than ~50 us of work, since waking
// a thread costs more than that on a busy machine.
int threads_for(int64_t items, double work) {
  constexpr double kMinWorkPerThread = 256.0 * 1024.0;
  int n = max_threads();
  if (items < n) n = items > 0 ? int(items) : 1;
  const double by_work = work / kMinWorkPerThread;
  if (by_work < n) n = by_work < 1.0 ? 1 : int(by_work);
  return n;
}

dk_status decode_query(device_handle* device, const decode_problem&, const char** out_name) {
  *out_name = kernels_of(device)->decode_name;
  return DK_STATUS_SUCCESS;
}

dk_status decode_run(device_handle* device, const decode_problem& p, void*) {
  if (p.batch == 0) return DK_STATUS_SUCCESS;
  try {
    const kernel_table* k = kernels_of(device);
    const int64_t items = int64_t(p.batch) * p.hv;
    const int threads = threads_for(items, double(items) * p.tokens * p.dk * p.dv);
    const scratch_ptr scratch = alloc_scratch(k->decode_scratch_floats(p), threads);
    if (!scratch) return set_error(DK_STATUS_OUT_OF_MEMORY, "dk_decode_run: out of host memory for scratch");
    k->decode(p, threads, scratch.get());
  } catch (const std::bad_alloc&) {
    return set_error(DK_STATUS_OUT_OF_MEMORY, "dk_decode_run: out of host memory");
  } catch (...) {
    return set_error(DK_STATUS_INTERNAL, "dk_decode_run: unexpected exception in the CPU backend");
  }
  return DK_STATUS_SUCCESS;
}

dk_status prefill_query(device_handle* device, const prefill_problem&, const char** out_name) {
  *out_name = kernels_of(device)->prefill_name;
  return DK_STATUS_SUCCESS;
}

// The CPU allocates its scratch itself: no caller workspace.
dk_status prefill_workspace(device_handle*, const prefill_problem&, size_t* out_bytes) {
  *out_bytes = 0;
  return DK_STATUS_SUCCESS;
}

dk_status prefill_run(device_handle* device, const prefill_problem& p, void*, size_t, void*) {
  if (p.num_seqs == 0 || !p.cu_seqlens.data) return DK_STATUS_SUCCESS;
  try {
    const kernel_table* k = kernels_of(device);
    const int threads = threads_for(p.num_seqs * p.hv, double(p.num_tokens + p.num_seqs) * p.hv * p.dk * p.dv * 4.0);
    const scratch_ptr scratch = alloc_scratch(k->prefill_scratch_floats(p), threads);
    if (!scratch) return set_error(DK_STATUS_OUT_OF_MEMORY, "dk_prefill_run: out of host memory for scratch");
    k->prefill(p, threads, scratch.get());
  } catch (const std::bad_alloc&) {
    return set_error(DK_STATUS_OUT_OF_MEMORY, "dk_prefill_run: out of host memory");
  } catch (...) {
    return set_error(DK_STATUS_INTERNAL, "dk_prefill_run: unexpected exception in the CPU backend");
  }
  return DK_STATUS_SUCCESS;
}

}  // namespace
}  // namespace dk::cpu

const dk::backend_vtable dk_cpu_backend = {
    .id = DK_BACKEND_CPU,
    .name = "cpu",
    .device_count = dk::cpu::device_count,
    .device_open = dk::cpu::device_open,
    .device_close = dk::cpu::device_close,
    .mem_alloc = dk::cpu::mem_alloc,
    .mem_free = dk::cpu::mem_free,
    .mem_copy = dk::cpu::mem_copy,
    .mem_set = dk::cpu::mem_set,
    .stream_create = dk::cpu::stream_create,
    .stream_destroy = dk::cpu::stream_destroy,
    .stream_sync = dk::cpu::stream_sync,
    .device_sync = dk::cpu::device_sync,
    .decode_query = dk::cpu::decode_query,
    .decode_run = dk::cpu::decode_run,
    .prefill_query = dk::cpu::prefill_query,
    .prefill_workspace = dk::cpu::prefill_workspace,
    .prefill_run = dk::cpu::prefill_run,
};
