// Capability macros, derived here and nowhere else. Each is always defined as
// 0 or 1; kernels test these, never __CUDA_ARCH__ or __gfx906__ directly.
// In the host pass every device capability is 0.
#pragma once

#if defined(__CUDA_ARCH__)
#define DK_ARCH_CUDA __CUDA_ARCH__ /* 800, 900, 1000, 1200 */
#else
#define DK_ARCH_CUDA 0
#endif

#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
#define DK_ARCH_AMD 1
#else
#define DK_ARCH_AMD 0
#endif

// Warp-level matrix multiply-accumulate (mma.sync m16n8k16 bf16/fp16): sm_80 and later.
#define DK_HAS_MMA_SYNC (DK_ARCH_CUDA >= 800 ? 1 : 0)
// cp.async global->shared copies: sm_80 and later.
#define DK_HAS_CP_ASYNC (DK_ARCH_CUDA >= 800 ? 1 : 0)
// Bulk tensor copies (TMA) and thread block clusters: sm_90 and later.
#define DK_HAS_TMA (DK_ARCH_CUDA >= 900 ? 1 : 0)
// Warpgroup MMA: only the arch-specific sm_90a target.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DK_HAS_WGMMA 1
#else
#define DK_HAS_WGMMA 0
#endif
// 64-lane wavefronts (gfx9 / CDNA).
#if DK_ARCH_AMD && defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE == 64
#define DK_WAVE64 1
#else
#define DK_WAVE64 0
#endif
// Packed fp16 dot product into fp32 (v_dot2_f32_f16): gfx906 and later GCN/CDNA.
#if DK_ARCH_AMD && (defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__))
#define DK_HAS_DOT2_F16 1
#else
#define DK_HAS_DOT2_F16 0
#endif
// DPP lane exchange inside VALU ops, with the GFX8/9-only row_bcast (group_sum in amd.cuh).
#if DK_ARCH_AMD && (defined(__gfx900__) || defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__))
#define DK_HAS_DPP 1
#else
#define DK_HAS_DPP 0
#endif

// The tuning family of the device pass being compiled: the arch whose table
// in kernels/tuning/ applies (80 covers sm_8x, 90 sm_90a, 100 sm_100a,
// 120 sm_120a, 906 gfx9). 0 in the host pass. Kernels templated on a family
// compile their body only in the matching device pass (see kernels/tuning/).
#if DK_ARCH_AMD
#define DK_ARCH_FAMILY 906
#elif DK_ARCH_CUDA >= 1200
#define DK_ARCH_FAMILY 120
#elif DK_ARCH_CUDA >= 1000
#define DK_ARCH_FAMILY 100
#elif DK_ARCH_CUDA >= 900
#define DK_ARCH_FAMILY 90
#elif DK_ARCH_CUDA >= 800
#define DK_ARCH_FAMILY 80
#else
#define DK_ARCH_FAMILY 0
#endif

static_assert(DK_HAS_WGMMA == 0 || DK_HAS_TMA == 1, "wgmma implies TMA-capable Hopper");
static_assert(DK_HAS_MMA_SYNC == 0 || DK_ARCH_AMD == 0, "mma.sync is NVIDIA-only");
static_assert(DK_WAVE64 == 0 || DK_ARCH_AMD == 1, "64-lane waves are AMD-only");
