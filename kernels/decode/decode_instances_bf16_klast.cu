// The decode kernels of bf16 K-last state, every family and mode (decode_instances.cuh).
#include "decode_instances.cuh"

namespace dk::gpu::decode_detail {
template DK_DECODE_INSTANCES(dtype::bf16, state_layout::k_last);
}  // namespace dk::gpu::decode_detail
