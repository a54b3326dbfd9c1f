// Generic (SIMT fp32) prefill: instantiations and launcher.
#include "dk/hal.hpp"
#include "prefill_generic.cuh"
#include "prefill_impl.hpp"

namespace dk::prefill {

int64_t generic_smem(const prefill_problem&, int cg) {
  return cg == 16 ? gen_smem<16>::kBytes : gen_smem<8>::kBytes;
}

template <dtype IO, int CG, bool PK>
static dk_status launch_generic_t(const prefill_problem& p, const plan& pl, gpu_stream_t s) {
  auto* kernel = prefill_generic_kernel<IO, CG, PK>;
  const int smem = gen_smem<CG>::kBytes;
  gpu_error_t e = gpu_set_max_dynamic_smem(kernel, smem);
  if (e != gpu_success)
    return set_error(DK_STATUS_DEVICE_ERROR, "prefill: cannot reserve %d bytes of shared memory: %s",
                     smem, gpu_error_string(e));
  const int64_t blocks = p.num_seqs * p.hv * (p.dv / kGenVT);
  kernel<<<dim3(static_cast<unsigned>(blocks)), dim3(kGenThreads), smem, s>>>(p);
  e = gpu_last_error();
  if (e != gpu_success)
    return set_error(DK_STATUS_DEVICE_ERROR, "prefill: %s launch failed: %s", pl.name,
                     gpu_error_string(e));
  return DK_STATUS_SUCCESS;
}

template <dtype IO>
static dk_status launch_generic_io(const prefill_problem& p, const plan& pl, gpu_stream_t s) {
  const bool pk = p.r.gate == gate_kind::per_key;
#if !DK_VENDOR_HIP  // AMD's 64 KB of LDS only ever takes the 8-token chunks
  if (pl.cg == 16)
    return pk ? launch_generic_t<IO, 16, true>(p, pl, s) : launch_generic_t<IO, 16, false>(p, pl, s);
#endif
  return pk ? launch_generic_t<IO, 8, true>(p, pl, s) : launch_generic_t<IO, 8, false>(p, pl, s);
}

dk_status launch_generic(const prefill_problem& p, const plan& pl, void* stream) {
  const gpu_stream_t s = static_cast<gpu_stream_t>(stream);
  switch (p.q.type) {
    case dtype::f32: return launch_generic_io<dtype::f32>(p, pl, s);
    case dtype::bf16: return launch_generic_io<dtype::bf16>(p, pl, s);
    case dtype::f16: return launch_generic_io<dtype::f16>(p, pl, s);
    default: return set_error(DK_STATUS_INTERNAL, "prefill: unexpected q dtype");
  }
}

}  // namespace dk::prefill
