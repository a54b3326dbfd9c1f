// dk_cuda_decode_check's reference rows: plain kernels (PTX, JIT-compiled) over
// the bytes a decode moves, timed as the decode is.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "decode_check.hpp"

namespace dkc {
namespace {

// ---- reference timings: what the graph-replay timer costs by itself ----

// The 4 KB tile of a one-warp block in the reference kernels: 8 loads of 16 bytes
// per lane from %rd9 + 512 i into %r10..%r41, or the 8 stores back.
std::string tile_access(bool store, int rows = 8) {
  std::string out;
  for (int i = 0; i < rows; ++i) {
    const std::string regs = "{%r" + std::to_string(10 + 4 * i) + ", %r" + std::to_string(11 + 4 * i) +
                             ", %r" + std::to_string(12 + 4 * i) + ", %r" + std::to_string(13 + 4 * i) + "}";
    const std::string at = "[%rd9+" + std::to_string(512 * i) + "]";
    out += store ? "  st.global.v4.u32 " + at + ", " + regs + ";\n" : "  ld.global.v4.u32 " + regs + ", " + at + ";\n";
  }
  return out;
}

// The reference kernels over 2 MB sequences reached through a slot table
// (below). `programmatic`: each block first waits for the previous kernel
// (griddepcontrol, sm_90+) and lets the next one launch, as the decode
// kernels do under programmatic launch.
std::string programmatic_wait(bool programmatic) {
  return programmatic ? "  griddepcontrol.wait;\n  griddepcontrol.launch_dependents;\n" : "";
}
// Tiles updated in place: blocks of `warps` warps, each warp `rows`
// consecutive 512-byte rows (one 16-byte vector per lane per row), so a block
// covers warps * rows * 512 contiguous bytes; 1 x 8 is the 4 KB tile of the t1
// decode's one-warp blocks.
std::string tile_slots_ptx(const std::string& name, bool programmatic, int rows = 8, int warps = 1) {
  const int block_bytes = rows * warps * 512;
  int shift = 0;  // log2(blocks per 2 MB sequence)
  while (block_bytes << shift < 2097152) ++shift;
  return ".visible .entry " + name + R"((.param .u64 base, .param .u64 slots) {
  .reg .u64 %rd<12>; .reg .u32 %r<48>;
  ld.param.u64 %rd1, [base]; ld.param.u64 %rd2, [slots];
)" + programmatic_wait(programmatic) +
         "  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %tid.x;\n"
         "  shr.u32 %r4, %r2, " + std::to_string(shift) + ";\n"
         "  and.b32 %r5, %r2, " + std::to_string((1 << shift) - 1) + ";\n" +
         R"(  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd6, %rd2, %rd5;
  ld.global.u32 %r6, [%rd6];
  mul.wide.u32 %rd7, %r6, 2097152;
)" + "  mul.wide.u32 %rd3, %r5, " + std::to_string(block_bytes) + ";\n" +
         R"(  add.u64 %rd4, %rd1, %rd7;
  add.u64 %rd4, %rd4, %rd3;
  shr.u32 %r7, %r3, 5;
  and.b32 %r8, %r3, 31;
)" + "  mul.wide.u32 %rd10, %r7, " + std::to_string(rows * 512) + ";\n" +
         R"(  add.u64 %rd4, %rd4, %rd10;
  mul.wide.u32 %rd8, %r8, 16;
  add.u64 %rd9, %rd4, %rd8;
)" + tile_access(false, rows) +
         "  add.u32 %r10, %r10, 1;\n" + tile_access(true, rows) + "  ret;\n}\n";
}
// The plain 16-byte stream (one vector per thread) updated in place.
std::string stream_slots_ptx(const std::string& name, bool programmatic) {
  return ".visible .entry " + name + R"((.param .u64 base, .param .u64 slots, .param .u64 n16) {
  .reg .u64 %rd<12>; .reg .u32 %r<10>; .reg .pred %p;
  ld.param.u64 %rd1, [base]; ld.param.u64 %rd2, [slots]; ld.param.u64 %rd3, [n16];
)" + programmatic_wait(programmatic) +
         R"(  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;
  mad.wide.u32 %rd4, %r1, %r2, 0; cvt.u64.u32 %rd5, %r3; add.u64 %rd4, %rd4, %rd5;
  setp.ge.u64 %p, %rd4, %rd3; @%p ret;
  shr.u64 %rd5, %rd4, 17;
  and.b64 %rd6, %rd4, 131071;
  shl.b64 %rd5, %rd5, 2; add.u64 %rd7, %rd2, %rd5;
  ld.global.u32 %r8, [%rd7];
  mul.wide.u32 %rd8, %r8, 2097152;
  shl.b64 %rd6, %rd6, 4;
  add.u64 %rd9, %rd1, %rd8; add.u64 %rd9, %rd9, %rd6;
  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd9];
  add.u32 %r4, %r4, 1;
  st.global.v4.u32 [%rd9], {%r4, %r5, %r6, %r7};
  ret;
}
)";
}

