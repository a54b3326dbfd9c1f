// Prints, for a sweep of decode problem shapes and every NVIDIA family this
// build has tables for, the kernel the launch code picks and the shared memory
// per block it asks, through the same host query the backend calls
// (dk::gpu::decode_query). Needs no GPU: diff the output of two builds to see
// which shapes a change of the tuning tables or of the dispatch moves.
// --check prints instead one line per family and exits 1 when a shape gets no
// kernel within the family's shared memory per block, or gets the general
// kernel where a specialised one should run: K = 64 or 128 with bf16
// activations at any T, or any activations at T = 1 (a table slot whose
// instance is not built holds the general kernel, which would run such calls
// correctly but slowly). ctest cuda/dispatch_fits, which thus covers the archs
// no machine here runs.
//
//   dk_cuda_dispatch_dump [--check] > dispatch.txt
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <initializer_list>

#include "dk/hal.hpp"
#include "dk/shape_query.hpp"
#include "launch.hpp"

namespace {

constexpr int kNever = 1 << 24;

struct family {
  int arch, compute_units, smem_limit;  // the datasheet part the tables are written for
};
// A100-SXM4, H200, B200, RTX 5090.
constexpr family kFamilies[] = {{80, 108, 163 * 1024}, {90, 132, 227 * 1024}, {100, 148, 227 * 1024},
                                {120, 170, 99 * 1024}};

using dk::shape_query::kDtype;
using dk::shape_query::kGate;
using dk::shape_query::set_operand;

// A stand-in address: the query reads which operands are present, never their data.
const void* const kPresent = reinterpret_cast<const void*>(uintptr_t(256));

// Whether `name` (vendor:arch:decode_...) is the general kernel of the k128 or k64 class.
bool is_general(const char* name) {
  const char* const colon = strrchr(name, ':');
  const char* const base = colon ? colon + 1 : name;
  for (const char* g : {"decode_kv128", "decode_kv64", "decode_kv128_vlast", "decode_kv64_vlast"})
    if (strcmp(base, g) == 0) return true;
  return false;
}

// The smallest per-block shared-memory limit the query accepts, or kNever.
int smem_needed(const family& f, const dk::decode_problem& p, const char** name) {
  dk::gpu::target t{f.arch, f.compute_units, kNever};
  if (dk::gpu::decode_query(t, p, name) != DK_STATUS_SUCCESS) return kNever;
  int lo = -1, hi = kNever;  // query(lo) fails or lo < 0; query(hi) succeeds
  while (hi - lo > 1) {
    t.max_smem_per_block = lo + (hi - lo) / 2;
    (dk::gpu::decode_query(t, p, nullptr) == DK_STATUS_SUCCESS ? hi : lo) = t.max_smem_per_block;
  }
  return hi;
}

}  // namespace

int main(int argc, char** argv) {
  const bool check = argc > 1 && strcmp(argv[1], "--check") == 0;
  bool ok = true;
  const int batches[] = {1, 2, 8, 9, 24, 32, 40, 128, 512};
  const int tokens[] = {1, 2, 4, 5, 8, 13, 16};
  const int keys[] = {64, 96, 128};
  const int values[] = {48, 128};
  for (const family& f : kFamilies) {
    int shapes = 0, over = 0, most = 0, general = 0;
    for (int layout = 0; layout < 2; ++layout)
      for (int st = 0; st < 3; ++st)
        for (int gate = 0; gate < 3; ++gate)
          for (int K : keys)
            for (int V : values)
              for (int T : tokens)
                for (int B : batches)
                  for (int act = 0; act < 2; ++act)
                    for (int slots = 0; slots < 2; ++slots) {
                      dk::decode_problem p;
                      memset(&p, 0, sizeof p);
                      p.r.gate = dk::gate_kind(gate);
                      p.r.layout = dk::state_layout(layout);
                      p.r.scale = 1.f;
                      p.batch = B, p.tokens = T, p.hq = 16, p.hv = 32, p.dk = K, p.dv = V;
                      p.pool_slots = 4096;
                      set_operand(p.pool, dk::dtype(st));
                      const dk::dtype io = act ? dk::dtype::f32 : dk::dtype::bf16;
                      for (dk::operand* o : {&p.q, &p.k, &p.v, &p.out}) set_operand(*o, io);
                      set_operand(p.g, dk::dtype::f32);
                      set_operand(p.beta, dk::dtype::f32);
                      if (slots) {
                        set_operand(p.token_indices, dk::dtype::i32);
                        p.token_indices.data = kPresent;
                      }
                      char shape[128];
                      snprintf(shape, sizeof shape, "sm%d B=%d T=%d K=%d V=%d gate=%s state=%s %s io=%s%s", f.arch,
                               B, T, K, V, kGate[gate], kDtype[st], layout ? "v_last" : "k_last",
                               act ? "f32" : "bf16", slots ? " token_slots" : "");
                      const char* name = nullptr;
                      const int smem = smem_needed(f, p, &name);
                      ++shapes;
                      if (smem > f.smem_limit) {
                        ++over;
                        if (check)
                          printf("%s: %s\n", shape,
                                 smem == kNever ? "refused" : "needs more shared memory than the part has");
                      } else {
                        if (smem > most) most = smem;
                        if ((K == 64 || K == 128) && (act == 0 || T == 1) && is_general(name)) {
                          ++general;
                          if (check) printf("%s: the general kernel %s\n", shape, name);
                        }
                      }
                      if (!check)
                        printf("%s: %s smem %d\n", shape, smem == kNever ? "refused" : name,
                               smem == kNever ? -1 : smem);
                    }
    if (check)
      printf("sm%d (%d SMs, %d bytes of shared memory per block): %d shapes, %d without a kernel that fits, "
             "%d on the general kernel where a specialised one should run; the most a fitting one asks: %d bytes\n",
             f.arch, f.compute_units, f.smem_limit, shapes, over, general, most);
    ok = ok && over == 0 && general == 0;
  }
  return ok ? 0 : 1;
}
