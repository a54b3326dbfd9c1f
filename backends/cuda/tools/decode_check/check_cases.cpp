// The correctness cases of dk_cuda_decode_check, in the order they run.
#include <algorithm>
#include <string>
#include <vector>

#include "decode_check.hpp"

namespace dkc {

std::vector<case_desc> check_cases(bool small) {
  std::vector<case_desc> cs;
  auto add = [&](case_desc c) { cs.push_back(c); };
  // Qwen3-Next shaped, raw gates, beta logit, l2norm, bf16 io: the engine's call.
  for (int T : {1, 2, 4, 16}) {
    case_desc c{"gdn raw T=" + std::to_string(T) + " bf16io f32state", 5, T, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"gdn log fp32 K=V=128 T=4 pad", 7, 4, 2, 4, 128, 128};
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"gdn bf16 state T=2", 4, 2, 2, 4, 128, 128};
    c.state = elem::bf16;
    c.io = elem::bf16;
    add(c);
  }
  {
    case_desc c{"gdn fp16 state+io T=3 GVA4", 3, 3, 1, 4, 128, 128};
    c.state = elem::f16;
    c.io = elem::f16;
    add(c);
  }
  {
    case_desc c{"deltanet none K=V=64 fp32 idx64", 6, 2, 2, 2, 64, 64};
    c.gate = DK_GATE_NONE;
    c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"kda per-key raw K=V=128 T=4", 3, 4, 2, 2, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.logit = c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"kda per-key log vlast T=2", 3, 2, 2, 4, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    add(c);
  }
  {
    case_desc c{"gdn vlast bf16 state T=4 out_slots", 5, 4, 2, 4, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.out_slots = true;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"gdn token_slots T=4 strided", 4, 4, 2, 4, 128, 128};
    c.token_slots = true;
    c.strided = true;
    c.raw = true;
    add(c);
  }
  {
    case_desc c{"gdn misaligned bf16 pool T=2", 3, 2, 2, 2, 128, 128};
    c.state = elem::bf16;
    c.misaligned = true;
    add(c);
  }
  {
    case_desc c{"generic K=96 V=80 T=3", 3, 3, 1, 2, 96, 80};
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"generic K=256 V=256 per-key T=16 bf16 state", 2, 16, 1, 2, 256, 256};
    c.gate = DK_GATE_PER_KEY;
    c.state = elem::bf16;
    add(c);
  }
  {
    case_desc c{"generic K=16 V=32 vlast T=5", 3, 5, 1, 1, 16, 32};
    c.layout = DK_STATE_V_LAST;
    add(c);
  }
  {
    case_desc c{"generic K=48 V=144 vlast f16 raw", 2, 2, 2, 2, 48, 144};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::f16;
    c.raw = true;
    add(c);
  }
  {
    case_desc c{"K=64 V=128 vlast bf16 gates scale=0.3", 4, 2, 2, 4, 64, 128};
    c.layout = DK_STATE_V_LAST;
    c.gates = elem::bf16;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"K=128 V=64 klast GVA2 T=16", 3, 16, 2, 4, 128, 64};
    c.logit = true;
    add(c);
  }
  {
    case_desc c{"K=V=64 vlast bf16 state token_slots", 3, 3, 1, 2, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.token_slots = true;
    add(c);
  }
  // T = 1 (the t1 kernels): both layouts and grid sizes (t1_small below
  // t1_small_heads_per_sm * SMs heads, t1 above), every state dtype, K = 64/128.
  {
    case_desc c{"t1 klast bf16 state raw B=24 out_slots pad", 24, 1, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 klast f32 raw B=40 GVA4 strided", 40, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.strided = true;
    add(c);
  }
  {
    case_desc c{"t1 klast f16 state none K=64 V=128", 5, 1, 2, 4, 64, 128};
    c.gate = DK_GATE_NONE;
    c.io = c.state = elem::f16;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 klast f32 K=128 V=80 token_slots", 6, 1, 2, 4, 128, 80};
    c.token_slots = true;
    c.logit = true;
    c.scale = 0.3f;
    add(c);
  }
  // t1_bf16io (K-last, bf16 q/k/v/out, from 132 heads on 132 SMs; below, t1_small
  // with bf16 I/O): fp32 and fp16 state, K = 64/128, partial tiles.
  {
    case_desc c{"t1 bf16io klast f32 raw B=40 GVA4 strided pad", 40, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 small bf16 io klast f32 K=128 V=80 token_slots idx64", 6, 1, 2, 4, 128, 80};
    c.io = c.gates = elem::bf16;
    c.token_slots = c.idx64 = true;
    c.logit = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"t1 bf16io klast f32 K=64 V=128 out_slots", 40, 1, 4, 8, 64, 128};
    c.raw = c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = true;
    add(c);
  }
  // t1_bf16io_smem (K-last fp32 state, 132 to 263 heads on 132 SMs, or from
  // 528 on as t1_bf16io_smem_wide, the same name): the state through shared
  // memory, padding, strides, per-token slots, separate output slots; the wide
  // instance's slot words with int32 (B=72 out_slots) and int64 indices, -1
  // padding included.
  {
    case_desc c{"t1 bf16io smem klast f32 raw B=20 GVA4 strided pad", 20, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem klast f32 raw B=72 out_slots pad", 72, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem wide klast f32 raw B=72 idx64 strided pad", 72, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.idx64 = c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem wide klast f32 K=64 B=80 token_slots idx64", 80, 1, 4, 8, 64, 128};
    c.l2norm = true;
    c.io = elem::bf16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem klast f32 K=64 V=112 token_slots idx64", 24, 1, 4, 8, 64, 112};
    c.l2norm = true;
    c.io = elem::bf16;
    c.token_slots = c.idx64 = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"t1 bf16io klast f16 state K=128 none B=33", 33, 1, 1, 8, 128, 128};
    c.gate = DK_GATE_NONE;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 small bf16 io klast f32 K=64 V=48 B=9 pad", 9, 1, 1, 2, 64, 48};
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.padding = true;
    add(c);
  }
  // t1_bf16io_smem on small grids of fp32 state (at most one head per 8 SMs:
  // 16 heads on 132 SMs), where t1_small runs otherwise.
  {
    case_desc c{"t1 bf16io smem small klast f32 raw B=2 GVA2 strided pad", 2, 1, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem small klast f32 K=64 V=48 B=1 token_slots idx64", 1, 1, 2, 8, 64, 48};
    c.l2norm = true;
    c.io = elem::bf16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  // t1_small_bf16io (small grids, bf16 I/O, K-last 16-bit state).
  {
    case_desc c{"t1 small bf16 io klast bf16 state raw K=128 V=80 pad", 3, 1, 2, 4, 128, 80};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 small bf16 io klast f16 state K=64 GVA2 token_slots strided", 2, 1, 2, 4, 64, 128};
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.strided = true;
    c.l2norm = true;
    add(c);
  }
  // t1_bf16io_smem with 16-bit state (bf16 I/O, K = 128, from 528 heads on
  // 132 SMs): padding, separate output slots, per-token slots, strides, V = 80
  // (5 of the 16-row tiles per head).
  {
    case_desc c{"t1 bf16io smem klast bf16 state B=72 out_slots pad", 72, 1, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem klast f16 state V=80 token_slots idx64 strided", 68, 1, 2, 8, 128, 80};
    c.l2norm = c.logit = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.idx64 = c.strided = true;
    c.scale = 0.3f;
    add(c);
  }
  // t1_pipe (K-last 16-bit state, at least t1_pipe_b16_min_heads_per_sm * SMs
  // heads: 528 on 132 SMs; with bf16 I/O only where the bf16-I/O tile does not
  // fit, K = 64).
  {
    case_desc c{"t1 pipe klast bf16 state io bf16 K=64 B=72 pad", 72, 1, 2, 8, 64, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe klast bf16 state io f32 raw B=80 GVA4 strided pad", 80, 1, 2, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.state = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe klast f16 state K=64 V=128 idx64 token_slots", 160, 1, 2, 4, 64, 128};
    c.io = c.state = elem::f16;
    c.idx64 = c.token_slots = true;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe klast bf16 state K=128 V=80 none", 136, 1, 1, 4, 128, 80};
    c.gate = DK_GATE_NONE;
    c.state = elem::bf16;
    c.scale = 0.3f;
    add(c);
  }
  {  // >= t1_pipe_chunk_min_tiles_per_warp tiles per warp: chunks dealt round-robin
    case_desc c{"chunked pipe klast f16 state K=64 B=3168 pad", 3168, 1, 2, 8, 64, 128};
    c.state = elem::f16;
    c.padding = c.l2norm = true;
    add(c);
  }
  // t1_bf16io_smem V-last (16-bit state, bf16 I/O, >= 528 heads on 132 SMs;
  // V = 48: a partial tile).
  {
    case_desc c{"t1 bf16io smem vlast bf16 state raw B=144 GVA4 pad", 144, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem vlast bf16 state B=80 out_slots (6 heads per SM)", 80, 1, 2, 10, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io smem vlast f16 state K=64 V=48 B=272 token_slots strided", 272, 1, 2, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.strided = true;
    c.scale = 0.3f;
    add(c);
  }
  // t1_pipe V-last (16-bit state with other activation dtypes, >= 1056 heads on
  // 132 SMs; V = 48: a partial tile).
  {
    case_desc c{"t1 pipe vlast f16 state K=64 V=48 out_slots strided", 272, 1, 2, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::f16;
    c.out_slots = c.strided = c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 pipe vlast bf16 state io f32 K=128 V=192 token_slots idx64", 132, 1, 1, 8, 128, 192};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.token_slots = c.idx64 = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"t1 vlast f32 io f32 token_slots strided", 5, 1, 2, 4, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.token_slots = c.strided = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast bf16 state raw B=40 pad", 40, 1, 4, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast bf16 state K=V=64 idx64 out_slots", 7, 1, 1, 4, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.state = elem::bf16;
    c.idx64 = c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast f16 state K=128 V=48 none", 3, 1, 1, 2, 128, 48};
    c.layout = DK_STATE_V_LAST;
    c.gate = DK_GATE_NONE;
    c.io = c.state = elem::f16;
    add(c);
  }
  {  // the t1 grid (>= 132 heads): lanes along V first; V = 48: a partial tile
    case_desc c{"t1 vlast f16 state K=64 V=48 B=40 out_slots", 40, 1, 1, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.logit = c.l2norm = true;
    c.state = elem::f16;
    c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 vlast f32 K=64 V=256 raw bf16 gates", 4, 1, 2, 2, 64, 256};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.gates = elem::bf16;
    add(c);
  }
  // fp32 state V-last with bf16 activations on the t1 grid (>= 132 heads):
  // decode_mode::t1_bf16io runs the t1 body with compile-time dtypes.
  {
    case_desc c{"t1 bf16io vlast f32 raw B=40 GVA4 strided pad", 40, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io vlast f32 K=64 V=48 out_slots idx64", 40, 1, 1, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = c.idx64 = true;
    add(c);
  }
  {
    // The slot as two 32-bit words (load_index_words): int64, -1 and out of range.
    case_desc c{"t1 bf16io vlast f32 K=128 idx64 pad", 40, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    c.idx64 = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io vlast f32 smem B=80 GVA4 strided pad", 80, 1, 2, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 bf16io vlast f32 smem K=64 V=48 B=160 out_slots idx64", 160, 1, 1, 4, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.io = elem::bf16;
    c.out_slots = c.idx64 = true;
    add(c);
  }
  // T = 1 with per-key gates (t1_per_key): both layouts, every state dtype,
  // both K classes, both grid sizes; K-last with bf16 activations where the
  // bf16-I/O tile fits runs t1_per_key_smem, K-last 16-bit state on small grids
  // (under 132 heads) t1_small_per_key.
  {
    case_desc c{"t1 per-key klast f32 raw", 4, 1, 2, 4, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem klast f32 raw bf16 io B=40 GVA4 strided pad", 40, 1, 8, 32, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.strided = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key klast bf16 state K=64 V=80 B=40 out_slots idx64", 40, 1, 2, 4, 64, 80};
    c.gate = DK_GATE_PER_KEY;
    c.l2norm = true;
    c.io = elem::bf16;
    c.state = elem::bf16;
    c.out_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem klast f32 log bf16 io K=64 V=112 B=1 token_slots idx64", 1, 1, 2, 4, 64, 112};
    c.gate = DK_GATE_PER_KEY;
    c.l2norm = true;
    c.io = elem::bf16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem klast bf16 state raw bf16 io B=72 out_slots pad", 72, 1, 4, 8, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem klast f16 state raw bf16 io V=80 B=40 GVA2 strided", 40, 1, 2, 4, 128, 80};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.l2norm = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.strided = true;
    add(c);
  }
  {
    case_desc c{"t1 small per-key klast bf16 state raw bf16 io B=3 GVA2 pad", 3, 1, 4, 8, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 small per-key klast f16 state log K=64 V=80 B=6 token_slots idx64", 6, 1, 2, 4, 64, 80};
    c.gate = DK_GATE_PER_KEY;
    c.l2norm = true;
    c.state = elem::f16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem vlast f32 raw bf16 io B=72 GVA2 pad", 72, 1, 4, 8, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem vlast bf16 state log bf16 io K=64 V=48 B=80 out_slots", 80, 1, 8, 8, 64, 48};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.io = elem::bf16;
    c.state = elem::bf16;
    c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key smem vlast f16 state raw bf16 io B=136 token_slots strided", 136, 1, 2, 4, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.raw = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.strided = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key vlast f32 log B=40 pad", 40, 1, 4, 8, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key vlast f16 state raw K=64 token_slots", 6, 1, 2, 4, 64, 64};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = true;
    c.state = elem::f16;
    c.token_slots = true;
    add(c);
  }
  {
    case_desc c{"t1 per-key vlast bf16 state raw bf16 io B=24 GVA2", 24, 1, 16, 32, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.raw = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.state = elem::bf16;
    add(c);
  }
  // T = 5, 6 with bf16 I/O on grids of 1 to 4 heads per SM (tn_bf16io_mid on a
  // 132-SM sm_90a where tn_mma_chunked is off: 192 and 320 heads), fp32 and
  // 16-bit state, K = 128 and 64.
  {
    case_desc c{"tn mid grid f32 state raw T=6 B=24 pad", 24, 6, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mid grid bf16 state K=64 T=5 B=40 token_slots", 40, 5, 2, 8, 64, 64};
    c.raw = true;
    c.io = c.gates = c.state = elem::bf16;
    c.token_slots = true;
    add(c);
  }
  // T = 2..4 with bf16 I/O, K-last, gate none or scalar: tn_mma (tensor cores),
  // every state dtype, K = 128 and 64, V != K, the slot and stride options, and
  // the grids of 1 to 4 heads per SM (where T = 5..16 takes tn_bf16io_mid).
  {
    case_desc c{"tn mma f16 state K=128 V=80 T=3 GVA4 strided out_slots", 6, 3, 2, 8, 128, 80};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.state = elem::f16;
    c.strided = c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"tn mma f32 state none K=64 V=48 T=2 B=40 idx64 pad", 40, 2, 4, 8, 64, 48};
    c.gate = DK_GATE_NONE;
    c.io = elem::bf16;
    c.idx64 = c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mma f32 state log K=128 T=4 B=9 token_slots scale=0.3", 9, 4, 4, 8, 128, 128};
    c.io = c.gates = elem::bf16;
    c.l2norm = true;
    c.token_slots = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"tn mma f32 state raw T=4 B=24 pad", 24, 4, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mma bf16 state K=64 T=3 B=40 token_slots", 40, 3, 2, 8, 64, 64};
    c.raw = true;
    c.io = c.gates = c.state = elem::bf16;
    c.token_slots = true;
    add(c);
  }
  // The same on V-last state (tn_mma with tn_mma_vlast): blocks of several
  // warps along V, some past V = 80 and 48.
  {
    case_desc c{"tn mma vlast f32 state raw T=4 B=24 pad", 24, 4, 4, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mma vlast bf16 state K=64 T=3 token_slots idx64", 5, 3, 2, 4, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.raw = true;
    c.io = c.gates = c.state = elem::bf16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"tn mma vlast f16 state K=128 V=80 T=3 GVA4 strided out_slots", 6, 3, 2, 8, 128, 80};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.state = elem::f16;
    c.strided = c.out_slots = true;
    add(c);
  }
  {
    case_desc c{"tn mma vlast f32 state none K=64 V=48 T=2 B=40 idx64 pad", 40, 2, 4, 8, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.gate = DK_GATE_NONE;
    c.io = elem::bf16;
    c.idx64 = c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mma vlast bf16 state log K=128 T=4 B=9 token_slots scale=0.3", 9, 4, 4, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.io = c.gates = c.state = elem::bf16;
    c.l2norm = true;
    c.token_slots = true;
    c.scale = 0.3f;
    add(c);
  }
  // T > 1 with bf16 I/O on V-last state past tn_mma's 4 tokens (tn_mma_chunked
  // where the table sets it, else tn_vlast): every state dtype, K = 128 and 64, V != K.
  {
    case_desc c{"tn vlast f32 state raw T=6 B=24 pad", 24, 6, 4, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn vlast bf16 state K=64 T=5 token_slots idx64", 5, 5, 2, 4, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.raw = true;
    c.io = c.gates = c.state = elem::bf16;
    c.token_slots = c.idx64 = true;
    add(c);
  }
  {
    case_desc c{"tn vlast f16 state K=128 V=80 T=16 out_slots strided", 3, 16, 2, 4, 128, 80};
    c.layout = DK_STATE_V_LAST;
    c.l2norm = true;
    c.io = elem::bf16;
    c.state = elem::f16;
    c.out_slots = c.strided = true;
    add(c);
  }
  {  // fp32 state at K = 64: the reduce-scattered sums on 8 lanes, V-groups past V
    case_desc c{"tn vlast f32 state K=64 V=48 T=5 B=40 out_slots", 40, 5, 2, 8, 64, 48};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.out_slots = true;
    add(c);
  }
  // T = 5..16 in chunks of 4 tokens on the tensor-core body (tn_mma_chunked):
  // two full chunks, a last chunk of 1 to 3 tokens, 16-bit state held as fp32
  // between chunks, per-token slots across chunk ends, both layouts.
  {
    case_desc c{"tn mma chunked f16 state K=128 V=80 T=8 GVA4 token_slots strided", 6, 8, 2, 8, 128, 80};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.state = elem::f16;
    c.token_slots = c.strided = true;
    add(c);
  }
  {
    case_desc c{"tn mma chunked bf16 state T=16 B=40 GVA2 out_slots pad", 40, 16, 4, 8, 128, 128};
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.out_slots = c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mma chunked f32 state log K=64 V=48 T=13 B=9 token_slots idx64 scale=0.3", 9, 13, 4, 8, 64, 48};
    c.io = c.gates = elem::bf16;
    c.l2norm = true;
    c.token_slots = c.idx64 = true;
    c.scale = 0.3f;
    add(c);
  }
  {
    case_desc c{"tn mma chunked f32 state none T=7 B=24", 24, 7, 4, 8, 128, 128};
    c.gate = DK_GATE_NONE;
    c.io = elem::bf16;
    c.l2norm = true;
    add(c);
  }
  {
    case_desc c{"tn mma chunked vlast bf16 state raw T=8 B=24 pad", 24, 8, 4, 8, 128, 128};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = c.gates = c.state = elem::bf16;
    c.padding = true;
    add(c);
  }
  {
    case_desc c{"tn mma chunked vlast f32 state K=64 T=12 B=40 GVA4 token_slots strided", 40, 12, 2, 8, 64, 64};
    c.layout = DK_STATE_V_LAST;
    c.raw = c.l2norm = true;
    c.io = c.gates = elem::bf16;
    c.token_slots = c.strided = true;
    add(c);
  }
  // T > 1 with per-key gates and bf16 activations: T = 2..4 on tensor cores
  // (tn_mma_per_key), T = 5..16 in chunks of 4 there (tn_mma_per_key_chunked;
  // V-last fp32 state on small grids: tn_per_key, below); every state dtype,
  // K = 128 and 64, warps past V, one and several waves; fp32 activations run
  // the general kernel.
  for (dk_state_layout layout : {DK_STATE_K_LAST, DK_STATE_V_LAST}) {
    const bool v_last = layout == DK_STATE_V_LAST;
    const std::string tn = v_last ? "tn per-key vlast " : "tn per-key ";
    auto per_key = [&](case_desc c) {
      c.name = tn + c.name;
      c.layout = layout;
      c.gate = DK_GATE_PER_KEY;
      return c;
    };
    {
      case_desc c = per_key({"f32 state raw T=4 B=24 pad", 24, 4, 4, 8, 128, 128});
      c.raw = c.logit = c.l2norm = true;
      c.io = c.gates = elem::bf16;
      c.padding = true;
      add(c);
    }
    {
      case_desc c = per_key({"bf16 state log K=64 T=3 token_slots idx64", 5, 3, 2, 4, 64, 64});
      c.io = c.state = elem::bf16;
      c.token_slots = c.idx64 = true;
      add(c);
    }
    {
      case_desc c = per_key({"f16 state raw K=128 V=80 T=16 out_slots strided", 3, 16, 2, 4, 128, 80});
      c.raw = c.l2norm = true;
      c.io = elem::bf16;
      c.state = elem::f16;
      c.out_slots = c.strided = true;
      add(c);
    }
    {  // V-last: K = 64, V = 48 as well
      case_desc c = per_key(v_last ? case_desc{"f32 state log K=64 V=48 T=2 B=80 GVA4", 80, 2, 8, 32, 64, 48}
                                   : case_desc{"f32 state log T=2 B=80 GVA4", 80, 2, 8, 32, 128, 128});
      c.l2norm = true;
      c.io = elem::bf16;
      add(c);
    }
    {
      case_desc c = per_key({"fp32 io raw T=4", 4, 4, 2, 4, 128, 128});
      c.raw = c.l2norm = true;
      add(c);
    }
    {  // V = 80: warps past V in V-last blocks of 4 warps
      case_desc c = per_key({"f16 state raw K=128 V=80 T=3 out_slots strided", 6, 3, 2, 8, 128, 80});
      c.raw = c.logit = c.l2norm = true;
      c.io = c.gates = elem::bf16;
      c.state = elem::f16;
      c.out_slots = c.strided = true;
      add(c);
    }
    {
      case_desc c = per_key({"bf16 state raw T=4 B=40 GVA2 pad", 40, 4, 16, 32, 128, 128});
      c.raw = c.l2norm = true;
      c.io = c.state = elem::bf16;
      c.padding = true;
      add(c);
    }
    {  // chunks past tn_mma's 4 tokens, fp32 and 16-bit state
      case_desc c = per_key({"f32 state raw T=6 B=24 pad", 24, 6, 4, 8, 128, 128});
      c.raw = c.logit = c.l2norm = true;
      c.io = c.gates = elem::bf16;
      c.padding = true;
      add(c);
    }
    {
      case_desc c = per_key({"bf16 state log K=64 T=5 token_slots idx64", 5, 5, 2, 4, 64, 64});
      c.io = c.state = elem::bf16;
      c.token_slots = c.idx64 = true;
      add(c);
    }
    {  // every token's state to its slot over two chunks, several waves
      case_desc c = per_key({"f32 state raw T=8 B=40 GVA2 token_slots", 40, 8, 16, 32, 128, 128});
      c.raw = c.logit = c.l2norm = true;
      c.io = c.gates = elem::bf16;
      c.token_slots = true;
      add(c);
    }
    {  // V = 48: a warp past V takes its part of every chunk's stage
      case_desc c = per_key({"bf16 state raw K=64 V=48 T=13 B=24 pad", 24, 13, 4, 8, 64, 48});
      c.raw = c.l2norm = true;
      c.io = elem::bf16;
      c.state = elem::bf16;
      c.padding = true;
      add(c);
    }
    {  // V-last: 36 heads, under one per SM, so tn_per_key (below)
      case_desc c = per_key({"f32 state log K=128 V=80 T=7 B=9 idx64 out_slots scale=0.3", 9, 7, 2, 4, 128, 80});
      c.l2norm = true;
      c.io = elem::bf16;
      c.idx64 = c.out_slots = true;
      c.scale = 0.3f;
      add(c);
    }
  }
  // V-last fp32 state under one head per SM stays on tn_per_key (sm90's
  // tn_mma_per_key_vlast_f32_min_heads_per_sm) at every T; 16-bit state does not.
  for (elem state : {elem::f32, elem::bf16}) {
    case_desc c{state == elem::f32 ? "tn per-key vlast f32 state raw T=4 B=3 small grid"
                                   : "tn per-key vlast bf16 state raw T=4 B=3 small grid",
                3, 4, 8, 32, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.raw = c.l2norm = true;
    c.io = elem::bf16;
    c.state = state;
    add(c);
  }
  {
    case_desc c{"tn per-key vlast f32 state raw T=9 B=3 small grid", 3, 9, 8, 32, 128, 128};
    c.gate = DK_GATE_PER_KEY;
    c.layout = DK_STATE_V_LAST;
    c.raw = c.logit = c.l2norm = true;
    c.io = elem::bf16;
    add(c);
  }
  if (small) {  // the sanitizer subset: one of each kernel family, small shapes
    std::vector<case_desc> sub;
    for (size_t i : {size_t(1), size_t(4), size_t(7), size_t(9), size_t(10), size_t(11), size_t(12),
                     size_t(13), size_t(15), size_t(17), size_t(19)})
      if (i < cs.size()) sub.push_back(cs[i]);
    for (auto& c : sub) c.B = std::min(c.B, 3);
    for (const case_desc& c : cs)  // the T = 1 kernels, both grid sizes, and T > 1 on mid grids (B stays)
      if (c.name.rfind("t1 ", 0) == 0 || c.name.rfind("tn ", 0) == 0) sub.push_back(c);
    return sub;
  }
  return cs;
}

}  // namespace dkc
