#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <thread>

namespace dkc {

namespace {
dk_context* g_ctx = nullptr;

// Work (tokens x heads x K x V) above which the golden splits heads across threads.
constexpr double kParallelWork = 1 << 24;
}  // namespace

dk_context* ctx() { return g_ctx; }
void set_ctx(dk_context* c) { g_ctx = c; }

double tolerance(const dtype_spec& t) {
  if (t.state == dt::bf16) return 2e-2;
  // fp16 keeps 11 significant bits (bf16: 8): rounding the state costs ~2^-12 relative per
  // element, as much as bf16 inputs do, so fp16 state gets the bf16/fp16-input tolerance.
  if (t.state == dt::f16) return 5e-3;
  if (t.io != dt::f32) return 5e-3;
  return kIsCpu ? 1e-5 : 1e-4;
}

decode_spec engine_step(int B, int T, dt io, dt state, dk_state_layout layout, std::uint64_t seed) {
  decode_spec spec;
  spec.B = B;
  spec.T = T;
  spec.heads = {4, 8, 128, 128};
  spec.rule.form = DK_GATE_RAW;
  spec.rule.beta = DK_BETA_LOGIT;
  spec.rule.layout = layout;
  spec.types.io = io;
  spec.types.state = state;
  spec.padded = {1};
  spec.seed = seed;
  return spec;
}

dk_ref::config ref_config(const rule_spec& r) {
  dk_ref::config c;
  c.gate = r.gate == DK_GATE_NONE     ? dk_ref::gate_kind::none
           : r.gate == DK_GATE_SCALAR ? dk_ref::gate_kind::scalar
                                      : dk_ref::gate_kind::per_key;
  c.gate_raw = r.raw();
  c.beta_logit = r.beta == DK_BETA_LOGIT;
  c.qk_l2norm = r.l2norm;
  c.scale = r.scale;
  return c;
}

namespace {

const double* at_or_null(const std::vector<double>& v, std::size_t offset) {
  return v.empty() ? nullptr : v.data() + offset;
}

// One value head alone: its key head's q/k rows and its own v, gates, beta as HQ = HV = 1.
void golden_head(const rule_spec& r, const head_spec& h, const token_inputs& in, std::int64_t first,
                 std::int64_t count, int head, double* state_h, double* out) {
  const int K = h.K, V = h.V, width = r.gate_width(K);
  const int key_head = head / (h.HV / h.HQ);
  const std::size_t T = std::size_t(count);
  std::vector<double> q(T * K), k(T * K), v(T * V), g, beta(T), o(T * V), a_log, dt_bias;
  if (!in.g.empty()) g.resize(T * width);
  for (std::size_t t = 0; t < T; ++t) {
    const std::size_t tok = std::size_t(first) + t;
    std::copy_n(in.q.data() + (tok * h.HQ + key_head) * K, K, q.data() + t * K);
    std::copy_n(in.k.data() + (tok * h.HQ + key_head) * K, K, k.data() + t * K);
    std::copy_n(in.v.data() + (tok * h.HV + head) * V, V, v.data() + t * V);
    if (!g.empty()) std::copy_n(in.g.data() + (tok * h.HV + head) * width, width, g.data() + t * width);
    beta[t] = in.beta[tok * h.HV + head];
  }
  if (!in.a_log.empty()) a_log.assign(1, in.a_log[head]);
  if (!in.dt_bias.empty())
    dt_bias.assign(in.dt_bias.begin() + std::size_t(head) * width,
                   in.dt_bias.begin() + std::size_t(head + 1) * width);
  const dk_ref::sequence s{int(count), q.data(), k.data(), v.data(), at_or_null(g, 0), beta.data(),
                           at_or_null(a_log, 0), at_or_null(dt_bias, 0)};
  dk_ref::recurrent(ref_config(r), dk_ref::dims{1, 1, K, V}, s, state_h, o.data());
  for (std::size_t t = 0; t < T; ++t)
    std::copy_n(o.data() + t * V, V, out + (t * h.HV + head) * V);
}

}  // namespace

void golden(const rule_spec& r, const head_spec& h, const token_inputs& in, std::int64_t first,
            std::int64_t count, double* state, double* out) {
  if (count == 0) return;
  const double work = double(count) * h.HV * h.K * h.V;
  const int threads = int(std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), unsigned(h.HV)));
  if (work < kParallelWork || threads == 1) {
    const std::size_t t0 = std::size_t(first);
    const int width = r.gate_width(h.K);
    const dk_ref::sequence s{int(count),
                             in.q.data() + t0 * h.HQ * h.K,
                             in.k.data() + t0 * h.HQ * h.K,
                             in.v.data() + t0 * h.HV * h.V,
                             at_or_null(in.g, t0 * h.HV * width),
                             in.beta.data() + t0 * h.HV,
                             at_or_null(in.a_log, 0),
                             at_or_null(in.dt_bias, 0)};
    dk_ref::recurrent(ref_config(r), dk_ref::dims{h.HQ, h.HV, h.K, h.V}, s, state, out);
    return;
  }
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (int head = w; head < h.HV; head += threads)
        golden_head(r, h, in, first, count, head, state + std::size_t(head) * h.K * h.V, out);
    });
  for (std::thread& t : pool) t.join();
}

