// The decode kernel instances and their launchers: what each slot of the
// kernel tables (family, mode, class, state dtype, layout) runs. decode.cu
// picks a slot and instantiates nothing; each decode_instances_<state>_<layout>.cu
// builds the instances of one state dtype and layout (launch_entry), so that
// the kernels of one arch compile in six translation units side by side.
#pragma once
#include <atomic>

#include "decode_kernel.cuh"
#include "dk/hal.hpp"
#include "launch.hpp"

namespace dk::gpu::decode_detail {

inline constexpr int kDefaultSmemLimit = 48 * 1024;
inline constexpr int kCachedDevices = 16;  // devices whose raised shared-memory limits are remembered
#if DK_VENDOR_HIP
inline constexpr int kFamilies[] = {906};
#else
inline constexpr int kFamilies[] = {80, 90, 100, 120};
#endif
inline constexpr int kNumFamilies = int(sizeof(kFamilies) / sizeof(kFamilies[0]));

// Checks one instance's launch shape against the device (its shared memory)
// and, when `launch`, launches it: the shape is computed once per call.
using launch_fn = dk_status (*)(const target&, const decode_problem&, gpu_stream_t, bool launch);

// Programmatic launch on the rotated t1 grids: the last late_prefetch_blocks<G>()
// blocks per SM of the first wave prefetch their tiles before the wait. They
// become resident last, as the previous kernel drains, so their lines reach L2
// shortly before the wait ends; earlier or more prefetching blocks were slower
// (NOTES.md v11). The instance's resident blocks per SM come from the
// occupancy query, remembered per device with the block size asked.
template <class G>
constexpr int late_prefetch_blocks() {
  if constexpr (G::mma_per_key && G::k_last) return G::table::tn_mma_per_key_late_prefetch_blocks_per_sm;
  return G::k_last ? G::table::programmatic_late_prefetch_blocks_per_sm
                   : G::table::programmatic_late_prefetch_vlast_blocks_per_sm;
}
template <class G, class Kernel>
dk_status set_late_prefetch(Kernel* kernel, const target& t, launch_shape* ls) {
  static std::atomic<int64_t> known[kCachedDevices] = {};  // threads << 32 | blocks per SM; 0: not asked
  const bool cached = t.device >= 0 && t.device < kCachedDevices;
  const int64_t seen = cached ? known[t.device].load() : 0;
  int per_sm = seen >> 32 == ls->threads ? int(seen & 0xffffffff) : 0;
  if (per_sm == 0) {
    const gpu_error_t e = gpu_resident_blocks(kernel, int(ls->threads), ls->smem, &per_sm);
    if (e != gpu_success)
      return set_error(DK_STATUS_DEVICE_ERROR, "decode: occupancy query failed: %s", gpu_error_string(e));
    if (cached && per_sm > 0) known[t.device].store(int64_t(ls->threads) << 32 | per_sm);
  }
  const int64_t wave = int64_t(per_sm) * t.compute_units;
  const int64_t late = int64_t(late_prefetch_blocks<G>()) * t.compute_units;
  ls->lp.prefetch_first = uint32_t(wave > late ? wave - late : 0);
  ls->lp.prefetch_end = uint32_t(wave < ls->blocks ? wave : ls->blocks);
  return DK_STATUS_SUCCESS;
}

template <int Family, decode_class C, dtype S, state_layout L, decode_mode M>
dk_status launch_one(const target& t, const decode_problem& p, gpu_stream_t stream, bool launch) {
  using G = geometry<Family, C, S, L, M>;
  launch_shape ls = shape_of<G>(t.compute_units, p);
  const int limit = t.max_smem_per_block > 0 ? t.max_smem_per_block : kDefaultSmemLimit;
  if (ls.smem > size_t(limit))
    return set_error(DK_STATUS_UNSUPPORTED,
                     "decode: needs %zu bytes of shared memory per block, the device allows %d",
                     ls.smem, limit);
  if (!launch || ls.blocks == 0) return DK_STATUS_SUCCESS;
  if (ls.blocks > 0x7fffffff)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: %lld blocks exceed the grid limit",
                     static_cast<long long>(ls.blocks));
  auto* kernel = &decode_kernel<Family, C, S, L, M>;
  // The shared-memory limit this instance was raised to, per device: the
  // attribute call costs host time on every eager launch otherwise. A launch
  // that fails after skipping it (the device was reset since) raises it again.
  static std::atomic<int> raised[kCachedDevices] = {};
  const bool big = ls.smem > size_t(kDefaultSmemLimit);
  const bool cached = t.device >= 0 && t.device < kCachedDevices;
  auto raise = [&]() -> dk_status {
    const gpu_error_t e = gpu_set_max_dynamic_smem(kernel, int(ls.smem));
    if (e != gpu_success)
      return set_error(DK_STATUS_DEVICE_ERROR, "decode: raising shared memory to %zu bytes failed: %s",
                       ls.smem, gpu_error_string(e));
    if (cached) {
      int seen = raised[t.device].load();
      while (seen < int(ls.smem) && !raised[t.device].compare_exchange_weak(seen, int(ls.smem))) {
      }
    }
    return DK_STATUS_SUCCESS;
  };
  const bool skipped = big && cached && raised[t.device].load() >= int(ls.smem);
  if (big && !skipped)
    if (const dk_status s = raise(); s != DK_STATUS_SUCCESS) return s;
  if constexpr (G::rotated && late_prefetch_blocks<G>() > 0) {
    if (p.programmatic_launch && ls.lp.prefetch_end == 0)  // not every block already (shape_of)
      if (const dk_status s = set_late_prefetch<G>(kernel, t, &ls); s != DK_STATUS_SUCCESS) return s;
  }
  static gpu_kernel_handle handles[kCachedDevices];  // this instance's driver handles (gpu_launch)
  gpu_kernel_handle* const handle = cached ? &handles[t.device] : nullptr;
  gpu_error_t e = gpu_launch(kernel, unsigned(ls.blocks), unsigned(ls.threads), ls.smem, stream,
                             p.programmatic_launch, ls.lp, handle);
  if (e != gpu_success && skipped) {
    if (const dk_status s = raise(); s != DK_STATUS_SUCCESS) return s;
    e = gpu_launch(kernel, unsigned(ls.blocks), unsigned(ls.threads), ls.smem, stream, p.programmatic_launch,
                   ls.lp, handle);
  }
  if (e != gpu_success)
    return set_error(DK_STATUS_DEVICE_ERROR, "decode: kernel launch failed: %s (%s)",
                     gpu_error_string(e), gpu_error_name(e));
  return DK_STATUS_SUCCESS;
}

