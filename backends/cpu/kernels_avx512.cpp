// The kernels built with -mavx512f -mavx512bw -mavx512vl -mavx512dq (+ AVX2, FMA,
// F16C; see CMakeLists.txt).
#define DK_CPU_ISA avx512
#define DK_CPU_ISA_NAME "avx512"
#define DK_CPU_ARCH_NAME "x86-64-avx512"
#define DK_CPU_LANES 16
#define DK_CPU_GEMM_MR 8
#define DK_CPU_GEMM_NV 2
#include "kernels.inc"
