// Host entry points of the decode kernel: checks, kernel choice, launch.
#include "decode_kernel.cuh"
#include "dk/hal.hpp"
#include "launch.hpp"

namespace dk::gpu {
namespace decode_detail {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kMaxTokens = 16;
constexpr int kDefaultSmemLimit = 48 * 1024;

// Launches one instance, or (smem_needed != nullptr) only reports the dynamic
// shared memory its blocks would take.
using launch_fn = dk_status (*)(const target&, const decode_problem&, gpu_stream_t,
                                size_t* smem_needed);

decode_class class_of(const decode_problem& p) {
  if (p.dk == 128) return decode_class::k128;
  if (p.dk == 64) return decode_class::k64;
  return decode_class::generic;
}

int state_index(dtype t) { return t == dtype::f32 ? 0 : t == dtype::bf16 ? 1 : 2; }

// Names: "<vendor>:<arch>:decode_<class>[_vlast]".
#define DK_DECODE_NAMES(prefix)                                                          \
  {                                                                                      \
    {prefix "decode_kv128", prefix "decode_kv64", prefix "decode_generic"}, {            \
      prefix "decode_kv128_vlast", prefix "decode_kv64_vlast", prefix "decode_generic_vlast" \
    }                                                                                    \
  }
#if DK_VENDOR_HIP
constexpr int kFamilies[] = {906};
const char* const kNames[][2][3] = {DK_DECODE_NAMES("hip:gfx906:")};
#else
constexpr int kFamilies[] = {80, 90, 100, 120};
const char* const kNames[][2][3] = {DK_DECODE_NAMES("cuda:sm80:"), DK_DECODE_NAMES("cuda:sm90a:"),
                                    DK_DECODE_NAMES("cuda:sm100a:"),
                                    DK_DECODE_NAMES("cuda:sm120a:")};
#endif
#undef DK_DECODE_NAMES
constexpr int kNumFamilies = int(sizeof(kFamilies) / sizeof(kFamilies[0]));

int family_slot(const target& t) {
  const int f = tuning::family_of(t.arch, DK_VENDOR_HIP != 0);
  for (int i = 0; i < kNumFamilies; ++i)
    if (kFamilies[i] == f) return i;
  return -1;
}

// Warps along V: as many as the shape allows (and V needs), halved while the
// grid would give fewer than min_blocks_per_sm blocks to each SM.
template <class G, int Family>
int warps_along_v(const target& t, const decode_problem& p) {
  int w = G::shape.max_warps_v;
  while (w > 1 && (w / 2) * G::v_per_warp >= p.dv) w /= 2;
  const int64_t heads = int64_t(p.batch) * p.hv;
  const int64_t want = int64_t(tuning::decode_tuning<Family>::min_blocks_per_sm) * t.compute_units;
  while (w > 1) {
    const int tile = w * G::v_per_warp;
    if (heads * ((p.dv + tile - 1) / tile) >= want) break;
    w /= 2;
  }
  return w;
}

template <class G>
size_t smem_bytes(const decode_problem& p, int v_tile) {
  const bool per_key = p.r.gate == gate_kind::per_key;
  return sizeof(float) * size_t(make_smem_layout(p.tokens, G::k_cover, per_key, v_tile, G::warps_k).total);
}

template <int Family, decode_class C, dtype S, state_layout L>
dk_status launch_one(const target& t, const decode_problem& p, gpu_stream_t stream,
                     size_t* smem_needed) {
  using G = geometry<Family, C, S, L>;
  const int wv = warps_along_v<G, Family>(t, p);
  launch_params lp;
  lp.p = p;
  lp.v_tile = wv * G::v_per_warp;
  lp.v_shift = 0;
  while ((1 << lp.v_shift) < lp.v_tile) ++lp.v_shift;
  lp.v_tiles = (p.dv + lp.v_tile - 1) / lp.v_tile;
  const size_t smem = smem_bytes<G>(p, lp.v_tile);
  if (smem_needed) {
    *smem_needed = smem;
    return DK_STATUS_SUCCESS;
  }
  const int64_t blocks = int64_t(p.batch) * p.hv * lp.v_tiles;
  if (blocks == 0) return DK_STATUS_SUCCESS;
  if (blocks > 0x7fffffff)
    return set_error(DK_STATUS_UNSUPPORTED, "decode: %lld blocks exceed the grid limit",
                     static_cast<long long>(blocks));
  auto* kernel = &decode_kernel<Family, C, S, L>;
  if (smem > size_t(kDefaultSmemLimit)) {
    const gpu_error_t e = gpu_set_max_dynamic_smem(kernel, int(smem));
    if (e != gpu_success)
      return set_error(DK_STATUS_DEVICE_ERROR, "decode: raising shared memory to %zu bytes failed: %s",
                       smem, gpu_error_string(e));
  }
  const int threads = kWarpSize * G::warps_k * wv;
  kernel<<<unsigned(blocks), unsigned(threads), smem, stream>>>(lp);
  const gpu_error_t e = gpu_last_error();
  if (e != gpu_success)
    return set_error(DK_STATUS_DEVICE_ERROR, "decode: kernel launch failed: %s (%s)",
                     gpu_error_string(e), gpu_error_name(e));
  return DK_STATUS_SUCCESS;
}

// [class][state dtype][layout] for one family.
template <int F>
constexpr launch_fn kLaunch[3][3][2] = {
#define DK_ROW(C)                                                                          \
  {{&launch_one<F, C, dtype::f32, state_layout::k_last>,                                   \
    &launch_one<F, C, dtype::f32, state_layout::v_last>},                                  \
   {&launch_one<F, C, dtype::bf16, state_layout::k_last>,                                  \
    &launch_one<F, C, dtype::bf16, state_layout::v_last>},                                 \
   {&launch_one<F, C, dtype::f16, state_layout::k_last>,                                   \
    &launch_one<F, C, dtype::f16, state_layout::v_last>}}
    DK_ROW(decode_class::k128), DK_ROW(decode_class::k64), DK_ROW(decode_class::generic)
#undef DK_ROW
};

launch_fn pick(int family_index, decode_class c, dtype s, state_layout l) {
  const int ci = int(c), si = state_index(s), li = l == state_layout::k_last ? 0 : 1;
#if DK_VENDOR_HIP
  (void)family_index;
  return kLaunch<906>[ci][si][li];
#else
  switch (kFamilies[family_index]) {
    case 80: return kLaunch<80>[ci][si][li];
    case 90: return kLaunch<90>[ci][si][li];
    case 100: return kLaunch<100>[ci][si][li];
    default: return kLaunch<120>[ci][si][li];
  }
#endif
}

}  // namespace
}  // namespace decode_detail

dk_status decode_query(const target& t, const decode_problem& p, const char** out_name) {
  using namespace decode_detail;
  if (out_name) *out_name = nullptr;
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
  size_t smem = 0;
  pick(fam, class_of(p), p.pool.type, p.r.layout)(t, p, nullptr, &smem);
  const int limit = t.max_smem_per_block > 0 ? t.max_smem_per_block : kDefaultSmemLimit;
  if (smem > size_t(limit))
    return set_error(DK_STATUS_UNSUPPORTED,
                     "decode: needs %zu bytes of shared memory per block, the device allows %d",
                     smem, limit);
  if (out_name)
    *out_name = kNames[fam][p.r.layout == state_layout::k_last ? 0 : 1][int(class_of(p))];
  return DK_STATUS_SUCCESS;
}

dk_status decode_launch(const target& t, const decode_problem& p, void* stream) {
  using namespace decode_detail;
  const dk_status st = decode_query(t, p, nullptr);
  if (st != DK_STATUS_SUCCESS) return st;
  const launch_fn fn = pick(family_slot(t), class_of(p), p.pool.type, p.r.layout);
  return fn(t, p, static_cast<gpu_stream_t>(stream), nullptr);
}

}  // namespace dk::gpu
