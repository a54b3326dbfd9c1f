// Decode against the golden: SPEC §6's case matrix, one TEST_CASE per axis.
#include "harness.hpp"

namespace dkc {
namespace {

// The base case the axes vary: GDN (scalar log gate), 3 sequences, the middle one padded.
decode_spec base(int T = 2, std::uint64_t seed = 1) {
  decode_spec s;
  s.B = 3;
  s.T = T;
  s.heads = {2, 4, 64, 64};
  s.padded = {1};
  s.seed = seed;
  return s;
}

TEST_CASE("decode: tokens per step") {
  std::uint64_t seed = 100;
  for (int T : {1, 2, 4, 16}) {
    decode_spec s = base(T, ++seed);
    check_decode(s);

    decode_spec kda = base(T, ++seed);  // KDA-shaped, bf16 activations, V-last state
    kda.rule.gate = DK_GATE_PER_KEY;
    kda.rule.layout = DK_STATE_V_LAST;
    kda.types.io = dt::bf16;
    check_decode(kda);
  }
}

TEST_CASE("decode: gate kinds and forms") {
  std::uint64_t seed = 200;
  for (dk_gate_kind gate : {DK_GATE_NONE, DK_GATE_SCALAR, DK_GATE_PER_KEY})
    for (dk_gate_form form : {DK_GATE_LOG, DK_GATE_RAW}) {
      if (gate == DK_GATE_NONE && form == DK_GATE_RAW) continue;
      for (dk_beta_form beta : {DK_BETA_PROB, DK_BETA_LOGIT})
        for (bool l2norm : {true, false}) {
          decode_spec s = base(3, ++seed);
          s.rule.gate = gate;
          s.rule.form = form;
          s.rule.beta = beta;
          s.rule.l2norm = l2norm;
          check_decode(s);
        }
    }
  for (dk_gate_kind gate : {DK_GATE_SCALAR, DK_GATE_PER_KEY}) {  // raw gate without dt_bias
    decode_spec s = base(2, ++seed);
    s.rule.gate = gate;
    s.rule.form = DK_GATE_RAW;
    s.rule.dt_bias = false;
    check_decode(s);
  }
  decode_spec scaled = base(2, ++seed);  // explicit scale instead of 1/sqrt(K)
  scaled.rule.scale = 0.3f;
  check_decode(scaled);
}

// KDA's raw gate without dt_bias (i.e. zero), GVA 2, V != K, bf16 activations.
decode_spec per_key_without_bias(int T, std::uint64_t seed) {
  decode_spec s = base(T, seed);
  s.heads = {2, 4, 128, 80};
  s.rule.gate = DK_GATE_PER_KEY;
  s.rule.form = DK_GATE_RAW;
  s.rule.dt_bias = false;
  s.types.io = dt::bf16;
  return s;
}

// KDA decode as engines run it (T = 1, per-key gates; the CUDA backend's
// t1_per_key kernels on sm_90a, t1_per_key_smem with bf16 activations on
// K-last state and on V-last state from 4 heads per SM, t1_small_per_key for
// K-last 16-bit state on small grids): both layouts, every state dtype, both K classes, the gate
// forms (raw with and without dt_bias), fp32 and bf16 activations and gates,
// padding, other output slots and per-token slots.
TEST_CASE("decode: per-key gates at one token") {
  std::uint64_t seed = 1200;
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST})
    for (dt state : {dt::f32, dt::bf16, dt::f16})
      for (int dim : {64, 128}) {
        decode_spec s = base(1, ++seed);
        s.B = 4;
        s.padded = {2};
        s.heads = {2, 4, dim, dim};
        s.rule.gate = DK_GATE_PER_KEY;
        s.rule.layout = layout;
        s.rule.form = dim == 128 ? DK_GATE_RAW : DK_GATE_LOG;
        s.rule.beta = state == dt::f16 ? DK_BETA_LOGIT : DK_BETA_PROB;
        s.rule.l2norm = state != dt::bf16;
        s.types.state = state;
        s.types.io = state == dt::f32 ? dt::f32 : dt::bf16;
        s.types.aux = state == dt::bf16 ? dt::bf16 : dt::f32;
        s.out_slots = state == dt::f16;
        s.token_slots = state == dt::bf16 && dim == 64;
        check_decode(s);
      }
  check_decode(per_key_without_bias(1, ++seed));
  decode_spec k64 = base(1, ++seed);  // fp32 state, bf16 activations, K = 64, other slots
  k64.B = 3;
  k64.heads = {2, 4, 64, 64};
  k64.rule.gate = DK_GATE_PER_KEY;
  k64.rule.form = DK_GATE_RAW;
  k64.types.io = dt::bf16;
  k64.out_slots = true;
  check_decode(k64);
  for (dt state : {dt::f32, dt::bf16}) {  // V-last with bf16 activations on 576 heads (t1_per_key_smem from 528 on 132 SMs)
    decode_spec many = base(1, ++seed);
    many.B = 72;
    many.padded = {5};
    many.heads = {4, 8, 64, 64};
    many.rule.gate = DK_GATE_PER_KEY;
    many.rule.layout = DK_STATE_V_LAST;
    many.rule.form = DK_GATE_RAW;
    many.types.state = state;
    many.types.io = dt::bf16;
    check_decode(many);
  }
  decode_spec fast = base(1, ++seed);  // strong decays, V-last
  fast.heads = {2, 2, 128, 128};
  fast.rule.gate = DK_GATE_PER_KEY;
  fast.rule.layout = DK_STATE_V_LAST;
  fast.rule.fast_decay = true;
  check_decode(fast);
  // g rows inside a wider buffer, not all 16-byte aligned (sequence 2's): the
  // CUDA t1_per_key_smem body stages the aligned ones in shared memory and
  // loads the others key by key.
  decode_spec gate_view = base(1, 1290);
  gate_view.heads = {2, 4, 128, 128};
  gate_view.rule.gate = DK_GATE_PER_KEY;
  gate_view.rule.form = DK_GATE_RAW;
  gate_view.types.io = dt::bf16;
  gate_view.mem.strided_gates = true;
  check_decode(gate_view);
}

