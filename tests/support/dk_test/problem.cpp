#include "dk_test/problem.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace dkt {

namespace {

const char* gate_name(dk_gate_kind g) {
  switch (g) {
    case DK_GATE_NONE: return "none";
    case DK_GATE_SCALAR: return "scalar";
    case DK_GATE_PER_KEY: return "per_key";
  }
  return "?";
}

// Strides of the leading (token) dims of a view into a [tokens, row] buffer.
std::vector<std::int64_t> lead_strides(const std::vector<std::int64_t>& lead, std::int64_t row) {
  std::vector<std::int64_t> s(lead.size());
  std::int64_t stride = row;
  for (std::size_t d = lead.size(); d-- > 0;) {
    s[d] = stride;
    stride *= lead[d];
  }
  return s;
}

std::vector<std::int64_t> cat(std::vector<std::int64_t> a, std::initializer_list<std::int64_t> b) {
  a.insert(a.end(), b);
  return a;
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t n = 1;
  for (std::int64_t x : v) n *= x;
  return n;
}

void randomize_bytes(buffer& b, rng& gen) {
  for (std::size_t i = 0; i < b.host.size(); i += 8) {
    const std::uint64_t r = gen.bits();
    std::memcpy(b.host.data() + i, &r, std::min<std::size_t>(8, b.host.size() - i));
  }
}

std::vector<double> round_trip(tensor& t, const std::vector<double>& values) {
  t.fill(values);
  return t.values();
}

void push_unique(std::vector<buffer*>& list, const tensor& t) {
  if (t.present() && std::find(list.begin(), list.end(), t.buf.get()) == list.end())
    list.push_back(t.buf.get());
}

std::vector<std::int64_t> shuffled_slots(std::int64_t n, rng& gen) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), gen.engine());
  return p;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

dk_config rule_spec::config() const {
  dk_config c{};
  c.gate_kind = gate;
  c.gate_form = form;
  c.beta_form = beta;
  c.state_layout = layout;
  c.qk_l2norm = l2norm ? 1 : 0;
  c.scale = scale;
  return c;
}

std::string rule_spec::describe() const {
  std::ostringstream s;
  s << "gate=" << gate_name(gate);
  if (gate != DK_GATE_NONE) s << (form == DK_GATE_RAW ? (dt_bias ? "/raw" : "/raw-no-dt_bias") : "/log");
  s << " beta=" << (beta == DK_BETA_LOGIT ? "logit" : "prob") << " l2norm=" << l2norm
    << " layout=" << (layout == DK_STATE_K_LAST ? "k_last" : "v_last");
  if (scale != 0.0f) s << " scale=" << scale;
  if (fast_decay) s << " fast_decay";
  return s.str();
}

std::string memory_spec::describe() const {
  std::ostringstream s;
  s << "qkv=" << (qkv == qkv_layout::compact ? "compact" : qkv == qkv_layout::fused ? "fused" : "interleaved");
  if (strided_out) s << " strided_out";
  if (strided_gates) s << " strided_gates";
  if (byte_offset) s << " byte_offset";
  if (slot_pad || head_pad) s << " pool_pad=" << slot_pad << "/" << head_pad;
  return s.str();
}

token_inputs random_inputs(const rule_spec& r, const head_spec& h, std::int64_t tokens, rng& gen) {
  token_inputs in;
  const std::size_t T = std::size_t(tokens);
  auto uniform = [&](std::vector<double>& x, std::size_t n, double lo, double hi) {
    x.resize(n);
    for (double& e : x) e = gen.uniform(lo, hi);
  };
  uniform(in.q, T * h.HQ * h.K, -1, 1);
  uniform(in.k, T * h.HQ * h.K, -1, 1);
  if (!r.l2norm)  // keeps beta |k|^2 < 2, so the recurrence stays bounded
    for (double& e : in.k) e /= std::sqrt(double(h.K));
  uniform(in.v, T * h.HV * h.V, -1, 1);
  const std::size_t gates = T * h.HV * r.gate_width(h.K);
  if (r.gate != DK_GATE_NONE) {
    if (r.raw()) {
      in.g.resize(gates);
      for (double& e : in.g) e = gen.normal();
      uniform(in.a_log, h.HV, -2, 0);
      if (r.dt_bias) uniform(in.dt_bias, std::size_t(h.HV) * r.gate_width(h.K), -1, 1);
    } else {
      uniform(in.g, gates, r.fast_decay ? -3 : -0.3, r.fast_decay ? -1 : -0.005);
    }
  }
  uniform(in.beta, T * h.HV, 0.05, 0.95);
  if (r.beta == DK_BETA_LOGIT)
    for (double& e : in.beta) e = std::log(e / (1 - e));
  return in;
}

