// AMD-only pieces of the vendor shim, included by vendor.cuh. Kernels never
// include this file or call dk::amd:: directly: they call the shim's dk:: names,
// which pick these paths when the capability macros (arch.cuh) say so.
#pragma once
#include "arch.cuh"

#if DK_ARCH_AMD
namespace dk::amd {

// The kernel's first (by-value) parameter, read in place from the kernarg
// segment, where explicit arguments start at offset 0. clang copies a by-value
// aggregate parameter field by field at kernel entry, which keeps every field
// (decode: 68 pointers/strides) live in SGPRs for the whole kernel and spilled
// them on gfx906 (102 SGPRs); read in place, each s_load sits where it is used.
template <class T>
__device__ __forceinline__ const T& kernarg_first() {
  return *reinterpret_cast<const T*>((const char*)__builtin_amdgcn_kernarg_segment_ptr());
}

}  // namespace dk::amd
#endif  // DK_ARCH_AMD

#if DK_HAS_DPP
static_assert(DK_WAVE64 == 1, "the DPP reductions below assume 64-lane wavefronts");

namespace dk::amd {

// DPP_CTRL encodings (AMD "Vega" ISA, section 6.2.3 / VOP_DPP).
enum : int {
  kDppQuadXor1 = 0xB1,       // quad_perm:[1,0,3,2]   lane ^ 1
  kDppQuadXor2 = 0x4E,       // quad_perm:[2,3,0,1]   lane ^ 2
  kDppRowMirror = 0x140,     // row_mirror            lane 15 - i within a row of 16
  kDppRowHalfMirror = 0x141, // row_half_mirror       lane 7 - i within 8 lanes
  kDppRowBcast15 = 0x142,    // row_bcast:15          lane 15 of row r -> row r + 1
  kDppRowBcast31 = 0x143,    // row_bcast:31          lane 31 -> rows 2 and 3
};

// v read from the lane `Ctrl` names; rows outside RowMask read 0 (the identity
// of +), so with all rows enabled `v + dpp<...>(v)` folds into one v_add_f32_dpp.
template <int Ctrl, int RowMask = 0xf>
__device__ __forceinline__ float dpp(float v) {
  return __int_as_float(
      __builtin_amdgcn_update_dpp(0, __float_as_int(v), Ctrl, RowMask, 0xf, false));
}

// x moved through a DPP identity permutation (quad_perm [0,1,2,3]): the same
// bits, but in a vector register the compiler treats as divergent, so it stays
// out of the scalar register file (see dk::vector_reg).
__device__ __forceinline__ uint32_t vgpr_copy(uint32_t x) {
  return uint32_t(__builtin_amdgcn_update_dpp(0, int(x), 0xE4, 0xf, 0xf, false));
}

// Sum over groups of `Width` consecutive lanes, every lane of a group getting
// the same bits (each step adds a value to its mirror image, so all lanes add
// the same pairs). gfx906 specialization of dk::group_sum: the generic
// __shfl_xor lowers to ds_bpermute_b32 (an LDS-crossbar round trip plus an
// address VGPR per step); DPP reads the neighbour lane inside the v_add itself.
// Widths up to 16 stay within a DPP row; 32 adds one ds_swizzle (no address
// VGPR); 64 adds two row_bcast steps and one v_readlane to broadcast lane 63.
template <int Width>
__device__ __forceinline__ float group_sum_dpp(float v) {
  static_assert(Width >= 1 && Width <= 64 && (Width & (Width - 1)) == 0,
                "group width must be a power of two <= 64");
  if constexpr (Width >= 2) v += dpp<kDppQuadXor1>(v);
  if constexpr (Width >= 4) v += dpp<kDppQuadXor2>(v);
  if constexpr (Width >= 8) v += dpp<kDppRowHalfMirror>(v);
  if constexpr (Width >= 16) v += dpp<kDppRowMirror>(v);
  if constexpr (Width == 32) {
    // ds_swizzle bit-mask mode within 32 lanes: and 0x1f, or 0, xor 0x10.
    v += __int_as_float(__builtin_amdgcn_ds_swizzle(__float_as_int(v), 0x1f | (0x10 << 10)));
  }
  if constexpr (Width == 64) {
    v += dpp<kDppRowBcast15, 0xa>(v);  // rows 1, 3 hold the sums of rows 0+1, 2+3
    v += dpp<kDppRowBcast31, 0xc>(v);  // row 3 holds the wave's sum
    v = __int_as_float(__builtin_amdgcn_readlane(__float_as_int(v), 63));
  }
  return v;
}

}  // namespace dk::amd
#endif  // DK_HAS_DPP