TEST_CASE("decode: head ratios and dims") {
  std::uint64_t seed = 300;
  const head_spec dims[] = {{0, 0, 64, 64}, {0, 0, 128, 128}, {0, 0, 48, 80}};
  for (int ratio : {1, 2, 4})
    for (head_spec h : dims) {
      decode_spec s = base(2, ++seed);
      h.HQ = 2;
      h.HV = 2 * ratio;
      s.heads = h;
      check_decode(s);
    }
  // The extremes of "any multiple of 16 up to 256", and rectangular states both ways.
  for (head_spec h : {head_spec{1, 1, 16, 16}, head_spec{1, 2, 256, 256}, head_spec{2, 2, 16, 256},
                      head_spec{2, 4, 256, 32}, head_spec{4, 4, 128, 64}}) {
    for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST}) {
      decode_spec s = base(2, ++seed);
      s.heads = h;
      s.rule.layout = layout;
      s.rule.gate = DK_GATE_PER_KEY;
      check_decode(s);
    }
  }
}

TEST_CASE("decode: state layouts and dtypes") {
  std::uint64_t seed = 400;
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST})
    for (dt state : {dt::f32, dt::bf16, dt::f16})
      for (dt io : {dt::f32, dt::bf16, dt::f16}) {
        decode_spec s = base(2, ++seed);
        s.rule.layout = layout;
        s.types.state = state;
        s.types.io = io;
        check_decode(s);
      }
  for (dk_gate_kind gate : {DK_GATE_SCALAR, DK_GATE_PER_KEY})  // bf16 gates, beta, A_log, dt_bias
    for (dk_gate_form form : {DK_GATE_LOG, DK_GATE_RAW}) {
      decode_spec s = base(2, ++seed);
      s.rule.gate = gate;
      s.rule.form = form;
      s.rule.beta = DK_BETA_LOGIT;
      s.types.aux = dt::bf16;
      check_decode(s);
    }
}

TEST_CASE("decode: padded and out-of-range indices") {
  std::uint64_t seed = 500;
  for (dt index : {dt::i32, dt::i64}) {
    decode_spec none = base(2, ++seed);  // nothing padded
    none.padded.clear();
    none.types.index = index;
    check_decode(none);

    decode_spec ends = base(2, ++seed);  // first and last padded
    ends.B = 5;
    ends.padded = {0, 4};
    ends.types.index = index;
    check_decode(ends);

    decode_spec all = base(2, ++seed);  // everything padded: outputs zero, pool untouched
    all.padded = {0, 1, 2};
    all.types.index = index;
    check_decode(all);

    decode_spec range = base(2, ++seed);  // outside [-1, P): treated as padding
    range.B = 5;
    range.padded = {3};
    range.out_of_range = {0, 2};
    range.types.index = index;
    check_decode(range);
  }
}

TEST_CASE("decode: separate output slots") {
  std::uint64_t seed = 600;
  for (dt index : {dt::i32, dt::i64})
    for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST})
      for (int T : {1, 4}) {
        decode_spec s = base(T, ++seed);
        s.B = 4;
        s.padded = {3};  // padded sequence with a valid output slot: must write nothing
        s.out_slots = true;
        s.types.index = index;
        s.rule.layout = layout;
        check_decode(s);
      }
  decode_spec bf = base(2, ++seed);
  bf.B = 4;
  bf.out_slots = true;
  bf.types.state = dt::bf16;
  check_decode(bf);
}

