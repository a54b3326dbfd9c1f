// Warp-level tensor-core primitives for the prefill (mma.sync m16n8k16 bf16 -> fp32,
// ldmatrix, cp.async) and the bf16 hi/lo split that keeps fp32-level accuracy:
//   x = hi + lo (both bf16, |x - hi - lo| <= 2^-16 |x|), x*y ~ hi*hi' + lo*hi' + hi*lo'.
// Everything here exists only where DK_HAS_MMA_SYNC (NVIDIA sm_80+); callers guard
// their use with the same macro.
#pragma once
#include "common/bulk_copy.cuh"
#include "prefill_common.cuh"

namespace dk::prefill::tc {

#if DK_HAS_MMA_SYNC

// Four 8x8 b16 matrices; lane i supplies the row address of matrix i/8, row i%8.
DK_DEVICE void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
DK_DEVICE void ldsm_x4_t(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a (16x16, row) * b (16x8, col); bf16 inputs, fp32 accumulate.
DK_DEVICE void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

DK_DEVICE void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
DK_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
DK_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// bf16x2 with x0 in the low half (the lower column index of a fragment pair).
DK_DEVICE uint32_t pack_bf16(float x0, float x1) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(x1), "f"(x0));
  return r;
}
DK_DEVICE void split2(float x0, float x1, uint32_t& hi, uint32_t& lo) {
  hi = pack_bf16(x0, x1);
  const float h0 = __uint_as_float(hi << 16);
  const float h1 = __uint_as_float(hi & 0xffff0000u);
  lo = pack_bf16(x0 - h0, x1 - h1);
}

// A fragment (16x16) from two accumulator tiles c0 (cols 0-7) and c1 (cols 8-15) of the
// same 16 rows: the accumulator layout of m16n8 equals the A layout of m16n8k16.
DK_DEVICE void frag_from_acc(const float (&c0)[4], const float (&c1)[4], uint32_t (&hi)[4],
                             uint32_t (&lo)[4]) {
  split2(c0[0], c0[1], hi[0], lo[0]);
  split2(c0[2], c0[3], hi[1], lo[1]);
  split2(c1[0], c1[1], hi[2], lo[2]);
  split2(c1[2], c1[3], hi[3], lo[3]);
}

// Round-to-nearest conversions in one instruction (the output path).
DK_DEVICE uint16_t cvt_bf16(float x) {
  uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
  return r;
}
DK_DEVICE uint16_t cvt_f16(float x) {
  uint16_t r;
  asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
  return r;
}
template <dtype IO>
DK_DEVICE typename io<IO>::elem cvt_out(float x) {
  if constexpr (IO == dtype::bf16) return cvt_bf16(x);
  else if constexpr (IO == dtype::f16) return cvt_f16(x);
  else return x;
}

// Byte offset of element (row, 16-byte chunk) in a shared-memory plane of 16-bit values
// whose rows hold `row_chunks` (>= 8) chunks, XOR-swizzled so that the 8 rows an
// ldmatrix reads hit 8 different bank groups.
template <int row_chunks>
DK_DEVICE uint32_t swz(int row, int chunk) {
  return static_cast<uint32_t>(row * row_chunks * 16 + ((chunk ^ (row & 7)) << 4));
}

// Lane address patterns for ldsm_x4 (lane = 8 * m + r):
//  A (16x16 from row-major [m][k]):  row = m0 + (m & 1) * 8 + r, chunk = k0/8 + (m >> 1)
//  B (two n8 tiles from row-major [n][k]): row = n0 + (m >> 1) * 8 + r, chunk = k0/8 + (m & 1)
//     -> {r0, r1} = tile n0, {r2, r3} = tile n0 + 8
//  Bt (two n8 tiles from row-major [k][n], with ldsm_x4_t): row = k0 + (m & 1) * 8 + r,
//     chunk = n0/8 + (m >> 1) -> {r0, r1} = tile n0, {r2, r3} = tile n0 + 8

#endif  // DK_HAS_MMA_SYNC

// mbarriers and bulk copies: kernels/common/bulk_copy.cuh (dk::bulk_*).

}  // namespace dk::prefill::tc
