#include "workloads.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "json.hpp"

namespace dkb {
namespace {

constexpr elem kAct = elem::bf16;   // q, k, v, out
constexpr elem kGate = elem::bf16;  // a (raw gate) and b (beta logit): projection outputs
constexpr elem kParam = elem::f32;  // A_log, dt_bias
constexpr elem kIndex = elem::i32;

const char* state_suffix(elem e) { return e == elem::bf16 ? "state-bf16" : "state-f32"; }

workload decode(const std::string& model, int hq, int hv, int batch, int tokens, elem state,
                bool v_last = false, bool per_key = false) {
  workload w;
  w.op = "decode";
  w.model = model;
  w.v_last = v_last;
  w.per_key = per_key;
  w.hq = hq, w.hv = hv, w.dk = 128, w.dv = 128;
  w.batch = batch, w.tokens = tokens, w.state = state;
  w.name = "decode/" + model + "/b" + std::to_string(batch) + "/" + state_suffix(state);
  return w;
}

workload prefill(const std::string& model, int hq, int hv, std::vector<int64_t> seqlens) {
  workload w;
  w.op = "prefill";
  w.model = model;
  w.hq = hq, w.hv = hv, w.dk = 128, w.dv = 128;
  w.seqlens = std::move(seqlens);
  const int64_t total = std::accumulate(w.seqlens.begin(), w.seqlens.end(), int64_t(0));
  w.name = "prefill/" + model + "/" +
           (w.seqlens.size() == 1
                ? "n" + std::to_string(total)
                : "varlen" + std::to_string(w.seqlens.size()) + "-n" + std::to_string(total));
  return w;
}

// 8 uneven sequences (none a multiple of 64) summing to `total`.
std::vector<int64_t> varlen8(int64_t total) {
  const int64_t base[8] = {1000, 7000, 2500, 5500, 300, 9000, 4100, 3368};  // sums to 32768
  std::vector<int64_t> lens(8);
  int64_t sum = 0;
  for (int i = 0; i < 7; ++i) sum += lens[i] = std::max<int64_t>(1, base[i] * total / 32768);
  lens[7] = total - sum;
  return lens;
}

std::vector<int32_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates with an LCG: reproducible everywhere
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(p[i], p[static_cast<int64_t>((seed >> 33) % static_cast<uint64_t>(i + 1))]);
  }
  return p;
}