TEST_CASE("decode: per-token slots") {
  std::uint64_t seed = 700;
  for (int T : {2, 4, 16})
    for (dt state : {dt::f32, dt::bf16}) {
      decode_spec s = base(T, ++seed);
      s.token_slots = true;
      s.types.state = state;
      s.types.index = T == 4 ? dt::i64 : dt::i32;
      s.rule.layout = T == 16 ? DK_STATE_V_LAST : DK_STATE_K_LAST;
      check_decode(s);
    }
  decode_spec mtp = base(4, ++seed);  // MTP-shaped: KDA gate, bf16 activations
  mtp.B = 4;
  mtp.padded = {2};
  mtp.token_slots = true;
  mtp.rule.gate = DK_GATE_PER_KEY;
  mtp.types.io = dt::bf16;
  check_decode(mtp);
}

// Speculative verification as engines run it: bf16 activations, every state
// dtype, both K classes, the gate forms, and the state kept once, after every
// token, or in other slots; on K-last and V-last state (the CUDA backend's
// tn_mma kernels on sm_90a at T = 2 and 4, tn_mma_chunked at T = 7 and 16).
void check_several_tokens(dk_state_layout layout, std::uint64_t seed) {
  for (int T : {2, 4, 7, 16})
    for (int dim : {64, 128})
      for (dt state : {dt::f32, dt::bf16, dt::f16}) {
        decode_spec s = base(T, ++seed);
        s.B = 4;
        s.padded = {2};
        s.heads = {2, 4, dim, dim};
        s.rule.layout = layout;
        s.types.io = dt::bf16;
        s.types.state = state;
        s.rule.form = T == 4 ? DK_GATE_RAW : DK_GATE_LOG;
        s.rule.beta = T == 16 ? DK_BETA_LOGIT : DK_BETA_PROB;
        s.rule.l2norm = T != 2;
        s.token_slots = state == dt::bf16;
        s.out_slots = state == dt::f16;
        check_decode(s);
      }
  for (dt state : {dt::f32, dt::bf16}) {  // decays that shrink the state below 2^-20 within 16 tokens
    decode_spec s = base(16, ++seed);
    s.heads = {2, 4, 128, 128};
    s.rule.layout = layout;
    s.types.io = dt::bf16;
    s.types.state = state;
    s.rule.fast_decay = true;
    s.token_slots = state == dt::bf16;
    check_decode(s);
  }
  decode_spec deltanet = base(4, ++seed);  // no gate, GVA 4, V != K
  deltanet.heads = {1, 4, 128, 64};
  deltanet.rule.layout = layout;
  deltanet.types.io = dt::bf16;
  deltanet.rule.gate = DK_GATE_NONE;
  check_decode(deltanet);
}

TEST_CASE("decode: several tokens with bf16 activations") { check_several_tokens(DK_STATE_K_LAST, 750); }

TEST_CASE("decode: several tokens with bf16 activations on V-last state") {
  check_several_tokens(DK_STATE_V_LAST, 770);
}