void activations::build(dk_context* ctx, dk_device dev, const rule_spec& r, const head_spec& h,
                        const dtype_spec& d, const memory_spec& m,
                        const std::vector<std::int64_t>& lead, rng& gen) {
  const std::int64_t tokens = product(lead);
  // Padding bytes come from their own stream, so the values drawn from `gen` (and everything
  // drawn after them) do not depend on the dtypes or the memory layout.
  rng junk(gen.bits());
  token_inputs raw = random_inputs(r, h, tokens, gen);

  // q, k, v
  if (m.qkv == qkv_layout::compact) {
    q = make_tensor(ctx, dev, d.io, cat(lead, {h.HQ, h.K}));
    k = make_tensor(ctx, dev, d.io, cat(lead, {h.HQ, h.K}));
    v = make_tensor(ctx, dev, d.io, cat(lead, {h.HV, h.V}));
  } else {
    const std::int64_t row = 2 * h.HQ * h.K + h.HV * h.V + 16;
    tensor fused = make_tensor(ctx, dev, d.io, {tokens, row});
    const std::vector<std::int64_t> ls = lead_strides(lead, row);
    const bool inter = m.qkv == qkv_layout::interleaved;
    q = make_view(fused, d.io, cat(lead, {h.HQ, h.K}), cat(ls, {inter ? 2 * h.K : h.K, 1}), 0);
    k = make_view(fused, d.io, cat(lead, {h.HQ, h.K}), cat(ls, {inter ? 2 * h.K : h.K, 1}),
                  inter ? h.K : h.HQ * h.K);
    v = make_view(fused, d.io, cat(lead, {h.HV, h.V}), cat(ls, {h.V, 1}), 2 * h.HQ * h.K);
  }
  if (m.strided_out) {
    const std::int64_t row = h.HV * h.V + 32;
    out = make_strided(ctx, dev, d.io, cat(lead, {h.HV, h.V}), cat(lead_strides(lead, row), {h.V, 1}), 16);
  } else {
    out = make_tensor(ctx, dev, d.io, cat(lead, {h.HV, h.V}));
  }

  // g, beta
  const std::int64_t width = r.gate_width(h.K);
  const bool per_key = r.gate == DK_GATE_PER_KEY;
  const std::vector<std::int64_t> g_shape = per_key ? cat(lead, {h.HV, h.K}) : cat(lead, {h.HV});
  if (m.strided_gates) {
    const std::int64_t row = (r.gate == DK_GATE_NONE ? 0 : h.HV * width) + h.HV + 3;
    tensor gb = make_tensor(ctx, dev, d.aux, {tokens, row});
    const std::vector<std::int64_t> ls = lead_strides(lead, row);
    if (r.gate != DK_GATE_NONE)
      g = make_view(gb, d.aux, g_shape, per_key ? cat(ls, {h.K, 1}) : cat(ls, {1}), 0);
    beta = make_view(gb, d.aux, cat(lead, {h.HV}), cat(ls, {1}),
                     (r.gate == DK_GATE_NONE ? 0 : h.HV * width) + 1);
  } else {
    if (r.gate != DK_GATE_NONE) g = make_tensor(ctx, dev, d.aux, g_shape);
    beta = make_tensor(ctx, dev, d.aux, cat(lead, {h.HV}));
  }
  if (r.raw()) {
    a_log = make_tensor(ctx, dev, d.aux, {h.HV});
    if (r.dt_bias)
      dt_bias = make_tensor(ctx, dev, d.aux, per_key ? std::vector<std::int64_t>{h.HV, h.K}
                                                     : std::vector<std::int64_t>{h.HV});
  }

  for (tensor* t : {&q, &k, &v, &out, &g, &beta, &a_log, &dt_bias})
    if (t->present()) {
      randomize_bytes(*t->buf, junk);
      t->use_byte_offset = m.byte_offset;
    }
  in.q = round_trip(q, raw.q);
  in.k = round_trip(k, raw.k);
  in.v = round_trip(v, raw.v);
  if (g.present()) in.g = round_trip(g, raw.g);
  in.beta = round_trip(beta, raw.beta);
  if (a_log.present()) in.a_log = round_trip(a_log, raw.a_log);
  if (dt_bias.present()) in.dt_bias = round_trip(dt_bias, raw.dt_bias);
}