// The state pool's index array: slots scattered like an engine's pool (a seeded
// permutation), or in order under --slot-order ascending.
std::vector<int32_t> slot_indices(const workload& w, int64_t n, uint64_t seed) {
  if (!w.ascending_slots) return permutation(n, seed);
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

// The raw-gate ranges keep exp(gamma) in about [0.5, 0.99]: a realistic decay
// that never drives the state towards denormals (which would slow CPUs).
void fill_gates(device_tensor& a, device_tensor& b, device_tensor& a_log, device_tensor& dt_bias,
                uint64_t seed) {
  a.fill_uniform(seed, -3.0f, -1.0f);
  b.fill_uniform(seed + 1, -2.0f, 2.0f);
  a_log.fill_uniform(seed + 2, -0.7f, 0.7f);
  dt_bias.fill_uniform(seed + 3, -1.0f, -0.01f);
}

class decode_case final : public bench_case {
 public:
  // Replica r > 0 draws its values from other seeds (the in-graph timing).
  decode_case(dk_context* ctx, const workload& w, int replica)
      : ctx_(ctx),
        q_(ctx, kAct, {w.batch, w.tokens, w.hq, w.dk}),
        k_(ctx, kAct, {w.batch, w.tokens, w.hq, w.dk}),
        v_(ctx, kAct, {w.batch, w.tokens, w.hv, w.dv}),
        out_(ctx, kAct, {w.batch, w.tokens, w.hv, w.dv}),
        a_(ctx, kGate, w.per_key ? std::vector<int64_t>{w.batch, w.tokens, w.hv, w.dk}
                                 : std::vector<int64_t>{w.batch, w.tokens, w.hv}),
        b_(ctx, kGate, {w.batch, w.tokens, w.hv}),
        a_log_(ctx, kParam, {w.hv}),
        dt_bias_(ctx, kParam, w.per_key ? std::vector<int64_t>{w.hv, w.dk} : std::vector<int64_t>{w.hv}),
        pool_(ctx, w.state,
              {w.other_out_slots ? 2 * w.batch : w.batch, w.hv, w.v_last ? w.dk : w.dv, w.v_last ? w.dv : w.dk}),
        indices_(ctx, kIndex, {w.batch}),
        out_indices_(ctx, kIndex, {w.batch}) {
    const uint64_t seed = 1000 * static_cast<uint64_t>(replica);
    q_.fill_uniform(seed + 1, -1.0f, 1.0f);
    k_.fill_uniform(seed + 2, -1.0f, 1.0f);
    v_.fill_uniform(seed + 3, -1.0f, 1.0f);
    fill_gates(a_, b_, a_log_, dt_bias_, seed + 11);
    pool_.fill_uniform(seed + 4, -0.1f, 0.1f);
    std::vector<int32_t> slots = slot_indices(w, w.batch, seed + 5);
    indices_.fill_ints(slots);
    for (int32_t& s : slots) s += w.batch;  // --state-out other-slots: the upper half, same order
    out_indices_.fill_ints(slots);
    config_ = engine_config();
    if (w.v_last) config_.state_layout = DK_STATE_V_LAST;
    if (w.per_key) config_.gate_kind = DK_GATE_PER_KEY;
    args_ = dk_decode_args{};
    args_.q = q_.view(), args_.k = k_.view(), args_.v = v_.view(), args_.out = out_.view();
    args_.g = a_.view(), args_.beta = b_.view();
    args_.A_log = a_log_.view(), args_.dt_bias = dt_bias_.view();
    args_.state_pool = pool_.view(), args_.state_indices = indices_.view();
    if (w.other_out_slots) args_.state_out_indices = out_indices_.view();
  }
  dk_status query(const char** out_impl) override {
    return dk_decode_query(ctx_, &config_, &args_, out_impl);
  }
  dk_status launch(void* stream) override { return dk_decode_run(ctx_, &config_, &args_, stream); }
  int64_t non_finite_outputs() const override { return out_.count_non_finite(); }

 private:
  dk_context* ctx_;
  device_tensor q_, k_, v_, out_, a_, b_, a_log_, dt_bias_, pool_, indices_, out_indices_;
  dk_config config_{};
  dk_decode_args args_{};
};

class prefill_case final : public bench_case {
 public:
  prefill_case(dk_context* ctx, const workload& w)
      : ctx_(ctx),
        q_(ctx, kAct, {w.num_tokens(), w.hq, w.dk}),
        k_(ctx, kAct, {w.num_tokens(), w.hq, w.dk}),
        v_(ctx, kAct, {w.num_tokens(), w.hv, w.dv}),
        out_(ctx, kAct, {w.num_tokens(), w.hv, w.dv}),
        a_(ctx, kGate, {w.num_tokens(), w.hv}),
        b_(ctx, kGate, {w.num_tokens(), w.hv}),
        a_log_(ctx, kParam, {w.hv}),
        dt_bias_(ctx, kParam, {w.hv}),
        cu_seqlens_(ctx, kIndex, {w.num_states() + 1}),
        pool_(ctx, w.state, {w.num_states(), w.hv, w.dv, w.dk}),
        indices_(ctx, kIndex, {w.num_states()}) {
    q_.fill_uniform(21, -1.0f, 1.0f);
    k_.fill_uniform(22, -1.0f, 1.0f);
    v_.fill_uniform(23, -1.0f, 1.0f);
    fill_gates(a_, b_, a_log_, dt_bias_, 11);
    pool_.fill_uniform(24, -0.1f, 0.1f);
    std::vector<int32_t> cu(1, 0);
    for (int64_t len : w.seqlens) cu.push_back(static_cast<int32_t>(cu.back() + len));
    cu_seqlens_.fill_ints(cu);
    indices_.fill_ints(slot_indices(w, w.num_states(), 25));
    config_ = engine_config();
    args_ = dk_prefill_args{};
    args_.q = q_.view(), args_.k = k_.view(), args_.v = v_.view(), args_.out = out_.view();
    args_.g = a_.view(), args_.beta = b_.view();
    args_.A_log = a_log_.view(), args_.dt_bias = dt_bias_.view();
    args_.cu_seqlens = cu_seqlens_.view();
    // Initial state from the pool and the final state back in place, like a
    // chunked-prefill continuation in an engine.
    args_.state_pool = pool_.view();
    args_.initial_state_indices = indices_.view();
    args_.final_state_indices = indices_.view();
    args_.num_seqs = w.num_states();
    args_.num_tokens = w.num_tokens();
    args_.max_seqlen = *std::max_element(w.seqlens.begin(), w.seqlens.end());
  }
  dk_status query(const char** out_impl) override {
    dk_status s = dk_prefill_query(ctx_, &config_, &args_, out_impl);
    if (s != DK_STATUS_SUCCESS) return s;
    s = dk_prefill_workspace_size(ctx_, &config_, &args_, &workspace_bytes_);
    if (s == DK_STATUS_SUCCESS && workspace_bytes_ > 0 && !workspace_)
      s = dk_malloc(ctx_, workspace_bytes_, &workspace_);
    return s;
  }
  dk_status launch(void* stream) override {
    return dk_prefill_run(ctx_, &config_, &args_, workspace_, workspace_bytes_, stream);
  }
  int64_t non_finite_outputs() const override { return out_.count_non_finite(); }
  ~prefill_case() override {
    if (workspace_) dk_free(ctx_, workspace_);
  }

 private:
  dk_context* ctx_;
  device_tensor q_, k_, v_, out_, a_, b_, a_log_, dt_bias_, cu_seqlens_, pool_, indices_;
  dk_config config_{};
  dk_prefill_args args_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace

dk_config engine_config() {
  dk_config c{};
  c.gate_kind = DK_GATE_SCALAR;
  c.gate_form = DK_GATE_RAW;
  c.beta_form = DK_BETA_LOGIT;
  c.state_layout = DK_STATE_K_LAST;
  c.qk_l2norm = 1;
  c.scale = 0.0f;  // 1/sqrt(K)
  return c;
}

int64_t workload::num_tokens() const {
  if (op == "decode") return int64_t(batch) * tokens;
  return std::accumulate(seqlens.begin(), seqlens.end(), int64_t(0));
}

int64_t workload::num_states() const {
  return op == "decode" ? batch : static_cast<int64_t>(seqlens.size());
}

int64_t workload::state_pool_bytes() const {
  return num_states() * int64_t(hv) * dk * dv * int64_t(elem_size(state));
}

int64_t workload::bytes_moved() const {
  const int64_t ntok = num_tokens(), nstate = num_states();
  const int64_t act = elem_size(kAct), gate = elem_size(kGate), param = elem_size(kParam);
  int64_t bytes = ntok * (2 * hq * dk + 2 * hv * dv) * act;                 // q, k, v, out
  const int64_t gate_width = per_key ? dk : 1;                              // a per key (KDA) or per head
  bytes += ntok * hv * (gate_width + 1) * gate;                             // a, b
  bytes += hv * (1 + gate_width) * param;                                   // A_log, dt_bias
  bytes += nstate * int64_t(elem_size(kIndex));                             // state indices
  if (other_out_slots) bytes += nstate * int64_t(elem_size(kIndex));        // state_out_indices
  if (op == "prefill") bytes += (nstate + 1) * int64_t(elem_size(kIndex));  // cu_seqlens
  bytes += 2 * state_pool_bytes();                                          // state read + write
  return bytes;
}

double workload::flops() const { return 4.0 * double(num_tokens()) * hv * dk * dv; }

std::string workload::shape_json() const {
  json::members m;
  if (op == "decode") {
    m = {{"B", json::integer(batch)}, {"T", json::integer(tokens)}, {"P", json::integer(other_out_slots ? 2 * batch : batch)}};
  } else {
    std::vector<std::string> lens;
    for (int64_t l : seqlens) lens.push_back(json::integer(l));
    m = {{"N", json::integer(num_states())},
         {"Ntok", json::integer(num_tokens())},
         {"seqlens", json::array(lens)}};
  }
  m.insert(m.end(), {{"HQ", json::integer(hq)},
                     {"HV", json::integer(hv)},
                     {"K", json::integer(dk)},
                     {"V", json::integer(dv)}});
  return json::object(m);
}

std::string workload::dtypes_json() const {
  return json::object({{"q", json::str(elem_name(kAct))},
                       {"k", json::str(elem_name(kAct))},
                       {"v", json::str(elem_name(kAct))},
                       {"out", json::str(elem_name(kAct))},
                       {"g", json::str(std::string(elem_name(kGate)) + " raw (a)")},
                       {"beta", json::str(std::string(elem_name(kGate)) + " logit")},
                       {"A_log", json::str(elem_name(kParam))},
                       {"dt_bias", json::str(elem_name(kParam))},
                       {"state", json::str(elem_name(state))},
                       {"indices", json::str(elem_name(kIndex))}});
}

std::vector<workload> standard_workloads(bool quick) {
  std::vector<workload> w;
  // Decode is cheap everywhere (B=512 moves 2 GB of fp32 state): --quick only
  // shrinks prefill, so the decode rows of every machine line up.
  for (elem state : {elem::f32, elem::bf16}) {
    for (int b : {1, 8, 32, 128, 512}) w.push_back(decode("qwen3next", 16, 32, b, 1, state));
    w.push_back(decode("contest", 4, 8, 1, 1, state));
    w.push_back(decode("qwen3next-mtp4", 16, 32, 32, 4, state));
  }
  // V-last state (not in SPEC §7's list; the decode issue compares it with
  // K-last at B >= 32): full set only, so the quick CPU set stays as it is.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {32, 128, 512}) w.push_back(decode("qwen3next-vlast", 16, 32, b, 1, state, true));
  // Speculative verification (T = 4) at the other batch sizes: full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {1, 8, 128}) w.push_back(decode("qwen3next-mtp4", 16, 32, b, 4, state));
  // T = 4 on V-last state (FLA's [K][V] layout, as engines that keep it verify
  // drafts): full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {1, 8, 32, 128}) w.push_back(decode("qwen3next-vlast-mtp4", 16, 32, b, 4, state, true));
  // Longer drafts (T = 8, chunks of 4 tokens on tensor cores) on both layouts: full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16}) {
      for (int b : {1, 8, 32, 128}) w.push_back(decode("qwen3next-mtp8", 16, 32, b, 8, state));
      w.push_back(decode("qwen3next-vlast-mtp8", 16, 32, 32, 8, state, true));
    }
  // Kimi Delta Attention (per-key gates; Kimi Linear's KDA layers: 32 heads,
  // K = V = 128), T = 1 on K-last state: full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {1, 8, 32, 128, 512}) w.push_back(decode("kimi-linear", 32, 32, b, 1, state, false, true));
  // KDA speculative verification (T = 4) on K-last state: full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {1, 32, 128}) w.push_back(decode("kimi-linear-mtp4", 32, 32, b, 4, state, false, true));
  // The same on V-last state (FLA's [K][V] layout, as engines that keep it run KDA): full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {32, 128, 512}) w.push_back(decode("kimi-linear-vlast", 32, 32, b, 1, state, true, true));
  // KDA speculative verification (T = 4) on V-last state: full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16})
      for (int b : {1, 32, 128}) w.push_back(decode("kimi-linear-vlast-mtp4", 32, 32, b, 4, state, true, true));
  // Longer KDA drafts (T = 8, chunks of 4 tokens on tensor cores), K-last; V-last at B = 32: full set only.
  if (!quick)
    for (elem state : {elem::f32, elem::bf16}) {
      for (int b : {32, 128}) w.push_back(decode("kimi-linear-mtp8", 32, 32, b, 8, state, false, true));
      w.push_back(decode("kimi-linear-vlast-mtp8", 32, 32, 32, 8, state, true, true));
    }
  // --quick keeps prefill short (a 2-core machine shared with builds has short
  // quiet windows): 1024 and 4096 tokens, varlen 8 sequences of 4096 in all.
  const std::vector<int64_t> lengths =
      quick ? std::vector<int64_t>{1024, 4096} : std::vector<int64_t>{4096, 16384, 65536};
  const int64_t varlen_total = quick ? 4096 : 32768;
  for (auto [model, hq, hv] :
       {std::tuple{"qwen3next", 16, 32}, std::tuple{"qwen3next-tp8", 2, 8}}) {
    for (int64_t n : lengths) w.push_back(prefill(model, hq, hv, {n}));
    w.push_back(prefill(model, hq, hv, varlen8(varlen_total)));
  }
  return w;
}

std::unique_ptr<bench_case> make_case(dk_context* ctx, const workload& w, int replica) {
  if (w.op == "decode") return std::make_unique<decode_case>(ctx, w, replica);
  return std::make_unique<prefill_case>(ctx, w);
}

}  // namespace dkb