// KDA speculative verification (per-key gates, T > 1; the CUDA backend's
// tn_mma_per_key kernels on sm_90a with bf16 activations at T = 2..4,
// tn_mma_per_key_chunked in chunks of 4 tokens past that, and tn_per_key for
// V-last fp32 state on grids under one head per SM): both layouts, every
// state dtype, both K classes, the gate forms, per-token and other output
// slots, decays that take the state below 2^-20 within 16 tokens, several
// waves of blocks, and fp32 activations (the general kernel).
TEST_CASE("decode: per-key gates over several tokens") {
  std::uint64_t seed = 1300;
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST})
    for (int T : {2, 4, 16})
      for (dt state : {dt::f32, dt::bf16, dt::f16}) {
        decode_spec s = base(T, ++seed);
        s.B = 4;
        s.padded = {2};
        const int dim = T == 4 ? 64 : 128;
        s.heads = {2, 4, dim, dim};
        s.rule.gate = DK_GATE_PER_KEY;
        s.rule.layout = layout;
        s.rule.form = T == 16 ? DK_GATE_LOG : DK_GATE_RAW;
        s.rule.beta = T == 2 ? DK_BETA_LOGIT : DK_BETA_PROB;
        s.rule.l2norm = state != dt::bf16;
        s.types.state = state;
        s.types.io = dt::bf16;
        s.types.aux = state == dt::bf16 ? dt::bf16 : dt::f32;
        s.token_slots = state == dt::bf16;
        s.out_slots = state == dt::f16;
        check_decode(s);
      }
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST}) {
    for (dt state : {dt::f32, dt::bf16})  // strong decays
      for (int T : {4, 16}) {
        decode_spec fast = base(T, ++seed);
        fast.heads = {2, 4, 128, 128};
        fast.rule.gate = DK_GATE_PER_KEY;
        fast.rule.layout = layout;
        fast.rule.fast_decay = true;
        fast.types.state = state;
        fast.types.io = dt::bf16;
        check_decode(fast);
      }
    decode_spec wide = base(3, ++seed);  // several waves of blocks on 132 SMs
    wide.B = 72;
    wide.padded = {5};
    wide.heads = {4, 8, 128, 128};
    wide.rule.gate = DK_GATE_PER_KEY;
    wide.rule.layout = layout;
    wide.rule.form = DK_GATE_RAW;
    wide.types.io = dt::bf16;
    check_decode(wide);
    decode_spec no_bias = per_key_without_bias(4, ++seed);
    no_bias.rule.layout = layout;
    check_decode(no_bias);
  }
  decode_spec fp32_io = base(4, ++seed);  // fp32 activations: the general kernel
  fp32_io.heads = {2, 4, 128, 128};
  fp32_io.rule.gate = DK_GATE_PER_KEY;
  fp32_io.rule.form = DK_GATE_RAW;
  check_decode(fp32_io);
  seed = 1400;  // a chunk and a part (T = 6), two chunks and one token (T = 9)
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST})
    for (int T : {6, 9})
      for (dt state : {dt::f32, dt::bf16}) {
        decode_spec s = base(T, ++seed);
        s.B = 6;
        s.padded = {3};
        s.heads = {2, 8, T == 6 ? 64 : 128, 128};
        s.rule.gate = DK_GATE_PER_KEY;
        s.rule.layout = layout;
        s.rule.fast_decay = T == 9 && state == dt::f32;  // log gates
        s.rule.form = s.rule.fast_decay ? DK_GATE_LOG : DK_GATE_RAW;
        s.types.state = state;
        s.types.io = dt::bf16;
        s.token_slots = T == 9;
        check_decode(s);
      }
}

TEST_CASE("decode: page-strided pool") {
  std::uint64_t seed = 800;
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST})
    for (dt state : {dt::f32, dt::bf16})
      for (auto [slot_pad, head_pad] : {std::pair<int, int>{64, 0}, {4096, 16}, {0, 48}}) {
        decode_spec s = base(2, ++seed);
        s.rule.layout = layout;
        s.types.state = state;
        s.mem.slot_pad = slot_pad;
        s.mem.head_pad = head_pad;
        s.out_slots = slot_pad == 4096;
        check_decode(s);
      }
}

TEST_CASE("decode: strided views") {
  std::uint64_t seed = 900;
  for (qkv_layout qkv : {qkv_layout::fused, qkv_layout::interleaved})
    for (dt io : {dt::f32, dt::bf16}) {
      decode_spec s = base(2, ++seed);
      s.mem.qkv = qkv;
      s.types.io = io;
      s.mem.strided_out = true;
      s.mem.strided_gates = true;
      check_decode(s);
    }
  for (dk_gate_kind gate : {DK_GATE_NONE, DK_GATE_PER_KEY}) {  // strided beta (and KDA g rows)
    decode_spec s = base(4, ++seed);
    s.rule.gate = gate;
    s.mem.strided_gates = true;
    s.mem.qkv = qkv_layout::fused;
    check_decode(s);
  }
  decode_spec gva = base(2, ++seed);  // fused with GVA ratio 4 and V != K
  gva.heads = {2, 8, 64, 128};
  gva.mem.qkv = qkv_layout::fused;
  gva.mem.strided_out = true;
  check_decode(gva);

  decode_spec offset = base(2, ++seed);  // every offset carried in dk_tensor.byte_offset
  offset.mem.qkv = qkv_layout::fused;
  offset.mem.strided_out = true;
  offset.mem.byte_offset = true;
  offset.mem.slot_pad = 32;
  offset.out_slots = true;
  check_decode(offset);
}

TEST_CASE("decode: engine-sized batch") {
  decode_spec s = base(1, 1000);  // Qwen3-Next per-GPU heads (TP 4), 32 sequences, a few padded
  s.B = 32;
  s.heads = {4, 8, 128, 128};
  s.padded = {5, 17, 31};
  s.types.io = dt::bf16;
  check_decode(s);

  decode_spec mtp = base(4, 1001);
  mtp.B = 16;
  mtp.heads = {4, 8, 128, 128};
  mtp.types.io = dt::bf16;
  mtp.types.state = dt::bf16;
  mtp.token_slots = true;
  check_decode(mtp);
}

TEST_CASE("decode: empty batch") {
  // B = 0 is a valid (empty) step: success, nothing written, no launch of an empty grid.
  decode_spec s = base(1, 1100);
  s.B = 0;
  s.padded.clear();
  check_decode(s);
}

}  // namespace
}  // namespace dkc
