// Asynchronous global -> shared copies that hold no registers in flight:
// - bulk copies by the copy engine (TMA, cp.async.bulk; NVIDIA sm_90+)
//   completing on shared-memory mbarriers: many tiles in flight without
//   per-thread copy tracking;
// - per-thread 16-byte copies (cp.async; NVIDIA sm_80+).
// Where the device pass lacks one (DK_HAS_TMA / DK_HAS_CP_ASYNC is 0: gfx906,
// the host pass, sm_80 for TMA) its functions compile to a trap (the
// barrier-init fence to nothing), so portable kernel templates still build;
// the tuning tables select such kernels only where the device pass has them.
#pragma once
#include "vendor.cuh"

namespace dk {

#if DK_HAS_CP_ASYNC
// The 32-bit shared-space address of a pointer into shared memory (sm_80+).
DK_DEVICE uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
#endif

// Per-thread asynchronous 16-byte copies global -> shared (cp.async.cg: through
// L2 only), so that bytes in flight hold no registers. `valid` false fills the
// 16 bytes with zeros and reads nothing. A thread sees its own copies once
// copy16_async_wait_groups(n) returns for those committed (copy16_async_commit)
// before its last n groups; n = 0: all of them (others' need a barrier as well).
DK_DEVICE void copy16_async(void* smem_dst, const void* src, bool valid) {
#if DK_HAS_CP_ASYNC
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(smem_dst)), "l"(src),
               "r"(valid ? 16u : 0u)
               : "memory");
#else
  (void)smem_dst, (void)src, (void)valid;
  trap();
#endif
}
// Closes the group of this thread's copies issued since the last commit.
DK_DEVICE void copy16_async_commit() {
#if DK_HAS_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
  trap();
#endif
}
// Waits until at most `pending` of this thread's committed groups are in
// flight. The count is an immediate: call with a constant (an unrolled loop's
// index folds); 0..7 are served, larger counts wait for every group.
DK_DEVICE void copy16_async_wait_groups(int pending) {
#if DK_HAS_CP_ASYNC
  switch (pending) {
    case 7: asm volatile("cp.async.wait_group 7;\n" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;\n" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  }
#else
  (void)pending;
  trap();
#endif
}

// One thread initialises a barrier that completes a phase on one arrival (plus
// the bytes announced with it); then bulk_barrier_init_done before any use.
DK_DEVICE void bulk_barrier_init(uint64_t* bar) {
#if DK_HAS_TMA
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(bar)) : "memory");
#else
  (void)bar;
  trap();
#endif
}
DK_DEVICE void bulk_barrier_init_done() {
#if DK_HAS_TMA
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// The arrival of this phase, announcing `bytes` of copies that complete it
// (0: the phase completes now).
DK_DEVICE void bulk_arrive_expect(uint64_t* bar, uint32_t bytes) {
#if DK_HAS_TMA
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
#else
  (void)bar, (void)bytes;
  trap();
#endif
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) and counts
// them against the barrier's current phase.
DK_DEVICE void bulk_copy(void* smem_dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if DK_HAS_TMA
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          shared_address(smem_dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar))
      : "memory");
#else
  (void)smem_dst, (void)src, (void)bytes, (void)bar;
  trap();
#endif
}

// Waits until the phase with parity `parity` has completed; its copies are
// then visible to the waiting thread.
DK_DEVICE void bulk_wait(uint64_t* bar, uint32_t parity) {
#if DK_HAS_TMA
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  } while (!done);
#else
  (void)bar, (void)parity;
  trap();
#endif
}

}  // namespace dk
