// Entry points of the GPU prefill (kernels/launch.hpp): choose a path from the target and
// the host integers, report its name and workspace, launch it. No host synchronisation and
// no device reads: the call can be captured in a CUDA/HIP graph.
//
// Paths:
//  tc       chunked WY with mma.sync (NVIDIA sm_80+): K in {64, 128}, V % 64 == 0,
//           gate none/scalar. prefill_tc.cuh.
//  generic  fused chunked WY in fp32 SIMT: everything else (per-key gates, other head dims,
//           AMD). prefill_generic.cuh.
#include "dk/hal.hpp"
#include "prefill_impl.hpp"
#include "prefill_common.cuh"

namespace dk::prefill {

plan_overrides& overrides() {
  static plan_overrides o;
  return o;
}

namespace {

// Static implementation names: "<vendor>:<arch>:<impl>"; the generic path is named
// after its chunk (16 or 8 tokens: 8 where shared memory is short, always on gfx906).
#define DK_PREFILL_NAMES(arch)                                                              \
  {"cuda:" arch ":prefill_wy16_simt", "cuda:" arch ":prefill_wy8_simt",                   \
   "cuda:" arch ":prefill_wy64_mma_k64", "cuda:" arch ":prefill_wy64_mma_k128"}
const char* const kCudaNames[5][4] = {DK_PREFILL_NAMES("sm80"), DK_PREFILL_NAMES("sm90a"),
                                      DK_PREFILL_NAMES("sm100a"), DK_PREFILL_NAMES("sm120a"),
                                      DK_PREFILL_NAMES("sm")};
#undef DK_PREFILL_NAMES

const char* impl_name(const gpu::target& t, path kind, int kd, int cg) {
  const int impl = kind == path::generic ? (cg == 16 ? 0 : 1) : (kd == 64 ? 2 : 3);
  if (DK_VENDOR_HIP) return "hip:gfx906:prefill_wy8_simt";
  const int a = t.arch >= 120 ? 3 : t.arch >= 100 ? 2 : t.arch >= 90 ? 1 : t.arch >= 80 ? 0 : 4;
  return kCudaNames[a][impl];
}

bool aligned16(const operand& o, int dims_before_last) {
  const int64_t es = dtype_size(o.type);
  if (reinterpret_cast<uintptr_t>(o.data) % 16 != 0) return false;
  for (int d = 0; d < dims_before_last; ++d)
    if ((o.stride[d] * es) % 16 != 0) return false;
  return true;
}

}  // namespace

dk_status make_plan(const gpu::target& t, const prefill_problem& p, plan* out) {
  const int K = p.dk, V = p.dv;
  if (K < 16 || K > 256 || K % 16 != 0 || V < 16 || V > 256 || V % 16 != 0)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "prefill: head dims K=%d, V=%d: the GPU prefill needs multiples of 16 in [16, 256]",
                     K, V);
  if (p.hq <= 0 || p.hv <= 0 || p.hv % p.hq != 0)
    return set_error(DK_STATUS_INVALID_ARGUMENT, "prefill: HV=%d must be a multiple of HQ=%d", p.hv,
                     p.hq);
  const int64_t smem_max = t.max_smem_per_block > 0 ? t.max_smem_per_block : 48 * 1024;
  plan pl{};
  pl.vec_q = aligned16(p.q, 2);
  pl.vec_k = aligned16(p.k, 2);
  pl.vec_v = aligned16(p.v, 2);
  pl.vec_out = aligned16(p.out, 2);

  const plan_overrides& ov = overrides();
  bool tc_ok = !DK_VENDOR_HIP && t.arch >= 80 && p.r.gate != gate_kind::per_key &&
               (K == 64 || K == 128) && V % 64 == 0 && ov.force_path != 0;
  if (tc_ok) {
    pl.stages = tc_seq_smem(p, 2) <= smem_max ? 2 : 1;
    tc_ok = tc_seq_smem(p, pl.stages) <= smem_max && tc_prep_smem(p) <= smem_max &&
            p.num_seqs * p.hv * (V / 32) < (int64_t(1) << 31) &&
            max_chunks(p, 64) < (int64_t(1) << 31) - 1 && p.hv < 65536;
  }
  if (tc_ok) {
    pl.kind = path::tc;
    pl.ws_bytes = tc_workspace(p);
  } else {
    if (ov.force_path == 1)
      return set_error(DK_STATUS_UNSUPPORTED, "prefill: the tensor-core path cannot run this problem");
    pl.kind = path::generic;
    pl.cg = !DK_VENDOR_HIP && generic_smem(p, 16) <= smem_max ? 16 : 8;
    if (generic_smem(p, pl.cg) > smem_max)
      return set_error(DK_STATUS_UNSUPPORTED, "prefill: K=%d needs %lld bytes of shared memory, the device has %lld",
                       K, static_cast<long long>(generic_smem(p, pl.cg)), static_cast<long long>(smem_max));
    if (p.num_seqs * p.hv * (V / 16) >= (int64_t(1) << 31))
      return set_error(DK_STATUS_UNSUPPORTED, "prefill: too many (sequence, head) pairs for one launch");
    pl.ws_bytes = 0;
  }
  pl.name = impl_name(t, pl.kind, K, pl.cg);
  *out = pl;
  return DK_STATUS_SUCCESS;
}

}  // namespace dk::prefill

namespace dk::gpu {

dk_status prefill_query(const target& t, const prefill_problem& p, const char** out_name) {
  prefill::plan pl;
  if (dk_status st = prefill::make_plan(t, p, &pl)) return st;
  if (out_name) *out_name = pl.name;
  return DK_STATUS_SUCCESS;
}

dk_status prefill_workspace_bytes(const target& t, const prefill_problem& p, size_t* out_bytes) {
  *out_bytes = 0;
  prefill::plan pl;
  const dk_status s = prefill::make_plan(t, p, &pl);
  if (s == DK_STATUS_SUCCESS) *out_bytes = static_cast<size_t>(pl.ws_bytes);
  return s;
}

dk_status prefill_launch(const target& t, const prefill_problem& p, void* workspace,
                         size_t workspace_bytes, void* stream) {
  prefill::plan pl;
  if (dk_status st = prefill::make_plan(t, p, &pl)) return st;
  if (p.num_seqs <= 0) return DK_STATUS_SUCCESS;
  if (pl.ws_bytes > 0) {
    if (!workspace || workspace_bytes < static_cast<size_t>(pl.ws_bytes))
      return set_error(DK_STATUS_INSUFFICIENT_WORKSPACE,
                       "prefill: workspace of %zu bytes, %s needs %lld", workspace_bytes, pl.name,
                       static_cast<long long>(pl.ws_bytes));
    if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
      return set_error(DK_STATUS_INVALID_ARGUMENT, "prefill: workspace must be aligned to 256 bytes");
  }
  return pl.kind == prefill::path::tc ? prefill::launch_tc(p, pl, workspace, stream)
                                      : prefill::launch_generic(p, pl, stream);
}

}  // namespace dk::gpu