tensor make_state_tensor(dk_context* ctx, dk_device dev, const rule_spec& r, const head_spec& h,
                         dt type, std::int64_t slots, const memory_spec& m, rng& gen) {
  const bool k_last = r.layout == DK_STATE_K_LAST;
  const std::int64_t inner = k_last ? h.K : h.V;
  const std::int64_t head_stride = std::int64_t(h.K) * h.V + m.head_pad;
  const std::int64_t slot_stride = h.HV * head_stride + m.slot_pad;
  const std::int64_t offset = m.byte_offset ? 32 : 0;
  tensor t = make_strided(ctx, dev, type,
                          {slots, h.HV, k_last ? h.V : h.K, k_last ? h.K : h.V},
                          {slot_stride, head_stride, inner, 1}, offset);
  t.use_byte_offset = m.byte_offset;
  rng junk(gen.bits());
  randomize_bytes(*t.buf, junk);
  t.for_each([&](std::int64_t, std::size_t byte) { store(type, t.buf->host.data() + byte, gen.uniform(-0.5, 0.5)); });
  return t;
}

std::vector<double> read_state(const tensor& pool, const rule_spec& r, const head_spec& h,
                               std::int64_t slot) {
  std::vector<double> s(std::size_t(h.HV) * h.K * h.V);
  for_each_state_element(pool, r, h, slot, [&](int hh, int i, int j, std::size_t byte) {
    s[(std::size_t(hh) * h.K + i) * h.V + j] = load(pool.type, pool.buf->host.data() + byte);
  });
  return s;
}

void poison_slot(tensor& pool, const rule_spec& r, const head_spec& h, std::int64_t slot) {
  for_each_state_element(pool, r, h, slot, [&](int, int, int, std::size_t byte) {
    store_nan(pool.type, pool.buf->host.data() + byte);
  });
}

tensor make_index_tensor(dk_context* ctx, dk_device dev, dt type, std::vector<std::int64_t> shape,
                         const std::vector<std::int64_t>& values) {
  tensor t = make_tensor(ctx, dev, type, std::move(shape));
  std::vector<double> v(values.begin(), values.end());
  t.fill(v);
  return t;
}

// ------------------------------------------------------------------ decode

std::string decode_spec::describe() const {
  std::ostringstream s;
  s << "decode B=" << B << " T=" << T << " HQ=" << heads.HQ << " HV=" << heads.HV << " K=" << heads.K
    << " V=" << heads.V << " " << rule.describe() << " io=" << dt_name(types.io)
    << " aux=" << dt_name(types.aux) << " state=" << dt_name(types.state)
    << " index=" << dt_name(types.index) << " " << mem.describe();
  if (!padded.empty()) s << " padded=" << padded.size();
  if (!out_of_range.empty()) s << " out_of_range=" << out_of_range.size();
  if (out_slots) s << " out_slots";
  if (token_slots) s << " token_slots";
  s << " seed=" << seed;
  return s.str();
}