// Kernels JIT-compiled from PTX (no CUDA runtime here): an empty one; one that
// loads a word and stores it (one dependent trip to memory, like a padded
// decode); one that loads an index, then a word at that index, then stores
// (two dependent trips: the least any T = 1 decode does); and a plain
// streaming kernel, 16 bytes per thread, run out of place (a kernel copy) and
// in place (read, modify, write back: the access pattern of a decode's state);
// and one-warp blocks that each update a 4 KB tile in place like the t1 decode
// (8 loads, then 8 stores), optionally after a dependent index load and/or a
// dependent spin of N steps between the loads' arrival and the stores; and
// the same tiles, or the plain stream, reached through a slot index per 2 MB
// sequence (in order, or shuffled as dk_bench's slots are).
const std::string kRefPtx = std::string(R"(
.version 7.0
.target sm_80
.address_size 64
.visible .entry dk_empty() { ret; }
.visible .entry dk_chain1(.param .u64 idx, .param .u64 out) {
  .reg .u64 %rd<4>; .reg .u32 %r<2>;
  ld.param.u64 %rd1, [idx]; ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
.visible .entry dk_chain2(.param .u64 idx, .param .u64 base, .param .u64 out) {
  .reg .u64 %rd<8>; .reg .u32 %r<3>;
  ld.param.u64 %rd1, [idx]; ld.param.u64 %rd2, [base]; ld.param.u64 %rd3, [out];
  ld.global.u32 %r1, [%rd1];
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd2, %rd4;
  ld.global.u32 %r2, [%rd5];
  st.global.u32 [%rd3], %r2;
  ret;
}
.visible .entry dk_tile(.param .u64 base, .param .u64 idx, .param .u32 spin) {
  .reg .u64 %rd<12>; .reg .u32 %r<48>; .reg .pred %p;
  ld.param.u64 %rd1, [base]; ld.param.u64 %rd2, [idx]; ld.param.u32 %r1, [spin];
  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd3, %r2, 4096;
  add.u64 %rd4, %rd1, %rd3;
  setp.eq.u64 %p, %rd2, 0;
  @%p bra NOIDX;
  shr.u32 %r4, %r2, 9;
  and.b32 %r4, %r4, 255;
  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd6, %rd2, %rd5;
  ld.global.u32 %r5, [%rd6];
  cvt.u64.u32 %rd7, %r5;
  add.u64 %rd4, %rd4, %rd7;
NOIDX:
  mul.wide.u32 %rd8, %r3, 16;
  add.u64 %rd9, %rd4, %rd8;
)")
    + tile_access(false)
    + R"(  mov.u32 %r7, %r10;
  mov.u32 %r6, 0;
LOOP:
  setp.ge.u32 %p, %r6, %r1;
  @%p bra STORE;
  mad.lo.u32 %r7, %r7, 3, 1;
  add.u32 %r6, %r6, 1;
  bra LOOP;
STORE:
  add.u32 %r10, %r10, %r7;
)"
    + tile_access(true)
    + R"(  ret;
}
)"
    + tile_slots_ptx("dk_tile_slots", false) + stream_slots_ptx("dk_stream_slots", false) + R"(.visible .entry dk_stream(.param .u64 src, .param .u64 dst, .param .u64 n16) {
  .reg .u64 %rd<8>; .reg .u32 %r<8>; .reg .pred %p;
  ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u64 %rd3, [n16];
  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;
  mad.wide.u32 %rd4, %r1, %r2, 0; cvt.u64.u32 %rd5, %r3; add.u64 %rd4, %rd4, %rd5;
  setp.ge.u64 %p, %rd4, %rd3; @%p ret;
  shl.b64 %rd4, %rd4, 4; add.u64 %rd6, %rd1, %rd4; add.u64 %rd7, %rd2, %rd4;
  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd6];
  add.u32 %r4, %r4, 1;
  st.global.v4.u32 [%rd7], {%r4, %r5, %r6, %r7};
  ret;
}
)";

