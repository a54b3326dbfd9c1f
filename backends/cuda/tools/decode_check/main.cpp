// dk_cuda_decode_check: the CUDA decode through the public C API, checked
// against the fp64 reference (reference/), then timed on the standard decode
// workloads of SPEC §7.
//
//   dk_cuda_decode_check [--check] [--bench] [--small] [--only WORKLOAD]
//     --check  correctness matrix (default: both --check and --bench)
//     --bench  timings: median of event-timed calls, state slots rotated
//              through a pool larger than L2
//     --small  a short subset of the matrix (for compute-sanitizer)
//     --only   one timing workload, e.g. qwen3next/b128/t1/f32/klast/scalar
//              (for a profiler)
//
// Exit status: 0 all good, 1 a check failed, 77 no CUDA device.
//
// Events come from the driver API loaded with dlopen: the process keeps the one
// CUDA runtime linked into deltakit, and the tool starts without a driver.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "decode_check.hpp"

using namespace dkc;

int main(int argc, char** argv) {
  bool check = false, bench = false, small = false;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--check")) check = true;
    else if (!std::strcmp(argv[i], "--bench")) bench = true;
    else if (!std::strcmp(argv[i], "--small")) small = check = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i], bench = true;
    else {
      std::fprintf(stderr, "usage: %s [--check] [--bench] [--small] [--only WORKLOAD]\n", argv[0]);
      return 2;
    }
  }
  if (!check && !bench) check = bench = true;

  int32_t n = 0;
  if (dk_device_count(DK_BACKEND_CUDA, &n) != DK_STATUS_SUCCESS || n == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  if (!ok(dk_context_create(DK_BACKEND_CUDA, 0, &g_ctx), "dk_context_create")) return 1;
  dk_device_info info;
  dk_context_device_info(g_ctx, &info);
  std::printf("device: %s | %s | arch %s | compiled %s | %d SMs | %.1f GiB | peak %.0f GB/s\n",
              info.vendor, info.name, info.arch, info.compiled_archs, info.compute_units,
              info.memory_bytes / 1073741824.0, info.peak_bandwidth_gbps);
  if (!ok(dk_stream_create(g_ctx, &g_stream), "dk_stream_create")) return 1;
  // Every decode here (checks and timings) launches as the context's default does.
  int64_t programmatic = 0;
  dk_context_get_option(g_ctx, DK_OPTION_PROGRAMMATIC_LAUNCH, &programmatic);
  std::printf("decode launches: %s (the context's default)\n",
              programmatic ? "programmatic (DK_OPTION_PROGRAMMATIC_LAUNCH on)" : "ordinary");
  g_check_kernels = std::string(info.arch) == "sm_90a" && info.compute_units == 132;
  std::printf("kernel choice per case: %s\n", g_check_kernels ? "checked (132-SM sm_90a table)"
                                                              : "not checked (no table for this device)");

  int failed = 0, total = 0;
  if (check) {
    std::printf("== decode correctness vs fp64 reference\n");
    uint64_t seed = 1;
    for (const case_desc& c : check_cases(small)) {
      ++total;
      if (!run_case(c, seed++)) ++failed;
    }
    std::printf("== %d/%d cases passed\n", total - failed, total);
  }
  CUcontext primary = nullptr;
  if (bench && !cu.load()) {
    std::printf("no CUDA driver library: timings skipped\n");
  } else if (bench && cu.cuInit(0) == CUDA_SUCCESS && cu.cuDevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS &&
      cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS) {
    const double copy = measure_copy_gbps();
    if (cu.cuMemAlloc(&g_flush, kFlushBytes) != CUDA_SUCCESS) g_flush = 0;
    std::printf("== decode timings (bf16 q/k/v/out, raw gates, beta logit, l2norm; median of 60 "
                "event-timed calls; time: eager, slots rotate through a >= 1 GiB pool; graph: "
                "CUDA-graph replays, %zu MiB L2 flush before each)\n", kFlushBytes >> 20);
    std::printf("device-to-device copy: %.0f GB/s (read + write)\n", copy);
    std::printf("| workload  |    B |  T | S    | pool  | gate     | implementation                    |   time us |  MB moved |     GB/s |  %%copy | host us |  graph us | g%%copy |\n");
    std::printf("|-----------|------|----|------|-------|----------|-----------------------------------|-----------|----------|----------|--------|---------|-----------|--------|\n");
    const bench_case cases[] = {
        {"floor", 1, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, true},
        {"contest", 1, 1, 4, 8, 128, 128, elem::f32},
        {"contest", 1, 1, 4, 8, 128, 128, elem::bf16},
        {"qwen3next", 1, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 8, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 32, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 128, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 512, 1, 16, 32, 128, 128, elem::f32},
        {"qwen3next", 1, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 8, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 32, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 128, 1, 16, 32, 128, 128, elem::bf16},
        {"qwen3next", 512, 1, 16, 32, 128, 128, elem::bf16},
        {"mtp", 32, 4, 16, 32, 128, 128, elem::f32},
        {"mtp", 32, 4, 16, 32, 128, 128, elem::bf16},
        {"mtp16", 32, 16, 16, 32, 128, 128, elem::f32},
        {"vlast", 32, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"vlast", 128, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"vlast", 512, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"vlast", 32, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_V_LAST},
        {"vlast", 128, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_V_LAST},
        {"vlast", 512, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_V_LAST},
        {"vlast-mtp", 32, 4, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST},
        {"kda", 8, 1, 32, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_PER_KEY},
        {"kda", 32, 1, 32, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_PER_KEY},
        {"kda", 128, 1, 32, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_PER_KEY},
        {"kda", 512, 1, 32, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_PER_KEY},
        {"kda", 128, 1, 32, 32, 128, 128, elem::f32, DK_STATE_V_LAST, DK_GATE_PER_KEY},
        {"kda", 128, 1, 32, 32, 128, 128, elem::bf16, DK_STATE_K_LAST, DK_GATE_PER_KEY},
        {"kv64", 128, 1, 16, 32, 64, 64, elem::f32},
        // dk_bench's slot order: scattered over the pool
        {"scatter", 32, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 128, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 512, 1, 16, 32, 128, 128, elem::f32, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 512, 1, 16, 32, 128, 128, elem::f32, DK_STATE_V_LAST, DK_GATE_SCALAR, false, true},
        {"scatter", 512, 1, 16, 32, 128, 128, elem::bf16, DK_STATE_K_LAST, DK_GATE_SCALAR, false, true},
    };
    if (!only) run_reference(copy);
    for (const bench_case& c : cases) {
      if (only && label_of(c) != only) continue;
      if (!run_bench(c, copy)) ++failed;
    }
  }
  if (g_flush) cu.cuMemFree(g_flush);
  if (primary) cu.cuDevicePrimaryCtxRelease(0);
  dk_stream_destroy(g_ctx, g_stream);
  dk_context_destroy(g_ctx);
  return failed ? 1 : 0;
}