decode_problem::decode_problem(dk_context* c, const decode_spec& sp)
    : spec(sp), ctx(c), device(context_device(c)), config(sp.rule.config()) {
  rng gen(spec.seed);
  const int B = spec.B, T = spec.T;
  act.build(ctx, device, spec.rule, spec.heads, spec.types, spec.mem, {B, T}, gen);
  slots = 2 * B + 3 + (spec.token_slots ? std::int64_t(B) * T : 0);
  pool = make_state_tensor(ctx, device, spec.rule, spec.heads, spec.types.state, slots, spec.mem, gen);
  const std::vector<std::int64_t> perm = shuffled_slots(slots, gen);

  read_slot.resize(B);
  write_slot.resize(B);
  int out_of_range_count = 0;
  for (int b = 0; b < B; ++b) {
    read_slot[b] = perm[b];
    if (contains(spec.padded, b)) read_slot[b] = -1;
    if (contains(spec.out_of_range, b))  // both sides of [-1, P)
      read_slot[b] = (out_of_range_count++ % 2 == 0) ? slots + 2 + b : -2 - b;
    write_slot[b] = read_slot[b];
    if (spec.out_slots) {
      write_slot[b] = perm[B + b];
      if (b == 0) write_slot[b] = read_slot[b];  // in place through state_out_indices
      if (b == 1 && B > 2) write_slot[b] = -1;   // state not kept
    }
  }
  indices = make_index_tensor(ctx, device, spec.types.index, {B}, read_slot);
  if (spec.out_slots) out_indices = make_index_tensor(ctx, device, spec.types.index, {B}, write_slot);
  if (spec.token_slots) {
    token_slot.resize(std::size_t(B) * T);
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        token_slot[std::size_t(b) * T + t] = ((b + t) % 3 == 1) ? -1 : perm[2 * B + 3 + b * T + t];
    token_indices = make_index_tensor(ctx, device, spec.types.index, {B, T}, token_slot);
  }

  // Slots that a sequence writes but does not read start as NaN, so an unwritten one fails.
  for (int b = 0; b < B; ++b) {
    if (is_padding(b)) continue;
    if (spec.token_slots) {
      for (int t = 0; t < T; ++t) {
        const std::int64_t s = token_slot[std::size_t(b) * T + t];
        if (s >= 0 && s != read_slot[b]) poison_slot(pool, spec.rule, spec.heads, s);
      }
    } else if (write_slot[b] >= 0 && write_slot[b] != read_slot[b]) {
      poison_slot(pool, spec.rule, spec.heads, write_slot[b]);
    }
  }
  act.poison_out();
}

dk_decode_args decode_problem::args() {
  dk_decode_args a{};
  a.q = act.q.dl();
  a.k = act.k.dl();
  a.v = act.v.dl();
  a.g = act.g.present() ? act.g.dl() : nullptr;
  a.beta = act.beta.dl();
  a.A_log = act.a_log.present() ? act.a_log.dl() : nullptr;
  a.dt_bias = act.dt_bias.present() ? act.dt_bias.dl() : nullptr;
  a.state_pool = pool.dl();
  a.state_indices = indices.dl();
  a.state_out_indices = out_indices.present() ? out_indices.dl() : nullptr;
  a.state_token_indices = token_indices.present() ? token_indices.dl() : nullptr;
  a.out = act.out.dl();
  return a;
}

std::vector<buffer*> decode_problem::buffers() {
  std::vector<buffer*> list;
  for (const tensor* t : {&act.q, &act.k, &act.v, &act.out, &act.g, &act.beta, &act.a_log,
                          &act.dt_bias, &pool, &indices, &out_indices, &token_indices})
    push_unique(list, *t);
  return list;
}

void decode_problem::upload(void* stream) {
  for (buffer* b : buffers()) b->upload(stream);
}

void decode_problem::download(void* stream) {
  for (buffer* b : buffers()) b->download(stream);
}

// ------------------------------------------------------------------ prefill

std::int64_t prefill_spec::tokens() const {
  std::int64_t n = 0;
  for (int l : lens) n += l;
  return n;
}

std::string prefill_spec::describe() const {
  std::ostringstream s;
  s << "prefill lens=[";
  for (std::size_t i = 0; i < lens.size(); ++i) s << (i ? " " : "") << lens[i];
  s << "] HQ=" << heads.HQ << " HV=" << heads.HV << " K=" << heads.K << " V=" << heads.V << " "
    << rule.describe() << " io=" << dt_name(types.io) << " aux=" << dt_name(types.aux)
    << " state=" << dt_name(types.state) << " index=" << dt_name(types.index) << " "
    << mem.describe() << " initial=" << initial << " final=";
  switch (final) {
    case final_dst::none: s << "none"; break;
    case final_dst::in_place: s << "in_place"; break;
    case final_dst::slots: s << "slots"; break;
    case final_dst::dense: s << "dense"; break;
    case final_dst::slots_and_dense: s << "slots+dense"; break;
  }
  if (!no_initial.empty()) s << " no_initial=" << no_initial.size();
  if (!no_final.empty()) s << " no_final=" << no_final.size();
  if (max_seqlen_extra) s << " max_seqlen+" << max_seqlen_extra;
  s << " seed=" << seed;
  return s.str();
}

