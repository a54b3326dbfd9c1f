// The decode kernels of fp16 V-last state, every family and mode (decode_instances.cuh).
#include "decode_instances.cuh"

namespace dk::gpu::decode_detail {
template DK_DECODE_INSTANCES(dtype::f16, state_layout::v_last);
}  // namespace dk::gpu::decode_detail
