// The kernels built with -mavx2 -mfma -mf16c (see CMakeLists.txt).
#define DK_CPU_ISA avx2
#define DK_CPU_ISA_NAME "avx2"
#define DK_CPU_ARCH_NAME "x86-64-avx2"
#define DK_CPU_LANES 8
#define DK_CPU_GEMM_MR 4
#define DK_CPU_GEMM_NV 2
#include "kernels.inc"