// What a table slot holds: the launcher and its name's variant (kNames' second index).
struct entry {
  launch_fn fn;
  int variant;  // 0 general, 1 t1 / t1_small(_bf16io), 2 t1_pipe, 3 t1_bf16io, 4 t1_bf16io_smem(_wide),
                // 5 tn_bf16io(_mid), tn_vlast, 6 t1_(small_)per_key, 7 t1_per_key_smem, 8 tn_per_key,
                // 9 tn_mma, 10 tn_mma_per_key, 11 tn_mma_chunked, 12 tn_mma_per_key_chunked
};
template <int F, decode_class C, dtype S, state_layout L, decode_mode M>
constexpr entry entry_of() {
  constexpr int variant = M == decode_mode::general                                           ? 0
                          : M == decode_mode::t1_pipe                                         ? 2
                          : M == decode_mode::t1_bf16io                                       ? 3
                          : M == decode_mode::t1_bf16io_smem                                  ? 4
                          : M == decode_mode::t1_bf16io_smem_wide                             ? 4
                          : M == decode_mode::tn_bf16io || M == decode_mode::tn_bf16io_mid ||
                                    M == decode_mode::tn_vlast
                              ? 5
                          : M == decode_mode::t1_per_key || M == decode_mode::t1_small_per_key ? 6
                          : M == decode_mode::t1_per_key_smem                                 ? 7
                          : M == decode_mode::tn_per_key                                      ? 8
                          : M == decode_mode::tn_mma                                          ? 9
                          : M == decode_mode::tn_mma_per_key                                  ? 10
                          : M == decode_mode::tn_mma_chunked                                  ? 11
                          : M == decode_mode::tn_mma_per_key_chunked                          ? 12
                                                                                              : 1;
  return {&launch_one<F, C, S, L, M>, variant};
}

// Whether the family's bf16-I/O mode takes this instance (else it runs t1).
template <int F, decode_class C, dtype S, state_layout L, decode_mode M>
constexpr bool takes_bf16io() {
  if constexpr (!tuning::decode_tuning<F>::t1_bf16io) return false;
  // V-last: the t1 body with the activation dtypes fixed at compile time, for
  // fp32 state only (16-bit state V-last B=32 was slower with it: 25.8 -> 26.3 us).
  else if constexpr (L != state_layout::k_last) return S == dtype::f32;
  else return bf16io_fits<geometry<F, C, S, L, M>>();
}
template <int F, decode_class C, dtype S, state_layout L, decode_mode M>
constexpr entry instance();
// Mode M's own instance where the table takes it (`Takes`: the rule mode_for
// follows too), else the instance of mode Else: the general kernel where
// mode_for never picks M, or the mode M stands in for (t1_bf16io for t1_bf16io_smem ...).
template <int F, decode_class C, dtype S, state_layout L, decode_mode M, bool Takes,
          decode_mode Else = decode_mode::general>