prefill_problem::prefill_problem(dk_context* c, const prefill_spec& sp)
    : spec(sp), ctx(c), device(context_device(c)), config(sp.rule.config()) {
  if (spec.final == final_dst::in_place) spec.initial = true;
  rng gen(spec.seed);
  const std::int64_t N = num_seqs(), ntok = spec.tokens();
  cu.assign(std::size_t(N) + 1, 0);
  for (std::int64_t n = 0; n < N; ++n) cu[n + 1] = cu[n] + spec.lens[n];

  act.build(ctx, device, spec.rule, spec.heads, spec.types, spec.mem, {ntok}, gen);
  cu_seqlens = make_index_tensor(ctx, device, spec.types.index, {N + 1}, cu);

  initial_slot.assign(std::size_t(N), -1);
  final_slot.assign(std::size_t(N), -1);
  if (spec.uses_pool()) {
    slots = 2 * N + 2;
    pool = make_state_tensor(ctx, device, spec.rule, spec.heads, spec.types.state, slots, spec.mem, gen);
    const std::vector<std::int64_t> perm = shuffled_slots(slots, gen);
    for (std::int64_t n = 0; n < N; ++n) {
      if (spec.initial && !contains(spec.no_initial, int(n))) initial_slot[n] = perm[n];
      if (spec.final == final_dst::in_place) final_slot[n] = initial_slot[n];
      if (spec.final == final_dst::slots || spec.final == final_dst::slots_and_dense)
        final_slot[n] = contains(spec.no_final, int(n)) ? -1 : perm[N + n];
    }
    if (spec.initial) initial_indices = make_index_tensor(ctx, device, spec.types.index, {N}, initial_slot);
    if (spec.final == final_dst::slots || spec.final == final_dst::slots_and_dense)
      final_indices = make_index_tensor(ctx, device, spec.types.index, {N}, final_slot);
    for (std::int64_t n = 0; n < N; ++n)
      if (final_slot[n] >= 0 && final_slot[n] != initial_slot[n])
        poison_slot(pool, spec.rule, spec.heads, final_slot[n]);
  }
  if (spec.writes_dense()) {
    memory_spec dense;  // compact
    final_state = make_state_tensor(ctx, device, spec.rule, spec.heads, spec.types.state, N, dense, gen);
    final_state.poison();
  }
  act.poison_out();
}

std::int64_t prefill_problem::max_seqlen() const {
  std::int64_t m = 0;
  for (int l : spec.lens) m = std::max<std::int64_t>(m, l);
  return std::min(m + spec.max_seqlen_extra, spec.tokens());
}

dk_prefill_args prefill_problem::args() {
  dk_prefill_args a{};
  a.q = act.q.dl();
  a.k = act.k.dl();
  a.v = act.v.dl();
  a.g = act.g.present() ? act.g.dl() : nullptr;
  a.beta = act.beta.dl();
  a.A_log = act.a_log.present() ? act.a_log.dl() : nullptr;
  a.dt_bias = act.dt_bias.present() ? act.dt_bias.dl() : nullptr;
  a.cu_seqlens = cu_seqlens.dl();
  a.state_pool = pool.present() ? pool.dl() : nullptr;
  a.initial_state_indices = initial_indices.present() ? initial_indices.dl() : nullptr;
  a.final_state_indices = spec.final == final_dst::in_place ? a.initial_state_indices
                          : final_indices.present()         ? final_indices.dl()
                                                            : nullptr;
  a.final_state = final_state.present() ? final_state.dl() : nullptr;
  a.out = act.out.dl();
  a.num_seqs = num_seqs();
  a.num_tokens = spec.tokens();
  a.max_seqlen = max_seqlen();
  return a;
}

std::vector<buffer*> prefill_problem::buffers() {
  std::vector<buffer*> list;
  for (const tensor* t : {&act.q, &act.k, &act.v, &act.out, &act.g, &act.beta, &act.a_log,
                          &act.dt_bias, &cu_seqlens, &pool, &initial_indices, &final_indices,
                          &final_state})
    push_unique(list, *t);
  return list;
}

void prefill_problem::upload(void* stream) {
  for (buffer* b : buffers()) b->upload(stream);
}

void prefill_problem::download(void* stream) {
  for (buffer* b : buffers()) b->download(stream);
}

}  // namespace dkt
