// Tensor-core (mma.sync) prefill: instantiations and launcher. On targets without
// DK_HAS_MMA_SYNC the kernels compile to empty bodies and are never launched.
#include "dk/hal.hpp"
#include "prefill_impl.hpp"
#include "prefill_tc_prep.cuh"
#include "prefill_tc_seq.cuh"

namespace dk::prefill {

int64_t tc_workspace(const prefill_problem& p) { return tc::make_ws_layout(p).total; }

template <dtype IO, int KD>
static int64_t prep_smem_t() { return tc::prep_cfg<IO, KD>::kBytes; }

int64_t tc_prep_smem(const prefill_problem& p) {
  const bool k128 = p.dk == 128;
  switch (p.q.type) {
    case dtype::bf16: return k128 ? prep_smem_t<dtype::bf16, 128>() : prep_smem_t<dtype::bf16, 64>();
    case dtype::f16: return k128 ? prep_smem_t<dtype::f16, 128>() : prep_smem_t<dtype::f16, 64>();
    default: return k128 ? prep_smem_t<dtype::f32, 128>() : prep_smem_t<dtype::f32, 64>();
  }
}

template <dtype IO>
static int64_t seq_smem_t(int kd, int stages) {
  return kd == 128 ? tc::seq_cfg<IO, 128>::bytes(stages) : tc::seq_cfg<IO, 64>::bytes(stages);
}

int64_t tc_seq_smem(const prefill_problem& p, int stages) {
  switch (p.q.type) {
    case dtype::bf16: return seq_smem_t<dtype::bf16>(p.dk, stages);
    case dtype::f16: return seq_smem_t<dtype::f16>(p.dk, stages);
    default: return seq_smem_t<dtype::f32>(p.dk, stages);
  }
}

#if !DK_VENDOR_HIP  // the tensor-core kernels exist for NVIDIA only

static dk_status check_launch(const plan& pl, const char* what) {
  const gpu_error_t e = gpu_last_error();
  if (e != gpu_success)
    return set_error(DK_STATUS_DEVICE_ERROR, "prefill: %s (%s) launch failed: %s", pl.name, what,
                     gpu_error_string(e));
  return DK_STATUS_SUCCESS;
}

template <class Kernel>
static dk_status reserve_smem(Kernel* kernel, int64_t bytes) {
  const gpu_error_t e = gpu_set_max_dynamic_smem(kernel, static_cast<int>(bytes));
  if (e != gpu_success)
    return set_error(DK_STATUS_DEVICE_ERROR, "prefill: cannot reserve %lld bytes of shared memory: %s",
                     static_cast<long long>(bytes), gpu_error_string(e));
  return DK_STATUS_SUCCESS;
}

template <dtype IO, int KD>
static dk_status launch_tc_t(const prefill_problem& p, const plan& pl, const tc::ws_ptrs& w,
                             int64_t chunks, gpu_stream_t s) {
  if (chunks > 0) {
    auto* prep = tc::prep_kernel<IO, KD>;
    const int64_t smem = tc::prep_cfg<IO, KD>::kBytes;
    if (dk_status st = reserve_smem(prep, smem)) return st;
    prep<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(p.hv)), dim3(tc::kPrepThreads),
           smem, s>>>(p, w, pl.vec_q, pl.vec_k, pl.vec_v);
    if (dk_status st = check_launch(pl, "prep")) return st;
  }
  if (overrides().skip_seq) return DK_STATUS_SUCCESS;
  using SC = tc::seq_cfg<IO, KD>;
  auto* seq = tc::seq_kernel<IO, KD>;
  const int64_t smem = SC::bytes(pl.stages);
  if (dk_status st = reserve_smem(seq, smem)) return st;
  const int64_t blocks = p.num_seqs * p.hv * (p.dv / SC::kVT);
  seq<<<dim3(static_cast<unsigned>(blocks)), dim3(SC::kThreads), smem, s>>>(p, w, pl.stages, pl.vec_out);
  return check_launch(pl, "seq");
}

template <dtype IO>
static dk_status launch_tc_io(const prefill_problem& p, const plan& pl, const tc::ws_ptrs& w,
                              int64_t chunks, gpu_stream_t s) {
  return p.dk == 128 ? launch_tc_t<IO, 128>(p, pl, w, chunks, s)
                     : launch_tc_t<IO, 64>(p, pl, w, chunks, s);
}

#endif  // !DK_VENDOR_HIP

dk_status launch_tc(const prefill_problem& p, const plan& pl, void* workspace, void* stream) {
#if DK_VENDOR_HIP
  (void)p, (void)workspace, (void)stream;
  return set_error(DK_STATUS_INTERNAL, "prefill: %s is not built for this vendor", pl.name);
#else
  const gpu_stream_t s = static_cast<gpu_stream_t>(stream);
  const tc::ws_layout l = tc::make_ws_layout(p);
  unsigned char* base = static_cast<unsigned char*>(workspace);
  tc::ws_ptrs w;
  w.cu = reinterpret_cast<const int32_t*>(base + l.off_cu);
  w.qk = base + l.off_qk;
  w.w = base + l.off_w;
  w.pm = base + l.off_p;
  w.qk_bytes = l.qk_bytes;
  w.u = reinterpret_cast<float*>(base + l.off_u);
  w.sc = reinterpret_cast<float*>(base + l.off_s);

  chunk_offsets_kernel<tc::kC><<<1, 256, 0, s>>>(p, l.chunks, reinterpret_cast<int32_t*>(base + l.off_cu));
  if (dk_status st = check_launch(pl, "chunk offsets")) return st;
  switch (p.q.type) {
    case dtype::bf16: return launch_tc_io<dtype::bf16>(p, pl, w, l.chunks, s);
    case dtype::f16: return launch_tc_io<dtype::f16>(p, pl, w, l.chunks, s);
    case dtype::f32: return launch_tc_io<dtype::f32>(p, pl, w, l.chunks, s);
    default: return set_error(DK_STATUS_INTERNAL, "prefill: unexpected q dtype");
  }
#endif
}

}  // namespace dk::prefill
