// Host entry points of the decode kernel: checks, kernel choice, launch.
#include <atomic>

#include "decode_kernel.cuh"
#include "dk/hal.hpp"
#include "launch.hpp"

namespace dk::gpu {
namespace decode_detail {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kMaxTokens = 16;
constexpr int kDefaultSmemLimit = 48 * 1024;
constexpr int kCachedDevices = 16;  // devices whose raised shared-memory limits are remembered
#if DK_VENDOR_CUDA
// dk_bench's bare launch (bench/timer_cuda.cpp, the reference for host time per
// call) passes a parameter block of this size: change both together.
static_assert(sizeof(launch_params) == 688, "update kBareParamBytes in bench/timer_cuda.cpp");
#endif

// Checks one instance's launch shape against the device (its shared memory)
// and, when `launch`, launches it: the shape is computed once per call.
using launch_fn = dk_status (*)(const target&, const decode_problem&, gpu_stream_t, bool launch);

decode_class class_of(const decode_problem& p) {
  if (p.dk == 128) return decode_class::k128;
  if (p.dk == 64) return decode_class::k64;
  return decode_class::generic;
}

int state_index(dtype t) { return t == dtype::f32 ? 0 : t == dtype::bf16 ? 1 : 2; }

// Names: "<vendor>:<arch>:decode_<class>[_vlast][_t1|_t1pipe|_t1bf16|_t1bf16smem|_tnbf16|_t1perkey|_t1perkeysmem|
// _tnperkey|_tnmma|_tnmmaperkey|_tnmmachunk|_tnmmaperkeychunk]".
#define DK_DECODE_NAMES3(prefix, suffix)                                                 \
  {                                                                                      \
    {prefix "decode_kv128" suffix, prefix "decode_kv64" suffix, prefix "decode_generic" suffix}, { \
      prefix "decode_kv128_vlast" suffix, prefix "decode_kv64_vlast" suffix,             \
          prefix "decode_generic_vlast" suffix                                           \
    }                                                                                    \
  }
#define DK_DECODE_NAMES(prefix)                                                                  \
  {                                                                                              \
    DK_DECODE_NAMES3(prefix, ""), DK_DECODE_NAMES3(prefix, "_t1"), DK_DECODE_NAMES3(prefix, "_t1pipe"), \
        DK_DECODE_NAMES3(prefix, "_t1bf16"), DK_DECODE_NAMES3(prefix, "_t1bf16smem"),            \
        DK_DECODE_NAMES3(prefix, "_tnbf16"), DK_DECODE_NAMES3(prefix, "_t1perkey"),              \
        DK_DECODE_NAMES3(prefix, "_t1perkeysmem"), DK_DECODE_NAMES3(prefix, "_tnperkey"),        \
        DK_DECODE_NAMES3(prefix, "_tnmma"), DK_DECODE_NAMES3(prefix, "_tnmmaperkey"),            \
        DK_DECODE_NAMES3(prefix, "_tnmmachunk"), DK_DECODE_NAMES3(prefix, "_tnmmaperkeychunk")      \
  }
#if DK_VENDOR_HIP
constexpr int kFamilies[] = {906};
const char* const kNames[][13][2][3] = {DK_DECODE_NAMES("hip:gfx906:")};
#else
constexpr int kFamilies[] = {80, 90, 100, 120};
const char* const kNames[][13][2][3] = {DK_DECODE_NAMES("cuda:sm80:"), DK_DECODE_NAMES("cuda:sm90a:"),
                                       DK_DECODE_NAMES("cuda:sm100a:"),
                                       DK_DECODE_NAMES("cuda:sm120a:")};
#endif
#undef DK_DECODE_NAMES
#undef DK_DECODE_NAMES3
constexpr int kNumFamilies = int(sizeof(kFamilies) / sizeof(kFamilies[0]));

int family_slot(const target& t) {
  const int f = tuning::family_of(t.arch, DK_VENDOR_HIP != 0);
  for (int i = 0; i < kNumFamilies; ++i)
    if (kFamilies[i] == f) return i;
  return -1;
}

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
// Mode M's own instance where the table takes it (`Takes`: the rule mode_for
// follows too), else the general kernel (never picked for M there).
template <int F, decode_class C, dtype S, state_layout L, decode_mode M, bool Takes>
constexpr entry own_or_general() {
  if constexpr (Takes) return entry_of<F, C, S, L, M>();
  else return entry_of<F, C, S, L, decode_mode::general>();
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
    return own_or_general<F, C, S, L, M, tuning::tn_bf16io_takes<table>(k_last) && !chunks_cover>();
  } else if constexpr (M == decode_mode::tn_mma) {  // K-last state; V-last where the table says
    return own_or_general<F, C, S, L, M, tuning::tn_mma_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_mma_per_key) {
    return own_or_general<F, C, S, L, M, tuning::tn_mma_per_key_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_mma_chunked) {
    return own_or_general<F, C, S, L, M, tuning::tn_mma_chunked_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_mma_per_key_chunked) {
    return own_or_general<F, C, S, L, M, tuning::tn_mma_per_key_chunked_takes<table>(k_last)>();
  } else if constexpr (M == decode_mode::tn_per_key) {  // K-last: the tn_bf16io body; V-last: the tn_vlast body
    constexpr bool per_key_chunks_cover =
        tuning::tn_mma_per_key_chunked_covers<table>(k_last, S == dtype::f32 ? 4 : 2, kMaxDecodeTokens);
    return own_or_general<F, C, S, L, M, tuning::tn_per_key_takes<table>(k_last) && !per_key_chunks_cover>();
  } else if constexpr (M == decode_mode::t1_per_key) {
    return own_or_general<F, C, S, L, M, tuning::t1_per_key_takes<table>()>();
  } else if constexpr (M == decode_mode::t1_small_per_key) {
    // mode_for picks it only where t1_small_per_key_takes.
    if constexpr (tuning::t1_small_per_key_takes<tuning::decode_tuning<F>>(L == state_layout::k_last,
                                                                         S == dtype::f32 ? 4 : 2))
      return entry_of<F, C, S, L, decode_mode::t1_small_per_key>();
    else
      return instance<F, C, S, L, decode_mode::t1_per_key>();
  } else if constexpr (M == decode_mode::t1_per_key_smem) {
    // mode_for picks it only where t1_per_key_smem_takes: K-last with a fitting
    // tile, V-last where the scalar gate's V-last smem body is on.
    if constexpr (!tuning::t1_per_key_smem_takes<table>(L == state_layout::k_last)) {
      return instance<F, C, S, L, decode_mode::t1_per_key>();
    } else if constexpr (L == state_layout::k_last) {
      if constexpr (bf16io_fits<geometry<F, C, S, L, decode_mode::t1_per_key_smem>>())
        return entry_of<F, C, S, L, decode_mode::t1_per_key_smem>();
      else
        return instance<F, C, S, L, decode_mode::t1_per_key>();
    } else if constexpr (tuning::t1_bf16io_smem_vlast_min_heads_of<table>(S == dtype::f32 ? 4 : 2) > 0) {
      return entry_of<F, C, S, L, decode_mode::t1_per_key_smem>();
    } else {
      return instance<F, C, S, L, decode_mode::t1_per_key>();
    }
  } else if constexpr (M == decode_mode::tn_vlast) {  // V-last state where the table sets tn_vlast
    return own_or_general<F, C, S, L, M, tuning::tn_vlast_takes<table>(k_last) && !chunks_cover>();
  } else if constexpr (M == decode_mode::tn_bf16io_mid) {
    // mode_for picks it only where the table sets the mid grids' window.
    if constexpr (tuning::tn_bf16io_mid_takes<table>(k_last) && !chunks_cover)
      return entry_of<F, C, S, L, decode_mode::tn_bf16io_mid>();
    else
      return instance<F, C, S, L, decode_mode::tn_bf16io>();
  } else if constexpr (M == decode_mode::t1_bf16io_smem_wide) {
    // mode_for picks it only for K-last fp32 state where the table sets
    // t1_bf16io_smem_min_heads_per_sm.
    if constexpr (tuning::decode_tuning<F>::t1_bf16io_smem_min_heads_per_sm > 0 && S == dtype::f32 &&
                  L == state_layout::k_last && takes_bf16io<F, C, S, L, decode_mode::t1_bf16io>())
      return entry_of<F, C, S, L, decode_mode::t1_bf16io_smem_wide>();
    else
      return instance<F, C, S, L, decode_mode::t1_bf16io_smem>();
  } else if constexpr (M == decode_mode::t1_bf16io_smem) {
    // mode_for picks it only where the table enables it: K-last state (16-bit
    // state where the bf16-I/O tile fits, which takes_bf16io checks too), and
    // V-last state.
    constexpr bool takes = L == state_layout::k_last
                               ? tuning::t1_bf16io_smem_on<table>(S == dtype::f32) &&
                                     takes_bf16io<F, C, S, L, decode_mode::t1_bf16io>()
                           : tuning::t1_bf16io_smem_vlast_min_heads_of<table>(S == dtype::f32 ? 4 : 2) > 0 &&
                                 (S != dtype::f32 || takes_bf16io<F, C, S, L, decode_mode::t1_bf16io>());
    if constexpr (takes)
      return entry_of<F, C, S, L, decode_mode::t1_bf16io_smem>();
    else
      return instance<F, C, S, L, decode_mode::t1_bf16io>();
  } else if constexpr (M == decode_mode::t1_bf16io) {
    if constexpr (takes_bf16io<F, C, S, L, M>())
      return entry_of<F, C, S, L, decode_mode::t1_bf16io>();
    else
      return instance<F, C, S, L, decode_mode::t1>();
  } else if constexpr (M == decode_mode::t1_pipe) {
    // mode_for picks it only where the family's table enables it.
    if constexpr (tuning::t1_pipe_min_heads_of<tuning::decode_tuning<F>>(L == state_layout::k_last,
                                                                        S == dtype::f32 ? 4 : 2) > 0)
      return entry_of<F, C, S, L, decode_mode::t1_pipe>();
    else
      return entry_of<F, C, S, L, decode_mode::t1>();
  } else if constexpr (M == decode_mode::t1_small_bf16io) {
    // mode_for picks it only where t1_small_bf16io_takes.
    if constexpr (tuning::t1_small_bf16io_takes<tuning::decode_tuning<F>>(L == state_layout::k_last,
                                                                        S == dtype::f32 ? 4 : 2))
      return entry_of<F, C, S, L, decode_mode::t1_small_bf16io>();
    else
      return instance<F, C, S, L, decode_mode::t1_small>();
  } else if constexpr (M == decode_mode::t1_small) {
    constexpr decode_shape a = geometry<F, C, S, L, decode_mode::t1>::shape;
    constexpr decode_shape b = geometry<F, C, S, L, decode_mode::t1_small>::shape;
    if constexpr (a.lanes_k == b.lanes_k && a.vec_chunks == b.vec_chunks && a.rows == b.rows &&
                  a.warps_k == b.warps_k && a.max_warps_v == b.max_warps_v)
      return entry_of<F, C, S, L, decode_mode::t1>();
    else
      return entry_of<F, C, S, L, decode_mode::t1_small>();
  } else {
    return entry_of<F, C, S, L, decode_mode::t1>();
  }
}

// [mode][class][state dtype][layout] for one family.
template <int F>
constexpr entry kLaunch[tuning::kDecodeModes][3][3][2] = {
#define DK_ROW(M, C)                                                                      \
  {{instance<F, C, dtype::f32, state_layout::k_last, M>(),                                \
    instance<F, C, dtype::f32, state_layout::v_last, M>()},                               \
   {instance<F, C, dtype::bf16, state_layout::k_last, M>(),                               \
    instance<F, C, dtype::bf16, state_layout::v_last, M>()},                              \
   {instance<F, C, dtype::f16, state_layout::k_last, M>(),                                \
    instance<F, C, dtype::f16, state_layout::v_last, M>()}}
#define DK_MODE(M) \
  { DK_ROW(M, decode_class::k128), DK_ROW(M, decode_class::k64), DK_ROW(M, decode_class::generic) }
    DK_MODE(decode_mode::general), DK_MODE(decode_mode::t1), DK_MODE(decode_mode::t1_small),
    DK_MODE(decode_mode::t1_pipe), DK_MODE(decode_mode::t1_bf16io), DK_MODE(decode_mode::t1_bf16io_smem),
    DK_MODE(decode_mode::t1_bf16io_smem_wide), DK_MODE(decode_mode::tn_bf16io),
    DK_MODE(decode_mode::t1_small_bf16io), DK_MODE(decode_mode::tn_bf16io_mid), DK_MODE(decode_mode::tn_vlast),
    DK_MODE(decode_mode::t1_per_key), DK_MODE(decode_mode::t1_per_key_smem), DK_MODE(decode_mode::tn_per_key),
    DK_MODE(decode_mode::t1_small_per_key), DK_MODE(decode_mode::tn_mma), DK_MODE(decode_mode::tn_mma_per_key),
    DK_MODE(decode_mode::tn_mma_chunked), DK_MODE(decode_mode::tn_mma_per_key_chunked)
#undef DK_MODE
#undef DK_ROW
};

struct choice {
  launch_fn fn;
  int variant;
};

choice pick(int family_index, const target& t, const decode_problem& p) {
  const decode_class c = class_of(p);
  const int ci = int(c), si = state_index(p.pool.type), li = p.r.layout == state_layout::k_last ? 0 : 1;
#if DK_VENDOR_HIP
  (void)family_index;
  const entry e = kLaunch<906>[int(mode_for<906>(t.compute_units, p, c))][ci][si][li];
  return {e.fn, e.variant};
#else
  entry e;
  switch (kFamilies[family_index]) {
    case 80: e = kLaunch<80>[int(mode_for<80>(t.compute_units, p, c))][ci][si][li]; break;
    case 90: e = kLaunch<90>[int(mode_for<90>(t.compute_units, p, c))][ci][si][li]; break;
    case 100: e = kLaunch<100>[int(mode_for<100>(t.compute_units, p, c))][ci][si][li]; break;
    default: e = kLaunch<120>[int(mode_for<120>(t.compute_units, p, c))][ci][si][li]; break;
  }
  return {e.fn, e.variant};
#endif
}

// Checks that the backend can run `p` and picks its kernel (once per call);
// the chosen launcher checks the shape's shared memory.
dk_status plan(const target& t, const decode_problem& p, int* out_family, choice* out) {
  const int fam = family_slot(t);
  if (fam < 0)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: no %s decode kernels for arch %d",
                     kVendorName, t.arch);
  if (p.dk % 16 != 0 || p.dv % 16 != 0 || p.dk < 16 || p.dv < 16 || p.dk > kMaxHeadDim ||
      p.dv > kMaxHeadDim)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "decode: head dims K=%d, V=%d: the %s backend supports multiples of 16 "
                     "from 16 to %d",
                     p.dk, p.dv, kVendorName, kMaxHeadDim);
  if (p.tokens < 1 || p.tokens > kMaxTokens)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: T=%d tokens per sequence; supported 1..%d",
                     p.tokens, kMaxTokens);
  if (p.pool.type != dtype::f32 && p.pool.type != dtype::bf16 && p.pool.type != dtype::f16)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: state_pool dtype must be fp32, bf16 or fp16");
  if (p.pool.stride[3] != 1)
    return set_error(DK_STATUS_UNSUPPORTED,
                     "decode: state_pool innermost dim must be contiguous (stride %lld)",
                     static_cast<long long>(p.pool.stride[3]));
  if (p.hq <= 0 || p.hv % p.hq != 0)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: HV=%d is not a multiple of HQ=%d", p.hv, p.hq);
  *out_family = fam;
  *out = pick(fam, t, p);
  return DK_STATUS_SUCCESS;
}

}  // namespace
}  // namespace decode_detail

dk_status decode_query(const target& t, const decode_problem& p, const char** out_name) {
  using namespace decode_detail;
  if (out_name) *out_name = nullptr;
  int fam = 0;
  choice ch{};
  if (const dk_status st = plan(t, p, &fam, &ch)) return st;
  if (const dk_status st = ch.fn(t, p, nullptr, false)) return st;
  if (out_name)
    *out_name = kNames[fam][ch.variant][p.r.layout == state_layout::k_last ? 0 : 1][int(class_of(p))];
  return DK_STATUS_SUCCESS;
}

dk_status decode_launch(const target& t, const decode_problem& p, void* stream) {
  using namespace decode_detail;
  int fam = 0;
  choice ch{};
  if (const dk_status st = plan(t, p, &fam, &ch)) return st;
  return ch.fn(t, p, static_cast<gpu_stream_t>(stream), true);
}

}  // namespace dk::gpu
