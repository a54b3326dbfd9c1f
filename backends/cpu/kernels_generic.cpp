// The portable kernels: whatever the compiler's baseline for this target allows.
#define DK_CPU_ISA generic
#define DK_CPU_ISA_NAME "generic"
#define DK_CPU_ARCH_NAME "generic"
#define DK_CPU_LANES 4
#define DK_CPU_GEMM_MR 4
#define DK_CPU_GEMM_NV 2
#include "kernels.inc"