expected golden_decode(const decode_problem& p) {
  const decode_spec& s = p.spec;
  const head_spec& h = s.heads;
  const std::size_t row = std::size_t(h.HV) * h.V;
  expected e;
  e.out.assign(std::size_t(s.B) * s.T * row, 0.0);
  e.out_zero.assign(std::size_t(s.B) * s.T, 0);
  for (int b = 0; b < s.B; ++b) {
    if (p.is_padding(b)) {
      std::fill_n(e.out_zero.begin() + std::size_t(b) * s.T, s.T, 1);
      continue;
    }
    std::vector<double> state = read_state(p.pool, s.rule, h, p.read_slot[b]);
    for (int t = 0; t < s.T; ++t) {
      const std::int64_t tok = std::int64_t(b) * s.T + t;
      golden(s.rule, h, p.act.in, tok, 1, state.data(), e.out.data() + std::size_t(tok) * row);
      if (s.token_slots && p.token_slot[std::size_t(tok)] >= 0) e.slots[p.token_slot[std::size_t(tok)]] = state;
    }
    if (!s.token_slots && p.write_slot[b] >= 0) e.slots[p.write_slot[b]] = state;
  }
  return e;
}

expected golden_prefill(const prefill_problem& p) {
  const prefill_spec& s = p.spec;
  const head_spec& h = s.heads;
  const std::size_t row = std::size_t(h.HV) * h.V;
  const std::size_t state_size = std::size_t(h.HV) * h.K * h.V;
  expected e;
  e.out.assign(std::size_t(s.tokens()) * row, 0.0);
  e.out_zero.assign(std::size_t(s.tokens()), 0);
  for (std::int64_t n = 0; n < p.num_seqs(); ++n) {
    std::vector<double> state = p.initial_slot[n] >= 0 ? read_state(p.pool, s.rule, h, p.initial_slot[n])
                                                       : std::vector<double>(state_size, 0.0);
    golden(s.rule, h, p.act.in, p.cu[n], s.lens[n], state.data(), e.out.data() + std::size_t(p.cu[n]) * row);
    if (p.final_slot[n] >= 0) e.slots[p.final_slot[n]] = state;
    if (s.writes_dense()) e.dense.push_back(state);
  }
  return e;
}

snapshot take_snapshot(const std::vector<buffer*>& buffers) {
  snapshot s;
  for (const buffer* b : buffers) s.push_back(b->host);
  return s;
}

void restore_snapshot(const std::vector<buffer*>& buffers, const snapshot& s) {
  for (std::size_t i = 0; i < buffers.size(); ++i) buffers[i]->host = s[i];
}

std::string verdict::describe() const {
  std::ostringstream s;
  s << "out: " << out.describe() << "\nstate: " << state.describe()
    << "\nnonzero padded outputs: " << nonzero_padding << "\nbytes changed outside the written "
    << "region: " << changed_bytes << (first_change.empty() ? "" : " (first: " + first_change + ")");
  return s.str();
}