constexpr entry own_or() {
  if constexpr (Takes) return entry_of<F, C, S, L, M>();
  else return instance<F, C, S, L, Else>();
}
// The instance that runs mode M: t1 modes exist for k128/k64 only, t1_small
// is the t1 instance itself when the table gives both one shape, and the
// bf16-I/O mode falls back to t1 where the family, layout or tile does not take it.
template <int F, decode_class C, dtype S, state_layout L, decode_mode M>
constexpr entry instance() {
  using table = tuning::decode_tuning<F>;
  constexpr bool k_last = L == state_layout::k_last;
  // tn_mma_chunked takes every T past tn_mma's: the scalar-gate T > 1 FMA instances are not built.
  constexpr bool chunks_cover = tuning::tn_mma_chunked_covers<table>(k_last, kMaxDecodeTokens);
  if constexpr (M == decode_mode::general || C == decode_class::generic) {
    return entry_of<F, C, S, L, decode_mode::general>();
  } else if constexpr (M == decode_mode::tn_bf16io) {  // K-last state where the table sets tn_bf16io
    return own_or<F, C, S, L, M, tuning::tn_bf16io_takes<table>(k_last) && !chunks_cover>();
  } else if constexpr (M == decode_mode::tn_mma) {  // K-last state; V-last where the table says
    return own_or<F, C, S, L, M, tuning::tn_mma_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_mma_per_key) {
    return own_or<F, C, S, L, M, tuning::tn_mma_per_key_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_mma_chunked) {
    return own_or<F, C, S, L, M, tuning::tn_mma_chunked_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_mma_per_key_chunked) {
    return own_or<F, C, S, L, M, tuning::tn_mma_per_key_chunked_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_per_key) {  // K-last: the tn_bf16io body; V-last: the tn_vlast body
    constexpr bool per_key_chunks_cover =
        tuning::tn_mma_per_key_chunked_covers<table>(k_last, S == dtype::f32 ? 4 : 2, kMaxDecodeTokens);
    return own_or<F, C, S, L, M, tuning::tn_per_key_takes<table>(k_last) && !per_key_chunks_cover>();
  } else if constexpr (M == decode_mode::t1_per_key) {
    return own_or<F, C, S, L, M, tuning::t1_per_key_takes<table>()>();
  } else if constexpr (M == decode_mode::t1_small_per_key) {
    // mode_for picks it only where t1_small_per_key_takes.
    return own_or<F, C, S, L, M, tuning::t1_small_per_key_takes<table>(k_last, S == dtype::f32 ? 4 : 2),
                  decode_mode::t1_per_key>();
  } else if constexpr (M == decode_mode::t1_per_key_smem) {
    // mode_for picks it only where t1_per_key_smem_takes: K-last with a fitting
    // tile, V-last where the scalar gate's V-last smem body is on.
    constexpr bool takes = tuning::t1_per_key_smem_takes<table>(k_last) &&
                           (k_last ? bf16io_fits<geometry<F, C, S, L, M>>()
                                   : tuning::t1_bf16io_smem_vlast_min_heads_of<table>(S == dtype::f32 ? 4 : 2) > 0);
    return own_or<F, C, S, L, M, takes, decode_mode::t1_per_key>();
  } else if constexpr (M == decode_mode::tn_vlast) {  // V-last state where the table sets tn_vlast
    return own_or<F, C, S, L, M, tuning::tn_vlast_takes<table>(k_last) && !chunks_cover>();
  } else if constexpr (M == decode_mode::tn_bf16io_mid) {
    // mode_for picks it only where the table sets the mid grids' window.
    return own_or<F, C, S, L, M, tuning::tn_bf16io_mid_takes<table>(k_last) && !chunks_cover,
                  decode_mode::tn_bf16io>();
  } else if constexpr (M == decode_mode::t1_bf16io_smem_wide) {
    // mode_for picks it only for K-last fp32 state where the table sets
    // t1_bf16io_smem_min_heads_per_sm.
    constexpr bool takes = table::t1_bf16io_smem_min_heads_per_sm > 0 && S == dtype::f32 && k_last &&
                           takes_bf16io<F, C, S, L, decode_mode::t1_bf16io>();
    return own_or<F, C, S, L, M, takes, decode_mode::t1_bf16io_smem>();
  } else if constexpr (M == decode_mode::t1_bf16io_smem) {
    // mode_for picks it only where the table enables it: K-last state (16-bit
    // state where the bf16-I/O tile fits, which takes_bf16io checks too), and
    // V-last state.
    constexpr bool takes = L == state_layout::k_last
                               ? tuning::t1_bf16io_smem_on<table>(S == dtype::f32) &&
                                     takes_bf16io<F, C, S, L, decode_mode::t1_bf16io>()
                           : tuning::t1_bf16io_smem_vlast_min_heads_of<table>(S == dtype::f32 ? 4 : 2) > 0 &&
                                 (S != dtype::f32 || takes_bf16io<F, C, S, L, decode_mode::t1_bf16io>());
    return own_or<F, C, S, L, M, takes, decode_mode::t1_bf16io>();
  } else if constexpr (M == decode_mode::t1_bf16io) {
    return own_or<F, C, S, L, M, takes_bf16io<F, C, S, L, M>(), decode_mode::t1>();
  } else if constexpr (M == decode_mode::t1_pipe) {
    // mode_for picks it only where the family's table enables it.
    constexpr bool takes = tuning::t1_pipe_min_heads_of<table>(k_last, S == dtype::f32 ? 4 : 2) > 0;
    return own_or<F, C, S, L, M, takes, decode_mode::t1>();
  } else if constexpr (M == decode_mode::t1_small_bf16io) {
    // mode_for picks it only where t1_small_bf16io_takes.
    return own_or<F, C, S, L, M, tuning::t1_small_bf16io_takes<table>(k_last, S == dtype::f32 ? 4 : 2),
                  decode_mode::t1_small>();
  } else if constexpr (M == decode_mode::t1_small) {
    constexpr decode_shape a = geometry<F, C, S, L, decode_mode::t1>::shape;
    constexpr decode_shape b = geometry<F, C, S, L, decode_mode::t1_small>::shape;
    constexpr bool same = a.lanes_k == b.lanes_k && a.vec_chunks == b.vec_chunks && a.rows == b.rows &&
                          a.warps_k == b.warps_k && a.max_warps_v == b.max_warps_v;
    return own_or<F, C, S, L, M, !same, decode_mode::t1>();
  } else {
    return entry_of<F, C, S, L, decode_mode::t1>();
  }
}