// The slot kernels under programmatic launch (PTX 7.8 for griddepcontrol;
// loaded only on sm_90 and newer).
const std::string kRefPtxProgrammatic = ".version 7.8\n.target sm_90\n.address_size 64\n" +
                                        tile_slots_ptx("dk_tile_slots_pdl", true) +
                                        tile_slots_ptx("dk_tile2x4_slots_pdl", true, 4, 2) +
                                        tile_slots_ptx("dk_tile4x2_slots_pdl", true, 2, 4) +
                                        tile_slots_ptx("dk_tile8x1_slots_pdl", true, 1, 8) +
                                        stream_slots_ptx("dk_stream_slots_pdl", true);

}  // namespace

// Median us of `n` replays of `exec` after `warm` untimed ones, each after the
// L2 flush when `flush`; destroys `exec`.
double replay_median_us(CUgraphExec exec, bool flush, int n, int warm) {
  CUevent e0, e1;
  cu.cuEventCreate(&e0, 0);
  cu.cuEventCreate(&e1, 0);
  std::vector<float> ms;
  for (int i = 0; i < n + warm; ++i) {
    if (flush) cu.cuMemsetD8Async(g_flush, static_cast<unsigned char>(i), kFlushBytes, CUstream(g_stream));
    cu.cuEventRecord(e0, CUstream(g_stream));
    cu.cuGraphLaunch(exec, CUstream(g_stream));
    cu.cuEventRecord(e1, CUstream(g_stream));
    cu.cuEventSynchronize(e1);
    float t = 0;
    cu.cuEventElapsedTime(&t, e0, e1);
    if (i >= warm) ms.push_back(t);
  }
  cu.cuEventDestroy(e0);
  cu.cuEventDestroy(e1);
  cu.cuGraphExecDestroy(exec);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e3;
}