verdict verify(const expected& e, tensor& out, const tensor* pool, const tensor* final_state,
               const rule_spec& r, const head_spec& h, const std::vector<buffer*>& buffers,
               const snapshot& before) {
  verdict v;
  std::map<const buffer*, std::vector<char>> written;
  for (const buffer* b : buffers) written[b].assign(b->host.size(), 0);
  auto mark = [&](const buffer* b, std::size_t byte, std::size_t size) {
    std::fill_n(written[b].begin() + byte, size, 1);
  };

  const std::size_t row = std::size_t(h.HV) * h.V;
  out.for_each([&](std::int64_t lin, std::size_t byte) {
    const double x = load(out.type, out.buf->host.data() + byte);
    mark(out.buf.get(), byte, out.elem_size());
    if (e.out_zero[std::size_t(lin) / row]) {
      if (x != 0.0) ++v.nonzero_padding;
    } else {
      v.out.add(x, e.out[std::size_t(lin)]);
    }
  });
  auto check_state = [&](const tensor& t, std::int64_t slot, const std::vector<double>& ref) {
    for_each_state_element(t, r, h, slot, [&](int hh, int i, int j, std::size_t byte) {
      mark(t.buf.get(), byte, t.elem_size());
      v.state.add(load(t.type, t.buf->host.data() + byte), ref[(std::size_t(hh) * h.K + i) * h.V + j]);
    });
  };
  for (const auto& [slot, ref] : e.slots) check_state(*pool, slot, ref);
  for (std::size_t n = 0; n < e.dense.size(); ++n) check_state(*final_state, std::int64_t(n), e.dense[n]);

  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const std::vector<unsigned char>& now = buffers[i]->host;
    const std::vector<char>& mask = written[buffers[i]];
    for (std::size_t byte = 0; byte < now.size(); ++byte)
      if (!mask[byte] && now[byte] != before[i][byte]) {
        if (v.changed_bytes++ == 0) {
          std::ostringstream s;
          s << "buffer " << i << " byte " << byte;
          if (buffers[i] == out.buf.get()) s << " (out's buffer)";
          if (pool && buffers[i] == pool->buf.get()) s << " (the pool's buffer)";
          v.first_change = s.str();
        }
      }
  }
  return v;
}

void check_verdict(const verdict& v, double tol, bool has_states) {
  INFO(v.describe());
  CHECK(v.out.non_finite == 0);
  CHECK(v.out.relative() <= tol);
  if (has_states) {
    CHECK(v.state.non_finite == 0);
    CHECK(v.state.relative() <= tol);
  }
  CHECK(v.nonzero_padding == 0);
  CHECK(v.changed_bytes == 0);
}

dk_status run_decode(decode_problem& p, void* stream) {
  const dk_decode_args a = p.args();
  p.upload(stream);
  const dk_status s = dk_decode_run(ctx(), &p.config, &a, stream);
  if (s != DK_STATUS_SUCCESS) return s;
  p.download(stream);
  return DK_STATUS_SUCCESS;
}

dk_status run_prefill(prefill_problem& p, void* stream) {
  const dk_prefill_args a = p.args();
  std::size_t bytes = 0;
  dk_status s = dk_prefill_workspace_size(ctx(), &p.config, &a, &bytes);
  if (s != DK_STATUS_SUCCESS) return s;
  void* workspace = nullptr;
  if (bytes > 0) {
    s = dk_malloc(ctx(), bytes, &workspace);
    if (s != DK_STATUS_SUCCESS) return s;
  }
  p.upload(stream);
  s = dk_prefill_run(ctx(), &p.config, &a, workspace, bytes, stream);
  if (s == DK_STATUS_SUCCESS) p.download(stream);  // synchronises before the workspace goes
  else dk_stream_synchronize(ctx(), stream);
  if (workspace) dk_free(ctx(), workspace);
  return s;
}

void check_decode(const decode_spec& spec) {
  INFO(spec.describe());
  decode_problem p(ctx(), spec);
  const dk_decode_args a = p.args();
  const char* impl = nullptr;
  DK_REQUIRE_OK(dk_decode_query(ctx(), &p.config, &a, &impl));
  REQUIRE(impl != nullptr);
  CHECK(impl[0] != '\0');
  INFO("implementation: " << std::string(impl));
  const expected e = golden_decode(p);
  const std::vector<buffer*> buffers = p.buffers();
  const snapshot before = take_snapshot(buffers);
  DK_REQUIRE_OK(run_decode(p));
  check_verdict(verify(e, p.act.out, &p.pool, nullptr, spec.rule, spec.heads, buffers, before),
                tolerance(spec.types), !e.slots.empty());
}

void check_prefill(const prefill_spec& spec) {
  INFO(spec.describe());
  prefill_problem p(ctx(), spec);
  const dk_prefill_args a = p.args();
  const char* impl = nullptr;
  DK_REQUIRE_OK(dk_prefill_query(ctx(), &p.config, &a, &impl));
  REQUIRE(impl != nullptr);
  CHECK(impl[0] != '\0');
  INFO("implementation: " << std::string(impl));
  const expected e = golden_prefill(p);
  const std::vector<buffer*> buffers = p.buffers();
  const snapshot before = take_snapshot(buffers);
  DK_REQUIRE_OK(run_prefill(p));
  check_verdict(verify(e, p.act.out, p.pool.present() ? &p.pool : nullptr,
                       p.final_state.present() ? &p.final_state : nullptr, spec.rule, spec.heads,
                       buffers, before),
                tolerance(spec.types), !e.slots.empty() || !e.dense.empty());
}

}  // namespace dkc
