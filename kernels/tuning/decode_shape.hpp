// What a tuning table says about the decode kernel (kernels/decode/decode.cu).
// Plain constexpr data: each arch family has one small header (sm80.hpp ...)
// that specialises decode_tuning<family>; the host picks the family from
// target.arch at run time, and the device pass of that arch compiles only its
// own family's kernels (DK_ARCH_FAMILY), so the tables cost no extra builds.
#pragma once

namespace dk::tuning {

// Kernel variants by key dim: K = 128 and K = 64 are exact fits (no
// predication along K); everything else up to 256 takes the generic one.
enum class decode_class : int { k128 = 0, k64 = 1, generic = 2 };

// How one block holds its tile of the state in registers. A thread owns a
// (keys x values) patch of the K x V state; the contiguous dim of the pool is
// read in 16-byte vectors (4 fp32 or 8 bf16/fp16 elements).
//   K-last pool [.., V, K]: keys per thread = vec_chunks * elems_per_16B,
//                           values (rows) per thread = rows
//   V-last pool [.., K, V]: keys (rows) per thread = rows,
//                           values per thread = vec_chunks * elems_per_16B
// A warp puts lanes_k lanes side by side along K (sums over K are butterfly
// shuffles among them) and the rest of its lanes along V; warps_k warps split
// K further (sums finished through shared memory). The keys one block covers,
// keys_per_thread * lanes_k * warps_k, must equal K for k128/k64 and reach 256
// for generic. Up to max_warps_v warps split V; the launch uses fewer (smaller
// V tiles, more blocks) while the grid would leave SMs idle.
struct decode_shape {
  int lanes_k;
  int vec_chunks;
  int rows;
  int warps_k;
  int max_warps_v;
};

// Besides the shapes, each family's decode_tuning<F> holds:
//   min_blocks_per_sm  the launch halves the warps along V (down to 1) while the
//                      grid has fewer blocks than this per SM/CU;
//   launch_bound       0, or the block size __launch_bounds__ promises when it
//                      should exceed the real one: caps registers per thread
//                      (CUDA: 64K / launch_bound) so more blocks stay resident.
template <int Family>
struct decode_tuning;  // no primary definition: a family without a table fails to compile

// Helper for tables: 16-byte vectors along K that cover `keys` with `lanes` lanes.
constexpr int chunks_for(int keys, int lanes, int state_bytes) {
  return keys / (lanes * (16 / state_bytes));
}

}  // namespace dk::tuning