namespace {

// dk_bench's "in graph" timer for a reference kernel: one graph of `calls`
// launches (enqueue_call(i) launches call i, on its own copy of the bytes, the
// copies spanning more than the flush so that each call finds its bytes cold),
// replayed back to back without a flush; per-call us, 0 when capture fails.
template <class EnqueueCall>
double chain_median_us(int calls, EnqueueCall&& enqueue_call, int n = 20, int warm = 3) {
  const CUgraphExec exec = capture_graph([&] {
    bool queued = true;
    for (int i = 0; i < calls && queued; ++i) queued = enqueue_call(i);
    return queued;
  });
  return exec ? replay_median_us(exec, false, n, warm) / calls : 0;
}

void print_ref_row(const char* what, int B, double mb, double g_us, double copy_gbps,
                   const char* timer = "(graph, L2 flushed)") {
  const double gbps = g_us > 0 ? mb * 1e6 / (g_us * 1e-6) / 1e9 : 0.0;
  std::printf("| %-9s | %4d |  1 | f32  | klast | %-8s | %-33s | %9s | %8.1f | %8.1f | %5s  | %6s | %9.2f | %5.1f%% |\n",
              what, B, "ref", timer, "-", mb, gbps, "-", "-", g_us,
              copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0);
}

// Slot tables for the reference tile kernel over B slots (see run_reference).
std::vector<int32_t> slot_order(const std::string& name, int B) {
  std::vector<int32_t> order(static_cast<size_t>(B));
  std::iota(order.begin(), order.end(), 0);
  if (name == "ref-tile-scatter") {
    std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  } else if (name == "ref-tile-scatter8") {
    std::mt19937_64 rng(7);
    for (size_t i = 0; i < order.size(); i += 8)
      std::shuffle(order.begin() + i, order.begin() + std::min(order.size(), i + 8), rng);
  } else if (name == "ref-tile-reverse") {
    std::reverse(order.begin(), order.end());
  } else if (name == "ref-tile-stride8" || name == "ref-tile-stride64") {
    // In order, but consecutive sequences `stride` slots (16 or 128 MB) apart:
    // passes over slots 0, s, 2s, ..., then 1, 1 + s, ... (when s divides B; else in order).
    const int stride = name == "ref-tile-stride8" ? 8 : 64;
    if (B % stride == 0)
      for (int i = 0; i < B; ++i) order[size_t(i)] = (i % (B / stride)) * stride + i / (B / stride);
  }
  return order;
}
bool upload_slots(CUdeviceptr slots, const std::vector<int32_t>& order) {
  return ok(dk_memcpy(g_ctx, reinterpret_cast<void*>(slots), order.data(), order.size() * 4,
                      DK_COPY_HOST_TO_DEVICE, g_stream), "slot upload") &&
         ok(dk_stream_synchronize(g_ctx, g_stream), "slot upload");
}

}  // namespace

// The reference rows: launch floor, one and two dependent memory trips, a
// device copy of the bytes a Qwen3-Next fp32 decode of batch B moves, the
// kernels above over those bytes, and (ref-*-chain) the same kernels under
// dk_bench's in-graph timer: what plain kernels over the same bytes reach there.
void run_reference(double copy_gbps) {
  CUmodule mod = nullptr;
  CUfunction f_empty = nullptr, f_chain1 = nullptr, f_chain2 = nullptr, f_stream = nullptr,
             f_tile = nullptr, f_tile_slots = nullptr, f_stream_slots = nullptr;
  if (cu.cuModuleLoadData(&mod, kRefPtx.c_str()) != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_empty, mod, "dk_empty") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_chain1, mod, "dk_chain1") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_chain2, mod, "dk_chain2") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_stream, mod, "dk_stream") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile, mod, "dk_tile") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_slots, mod, "dk_tile_slots") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_stream_slots, mod, "dk_stream_slots") != CUDA_SUCCESS) {
    std::printf("  (reference kernels: PTX JIT failed)\n");
    if (mod) cu.cuModuleUnload(mod);
    return;
  }
  // The programmatic variants: sm_90 and newer only (the module does not load
  // before), with CUDA 12's driver and headers (cuLaunchKernelEx).
  CUmodule mod_pdl = nullptr;
  // The 4 KB blocks split over 2, 4 and 8 warps (4, 2 and 1 rows each).
  CUfunction f_tile_pdl = nullptr, f_stream_pdl = nullptr, f_tile_warps_pdl[3] = {};