// [mode][class] for one family, state dtype and layout.
template <int F, dtype S, state_layout L>
inline constexpr entry kLaunch[tuning::kDecodeModes][3] = {
#define DK_MODE(M)                                                                       \
  {                                                                                      \
    instance<F, decode_class::k128, S, L, M>(), instance<F, decode_class::k64, S, L, M>(), \
        instance<F, decode_class::generic, S, L, M>()                                    \
  }
    DK_MODE(decode_mode::general), DK_MODE(decode_mode::t1), DK_MODE(decode_mode::t1_small),
    DK_MODE(decode_mode::t1_pipe), DK_MODE(decode_mode::t1_bf16io), DK_MODE(decode_mode::t1_bf16io_smem),
    DK_MODE(decode_mode::t1_bf16io_smem_wide), DK_MODE(decode_mode::tn_bf16io),
    DK_MODE(decode_mode::t1_small_bf16io), DK_MODE(decode_mode::tn_bf16io_mid), DK_MODE(decode_mode::tn_vlast),
    DK_MODE(decode_mode::t1_per_key), DK_MODE(decode_mode::t1_per_key_smem), DK_MODE(decode_mode::tn_per_key),
    DK_MODE(decode_mode::t1_small_per_key), DK_MODE(decode_mode::tn_mma), DK_MODE(decode_mode::tn_mma_per_key),
    DK_MODE(decode_mode::tn_mma_chunked), DK_MODE(decode_mode::tn_mma_per_key_chunked)
#undef DK_MODE
};

// The slot of mode m and class c for state dtype S and layout L in the family
// kFamilies[family_index]. Instantiated only in decode_instances_*.cu (one
// (S, L) each, with all its kernels); decode.cu calls them.
template <dtype S, state_layout L>
entry launch_entry(int family_index, decode_mode m, decode_class c) {
  const int mi = int(m), ci = int(c);
#if DK_VENDOR_HIP
  (void)family_index;
  return kLaunch<906, S, L>[mi][ci];
#else
  switch (kFamilies[family_index]) {
    case 80: return kLaunch<80, S, L>[mi][ci];
    case 90: return kLaunch<90, S, L>[mi][ci];
    case 100: return kLaunch<100, S, L>[mi][ci];
    default: return kLaunch<120, S, L>[mi][ci];
  }
#endif
}
// One (S, L)'s launch_entry: declared extern here, instantiated by its file.
#define DK_DECODE_INSTANCES(S, L) entry launch_entry<S, L>(int family_index, decode_mode m, decode_class c)
extern template DK_DECODE_INSTANCES(dtype::f32, state_layout::k_last);
extern template DK_DECODE_INSTANCES(dtype::f32, state_layout::v_last);
extern template DK_DECODE_INSTANCES(dtype::bf16, state_layout::k_last);
extern template DK_DECODE_INSTANCES(dtype::bf16, state_layout::v_last);
extern template DK_DECODE_INSTANCES(dtype::f16, state_layout::k_last);
extern template DK_DECODE_INSTANCES(dtype::f16, state_layout::v_last);

}  // namespace dk::gpu::decode_detail
