// The dynamic-LDS half of the gfx906 resource report (scripts/hip-resources runs it).
// The kernels take their shared memory as `extern __shared__`, sized per launch, so the
// code object's static LDS is 0 and says nothing. This asks the launch code itself
// (dk::gpu::*_query, the same host code the HIP backend calls) for every problem shape
// SPEC allows, finding by bisection on the target's LDS limit how many bytes each one
// needs, and prints the worst case per op. With --check it exits 1 when some shape needs
// more than the 64 KB a gfx906 workgroup can have. Needs no GPU.
#include <stdio.h>
#include <string.h>

#include <initializer_list>

#include "dk/hal.hpp"
#include "dk/shape_query.hpp"
#include "launch.hpp"

namespace {

constexpr int kLdsLimit = 64 * 1024;  // gfx906: 64 KB of LDS per workgroup (and per CU)
constexpr int kCompute = 60;          // MI50 CUs (the launch shape depends on it)
constexpr int kNever = 1 << 24;

// Bytes of LDS the launch of `p` needs: the smallest limit its query accepts.
// kNever when it is refused whatever the limit (i.e. for another reason).
template <class Problem, class Query>
int lds_needed(const Problem& p, Query query) {
  dk::gpu::target t{906, kCompute, kNever};
  if (query(t, p) != DK_STATUS_SUCCESS) return kNever;
  int lo = 0, hi = kNever;  // query(lo) fails or lo == 0; query(hi) succeeds
  while (hi - lo > 1) {
    t.max_smem_per_block = lo + (hi - lo) / 2;
    (query(t, p) == DK_STATUS_SUCCESS ? hi : lo) = t.max_smem_per_block;
  }
  return hi;
}

struct worst {
  int bytes = -1, shapes = 0, refused = 0, over = 0;
  char what[160] = "";
  void add(int b, const char* desc) {
    ++shapes;
    if (b == kNever) { ++refused; return; }
    if (b > kLdsLimit) ++over;
    if (b >= bytes) {  // ties: keep the last, i.e. the largest dims
      bytes = b;
      snprintf(what, sizeof what, "%s", desc);
    }
  }
};

using dk::shape_query::kDtype;
using dk::shape_query::kGate;
using dk::shape_query::set_operand;

worst decode_budget() {
  worst w;
  char desc[160];
  for (int layout = 0; layout < 2; ++layout)
    for (int st = 0; st < 3; ++st)
      for (int gate = 0; gate < 3; ++gate)
        for (int K = 16; K <= 256; K += 16)
          for (int V = 16; V <= 256; V += 16)
            for (int T = 1; T <= 16; ++T) {
              dk::decode_problem p;
              memset(&p, 0, sizeof p);
              p.r.gate = dk::gate_kind(gate);
              p.r.layout = dk::state_layout(layout);
              p.r.scale = 1.f;
              // A large batch: the launch then uses its widest V tile (the most LDS).
              p.batch = 4096, p.tokens = T, p.hq = 8, p.hv = 32, p.dk = K, p.dv = V;
              p.pool_slots = 4096;
              set_operand(p.pool, dk::dtype(st));
              set_operand(p.q, dk::dtype::bf16);
              set_operand(p.k, dk::dtype::bf16);
              set_operand(p.v, dk::dtype::bf16);
              set_operand(p.out, dk::dtype::bf16);
              set_operand(p.g, dk::dtype::f32);
              set_operand(p.beta, dk::dtype::f32);
              snprintf(desc, sizeof desc, "T=%d K=%d V=%d gate=%s state=%s %s", T, K, V,
                       kGate[gate], kDtype[st], layout ? "v_last" : "k_last");
              w.add(lds_needed(p, [](const dk::gpu::target& t, const dk::decode_problem& q) {
                      return dk::gpu::decode_query(t, q, nullptr);
                    }),
                    desc);
            }
  return w;
}

worst prefill_budget() {
  worst w;
  char desc[160];
  for (int io = 0; io < 3; ++io)
    for (int st = 0; st < 2; ++st)
      for (int layout = 0; layout < 2; ++layout)
        for (int gate = 0; gate < 3; ++gate)
          for (int K = 16; K <= 256; K += 16)
            for (int V = 16; V <= 256; V += 16) {
              dk::prefill_problem p;
              memset(&p, 0, sizeof p);
              p.r.gate = dk::gate_kind(gate);
              p.r.layout = dk::state_layout(layout);
              p.r.scale = 1.f;
              p.hq = 8, p.hv = 32, p.dk = K, p.dv = V;
              p.num_seqs = 8, p.num_tokens = 32768, p.max_seqlen = 16384, p.pool_slots = 8;
              for (dk::operand* o : {&p.q, &p.k, &p.v, &p.out}) set_operand(*o, dk::dtype(io));
              set_operand(p.g, dk::dtype::f32);
              set_operand(p.beta, dk::dtype::f32);
              set_operand(p.cu_seqlens, dk::dtype::i32);
              set_operand(p.pool, st ? dk::dtype::bf16 : dk::dtype::f32);
              snprintf(desc, sizeof desc, "K=%d V=%d gate=%s io=%s state=%s %s", K, V, kGate[gate],
                       kDtype[io], st ? "bf16" : "f32", layout ? "v_last" : "k_last");
              w.add(lds_needed(p, [](const dk::gpu::target& t, const dk::prefill_problem& q) {
                      return dk::gpu::prefill_query(t, q, nullptr);
                    }),
                    desc);
            }
  return w;
}

bool print(const char* op, const worst& w) {
  printf("%-8s %6d shapes: max %6d bytes (%s)%s", op, w.shapes, w.bytes, w.what,
         w.over ? "  <-- over 64 KB" : "");
  if (w.refused) printf("; %d refused for other reasons", w.refused);
  if (w.over) printf("; %d shapes need more than 64 KB", w.over);
  printf("\n");
  return w.over == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool check = argc > 1 && strcmp(argv[1], "--check") == 0;
  printf("dynamic LDS per workgroup, asked of the launch code for every shape SPEC allows "
         "(K, V 16..256 step 16, T 1..16, 3 gate kinds, both layouts, all dtypes):\n");
  bool ok = print("decode", decode_budget());
  ok = print("prefill", prefill_budget()) && ok;
  if (!ok) printf("FAILED: some kernel launch needs more than 64 KB of LDS on gfx906\n");
  return check && !ok ? 1 : 0;
}