#if CUDA_VERSION >= 12000
  if (!cu.cuLaunchKernelEx || cu.cuModuleLoadData(&mod_pdl, kRefPtxProgrammatic.c_str()) != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_pdl, mod_pdl, "dk_tile_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_warps_pdl[0], mod_pdl, "dk_tile2x4_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_warps_pdl[1], mod_pdl, "dk_tile4x2_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_tile_warps_pdl[2], mod_pdl, "dk_tile8x1_slots_pdl") != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f_stream_pdl, mod_pdl, "dk_stream_slots_pdl") != CUDA_SUCCESS) {
    std::printf("  (programmatic reference rows: not on this device or driver)\n");
    f_tile_pdl = f_stream_pdl = nullptr;
  }
  auto launch_programmatic = [&](CUfunction f, unsigned blocks, unsigned threads, void** args) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = blocks, cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = threads, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = CUstream(g_stream);
    cfg.attrs = &attr, cfg.numAttrs = 1;
    return cu.cuLaunchKernelEx(&cfg, f, args, nullptr) == CUDA_SUCCESS;
  };
#else
  std::printf("  (programmatic reference rows: built without CUDA 12 headers)\n");
  auto launch_programmatic = [](CUfunction, unsigned, unsigned, void**) { return false; };
#endif
  const size_t slot_bytes = size_t(32) * 128 * 128 * 4;  // Qwen3-Next fp32 state of one sequence
  const size_t max_bytes = 512 * slot_bytes;
  CUdeviceptr src = 0, dst = 0, words = 0;
  if (cu.cuMemAlloc(&src, max_bytes) != CUDA_SUCCESS || cu.cuMemAlloc(&dst, max_bytes) != CUDA_SUCCESS ||
      cu.cuMemAlloc(&words, 4096) != CUDA_SUCCESS) {
    std::printf("  (reference rows: allocation failed)\n");
  } else {
    cu.cuMemsetD8Async(words, 0, 4096, CUstream(g_stream));
    cu.cuMemsetD8Async(src, 1, max_bytes, CUstream(g_stream));
    CUdeviceptr idx = words, out = words + 1024, base = src;
    void* a0[] = {nullptr};
    void* a1[] = {&idx, &out};
    void* a2[] = {&idx, &base, &out};
    auto launch = [&](CUfunction f, void** args) {
      return [=]() {
        return cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, CUstream(g_stream), args, nullptr) == CUDA_SUCCESS;
      };
    };
    print_ref_row("ref-empty", 1, 0.0, graph_median_us(launch(f_empty, a0)), copy_gbps);
    print_ref_row("ref-trip1", 1, 0.0, graph_median_us(launch(f_chain1, a1)), copy_gbps);
    print_ref_row("ref-trip2", 1, 0.0, graph_median_us(launch(f_chain2, a2)), copy_gbps);
    for (int B : {1, 8, 32, 128, 512}) {
      const size_t n = size_t(B) * slot_bytes;
      const double us = graph_median_us([&] {
        return cu.cuMemcpyDtoDAsync(dst, src, n, CUstream(g_stream)) == CUDA_SUCCESS;
      });
      print_ref_row("ref-copy", B, 2.0 * n / 1e6, us, copy_gbps);
    }
    for (int B : {32, 128, 512}) {
      unsigned long long n16 = size_t(B) * slot_bytes / 16;
      const unsigned blocks = unsigned((n16 + 255) / 256);
      for (bool in_place : {false, true}) {
        CUdeviceptr to = in_place ? src : dst;
        void* args[] = {&base, &to, &n16};
        const double us = graph_median_us([&] {
          return cu.cuLaunchKernel(f_stream, blocks, 1, 1, 256, 1, 1, 0, CUstream(g_stream), args, nullptr) ==
                 CUDA_SUCCESS;
        });
        print_ref_row(in_place ? "ref-rmw" : "ref-kcopy", B, 2.0 * n16 * 16 / 1e6, us, copy_gbps);
      }
      // words[0..255] stay zero (the index is taken mod 256): it adds nothing, but its
      // load is a dependent trip.
      // ref-tile-25: 8 KB of (unused) shared memory per block caps it at 25 blocks
      // per SM, the t1 decode's occupancy (80 registers).
      for (auto [name, with_index, spin, smem] :
           {std::tuple{"ref-tile", false, 0u, 0u}, std::tuple{"ref-tile-idx", true, 0u, 0u},
            std::tuple{"ref-tile-s64", false, 64u, 0u}, std::tuple{"ref-tile-s256", false, 256u, 0u},
            std::tuple{"ref-tile-25", false, 0u, 8192u}}) {
        CUdeviceptr index = with_index ? words : 0;
        unsigned steps = spin;
        void* args[] = {&base, &index, &steps};
        const unsigned tiles = unsigned(size_t(B) * slot_bytes / 4096);
        const double us = graph_median_us([&] {
          return cu.cuLaunchKernel(f_tile, tiles, 1, 1, 32, 1, 1, smem, CUstream(g_stream), args, nullptr) ==
                 CUDA_SUCCESS;
        });
        print_ref_row(name, B, 2.0 * double(tiles) * 4096 / 1e6, us, copy_gbps);
      }
      // The same tiles through a slot table: in order, shuffled as dk_bench's slots,
      // shuffled only within runs of 8 consecutive slots (about the slots a wave
      // covers), in descending order, and in order but 8 or 64 slots apart:
      // which property of shuffled slots costs.
      for (const char* name : {"ref-tile-slots", "ref-tile-scatter", "ref-tile-scatter8", "ref-tile-reverse",
                               "ref-tile-stride8", "ref-tile-stride64"}) {
        const std::vector<int32_t> order = slot_order(name, B);
        CUdeviceptr slots = words + 2048;  // bytes 2048..4095 of `words`
        if (!upload_slots(slots, order)) continue;
        void* args[] = {&base, &slots};
        const unsigned tiles = unsigned(size_t(B) * slot_bytes / 4096);
        const double us = graph_median_us([&] {
          return cu.cuLaunchKernel(f_tile_slots, tiles, 1, 1, 32, 1, 1, 0, CUstream(g_stream), args,
                                   nullptr) == CUDA_SUCCESS;
        });
        print_ref_row(name, B, 2.0 * double(tiles) * 4096 / 1e6, us, copy_gbps);
      }
    }
    // The in-graph ceilings of dk_bench's "in graph" rows: the same chain of calls
    // on cold copies, each call one reference kernel over B's state bytes in
    // place (one-warp 4 KB tiles like the t1 decode, or the plain 16-byte stream).
    for (int B : {8, 32, 128}) {
      const size_t bytes = size_t(B) * slot_bytes;
      const int calls = std::max<int>(2, int((kFlushBytes + bytes - 1) / bytes));
      CUdeviceptr chain = 0;
      if (cu.cuMemAlloc(&chain, bytes * size_t(calls)) != CUDA_SUCCESS) {
        std::printf("  (chain reference rows, B=%d: allocation failed)\n", B);
        continue;
      }
      cu.cuMemsetD8Async(chain, 1, bytes * size_t(calls), CUstream(g_stream));
      char timer[40];
      std::snprintf(timer, sizeof timer, "(graph of %d calls)", calls);
      CUdeviceptr no_index = 0;
      unsigned no_spin = 0;
      const unsigned tiles = unsigned(bytes / 4096);
      const double tile_us = chain_median_us(calls, [&](int i) {
        CUdeviceptr at = chain + size_t(i) * bytes;
        void* args[] = {&at, &no_index, &no_spin};
        return cu.cuLaunchKernel(f_tile, tiles, 1, 1, 32, 1, 1, 0, CUstream(g_stream), args, nullptr) ==
               CUDA_SUCCESS;
      });
      print_ref_row("ref-tile-chain", B, 2.0 * double(bytes) / 1e6, tile_us, copy_gbps, timer);
      unsigned long long n16 = bytes / 16;
      const double rmw_us = chain_median_us(calls, [&](int i) {
        CUdeviceptr at = chain + size_t(i) * bytes;
        void* args[] = {&at, &at, &n16};
        return cu.cuLaunchKernel(f_stream, unsigned((n16 + 255) / 256), 1, 1, 256, 1, 1, 0, CUstream(g_stream),
                                 args, nullptr) == CUDA_SUCCESS;
      });
      print_ref_row("ref-rmw-chain", B, 2.0 * double(bytes) / 1e6, rmw_us, copy_gbps, timer);
      // The tile chain through dk_bench-like shuffled slots (one permutation for every call).
      CUdeviceptr slots = words + 2048;
      if (upload_slots(slots, slot_order("ref-tile-scatter", B))) {
        // The slot kernels take (base, slots) and the stream's also n16: the
        // tile kernels ignore the extra argument.
        auto slots_chain = [&](CUfunction f, unsigned blocks, unsigned threads) {
          return chain_median_us(calls, [&](int i) {
            CUdeviceptr at = chain + size_t(i) * bytes;
            void* args[] = {&at, &slots, &n16};
            return cu.cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, CUstream(g_stream), args, nullptr) ==
                   CUDA_SUCCESS;
          });
        };
        const unsigned stream_blocks = unsigned((n16 + 255) / 256);
        print_ref_row("ref-tile-scatter-chain", B, 2.0 * double(bytes) / 1e6, slots_chain(f_tile_slots, tiles, 32),
                      copy_gbps, timer);
        // The plain 16-byte stream (256-thread blocks) through the same slots.
        print_ref_row("ref-rmw-scatter-chain", B, 2.0 * double(bytes) / 1e6,
                      slots_chain(f_stream_slots, stream_blocks, 256), copy_gbps, timer);
        // The same two under programmatic launch (dk_bench's "PDL" column): what
        // plain kernels over these bytes reach where the decode's PDL rows are timed.
        auto pdl_chain = [&](CUfunction f, unsigned blocks, unsigned threads) {
          return chain_median_us(calls, [&](int i) {
            CUdeviceptr at = chain + size_t(i) * bytes;
            void* args[] = {&at, &slots, &n16};
            return launch_programmatic(f, blocks, threads, args);
          });
        };
        if (f_tile_pdl) {
          print_ref_row("ref-tile-scatter-chain-pdl", B, 2.0 * double(bytes) / 1e6,
                        pdl_chain(f_tile_pdl, tiles, 32), copy_gbps, timer);
          print_ref_row("ref-rmw-scatter-chain-pdl", B, 2.0 * double(bytes) / 1e6,
                        pdl_chain(f_stream_pdl, stream_blocks, 256), copy_gbps, timer);
          // The same 4 KB blocks over 2, 4 and 8 warps (one-warp blocks of less
          // than 4 KB are held back by the rate at which blocks launch).
          for (int r = 0; r < 3; ++r) {
            const int warps = 2 << r;
            const std::string name = "ref-tile" + std::to_string(warps) + "w-scatter-chain-pdl";
            print_ref_row(name.c_str(), B, 2.0 * double(bytes) / 1e6,
                          pdl_chain(f_tile_warps_pdl[r], tiles, 32 * unsigned(warps)), copy_gbps, timer);
          }
        }
        // The tiles through slots in order, and (where it loads) under programmatic launch.
        if (upload_slots(slots, slot_order("ref-tile-slots", B))) {
          print_ref_row("ref-tile-slots-chain", B, 2.0 * double(bytes) / 1e6, slots_chain(f_tile_slots, tiles, 32),
                        copy_gbps, timer);
          if (f_tile_pdl)
            print_ref_row("ref-tile-slots-chain-pdl", B, 2.0 * double(bytes) / 1e6,
                          pdl_chain(f_tile_pdl, tiles, 32), copy_gbps, timer);
        }
      }
      cu.cuStreamSynchronize(CUstream(g_stream));
      cu.cuMemFree(chain);
    }
  }
  cu.cuStreamSynchronize(CUstream(g_stream));
  if (words) cu.cuMemFree(words);
  if (dst) cu.cuMemFree(dst);
  if (src) cu.cuMemFree(src);
  cu.cuModuleUnload(mod);
  if (mod_pdl) cu.cuModuleUnload(mod_pdl);
}

}  // namespace dkc
