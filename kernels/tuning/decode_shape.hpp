// What a tuning table says about the decode kernel (kernels/decode/decode.cu picks,
// kernels/decode/decode_instances.cuh builds).
// Plain constexpr data: each arch family has one small header (sm80.hpp ...)
// that specialises decode_tuning<family>; the host picks the family from
// target.arch at run time, and the device pass of that arch compiles only its
// own family's kernels (DK_ARCH_FAMILY), so the tables cost no extra builds.
#pragma once

namespace dk::tuning {

// Kernel variants by key dim: K = 128 and K = 64 are exact fits (no
// predication along K); everything else up to 256 takes the generic one.
enum class decode_class : int { k128 = 0, k64 = 1, generic = 2 };

// How one block holds its tile of the state in registers. A thread owns a
// (keys x values) patch of the K x V state; the contiguous dim of the pool is
// read in 16-byte vectors (4 fp32 or 8 bf16/fp16 elements).
//   K-last pool [.., V, K]: keys per thread = vec_chunks * elems_per_16B,
//                           values (rows) per thread = rows
//   V-last pool [.., K, V]: keys (rows) per thread = rows,
//                           values per thread = vec_chunks * elems_per_16B
// A warp puts lanes_k lanes side by side along K (sums over K are butterfly
// shuffles among them) and the rest of its lanes along V; warps_k warps split
// K further (sums finished through shared memory). The keys one block covers,
// keys_per_thread * lanes_k * warps_k, must equal K for k128/k64 and reach 256
// for generic. Up to max_warps_v warps split V; the launch uses fewer (smaller
// V tiles, more blocks) while the grid would leave SMs idle.
struct decode_shape {
  int lanes_k;
  int vec_chunks;
  int rows;
  int warps_k;
  int max_warps_v;
};

// Which kernel body a launch runs (kernels/decode/decode_kernel.cuh lists the
// bodies; mode_for in kernels/decode/decode_launch.cuh picks the mode):
//   general   any T, every gate kind and class: the T tokens' inputs staged in
//             shared memory, the state tile in fp32 registers.
//   t1        T = 1, gate none or scalar, K = 64 or 128: every thread loads its
//             own q/k/v straight into registers (K-last: no shared memory, no
//             barrier; V-last with warps_k > 1 finishes its sums through shared
//             memory behind one barrier),
//             16-bit state stays packed in registers (two per 32-bit word), so
//             a thread holds twice the elements of an fp32 tile at the same
//             register count.
//   t1_small  the t1 body with the family's small-grid shape, for grids of
//             fewer than t1_small_heads_per_sm * SMs (sequence, head) pairs:
//             fewer elements per thread, more blocks, a shorter chain per block
//             (latency-bound small batches).
//   t1_small_bf16io  t1_small when q, k, v and the output are all bf16, the
//             state is K-last and 16-bit and the family's t1_small_bf16io is
//             set: the same body with the activation types fixed at compile
//             time (no dtype branches).
//   t1_pipe   T = 1, gate none or scalar, K = 64 or 128, for grids of at least
//             t1_pipe_min_heads_of(...) * SMs (sequence, head) pairs: persistent
//             walkers (K-last: warps, V-last: blocks) stream tiles through a ring
//             of bulk copies into shared memory, so the bytes in flight are not
//             capped by registers (kernels/decode/decode_pipe.cuh).
//   t1_bf16io t1 (not t1_small) when q, k, v and the output are all bf16 and
//             the family's t1_bf16io is set. K-last: the same tiles with
//             compile-time activation types and the sums reduce-scattered
//             (kernels/decode/decode_t1_bf16io.cuh); V-last fp32 state: the t1
//             body with compile-time activation types (16-bit V-last runs t1).
//   t1_bf16io_smem  t1_bf16io for K-last fp32 state on grids of fewer than
//             t1_bf16io_smem_max_heads_per_sm * SMs pairs, or of at least
//             t1_bf16io_smem_min_heads_per_sm * SMs (CUDA sm_80+), and on the
//             small grids of at most one pair per
//             t1_bf16io_smem_small_sms_per_head SMs: the same
//             body, but the state tile arrives in shared memory by cp.async
//             instead of registers, so the kernel fits t1_bf16io_smem_bound
//             (64 registers: 32 one-warp blocks per SM, one wave at fp32 B=8);
//             and for K-last 16-bit state with bf16 I/O on grids of at least
//             t1_bf16io_smem_b16_min_heads_per_sm * SMs pairs (ahead of t1_pipe);
//             V-last state with bf16 I/O from
//             t1_bf16io_smem_vlast_{f32,b16}_min_heads_per_sm * SMs pairs runs the
//             t1 V-last body with its tile in shared memory (16-bit: ahead of t1_pipe).
//   t1_bf16io_smem_wide  t1_bf16io_smem for fp32 state on the grids of many
//             waves (from t1_bf16io_smem_min_heads_per_sm): the same kernel but
//             for the slot index, read as two 32-bit words, and the gate,
//             finished after the sums (see the body).
//   tn_bf16io T = 2..16 (speculative / MTP verification) with bf16 q, k, v and
//             output, K-last state of any dtype, gate none or scalar, K = 64 or
//             128, where the family's tn_bf16io is set: one-warp blocks hold
//             their tile in fp32 registers across the tokens, the per-token
//             scalars one token per lane, q and k loaded one token ahead, the
//             sums reduce-scattered as in t1_bf16io
//             (kernels/decode/decode_tn_bf16io.cuh).
//   tn_bf16io_mid  tn_bf16io on grids of tn_bf16io_mid_min_heads_per_sm up to
//             tn_bf16io_mid_max_heads_per_sm * SMs (sequence, head) pairs: the
//             same kernel under the register cap tn_bf16io_mid_bound (grids of
//             about two waves, where a warp's own schedule matters more than
//             the warps resident per SM).
//   tn_vlast  T = 2..16 with bf16 q, k, v and output on V-last state of any
//             dtype, gate none or scalar, K = 64 or 128, where the family's
//             tn_vlast is set: the t1 V-last blocks with the tile in fp32
//             registers across the tokens; with one warp along K (the table's
//             lanes x keys covering K) a token's sums finish in the warp, with
//             several they finish in shared memory, one barrier per token
//             (kernels/decode/decode_tn_vlast.cuh). T = 2..tn_mma_max_tokens
//             take tn_mma instead where the family's tn_mma_vlast is set.
//   t1_per_key  T = 1 with per-key gates (Kimi Delta Attention), K = 64 or
//             128, any activation and state dtype and layout, where the
//             family's t1_per_key is set: the t1 body and tiles, each thread's
//             keys with their own decay (loaded after the tile, finished while
//             it flies, shared by the lanes that hold the same keys, folded
//             into q and k for the sums and into the update).
//   t1_per_key_smem  t1_per_key for K-last state with bf16 q, k, v and output
//             where the bf16-I/O tile fits, on every grid, where the family's
//             t1_per_key_smem is set: the t1_bf16io_smem body (tile in shared
//             memory by cp.async, sums reduce-scattered) with the same decays,
//             the head's gate and dt_bias rows staged in shared memory by
//             cp.async ahead of the tile where they are 16-byte aligned;
//             V-last state with bf16 q, k, v and output likewise where
//             t1_per_key_smem_vlast is set, on the grids where the scalar gate
//             takes the V-last t1_bf16io_smem body (its tile and blocks).
//   tn_per_key  T = 2..16 with per-key gates (KDA), bf16 q, k, v and output,
//             state of any dtype, K = 64 or 128. K-last where the family's
//             tn_bf16io and tn_per_key are set: the tn_bf16io body with a
//             decay per key (the tile holds S itself and takes each key's
//             decay in the update), at the register caps
//             tn_per_key_{f32,b16}_bound. V-last where tn_vlast, tn_per_key
//             and tn_per_key_vlast are set: the tn_vlast body and blocks with
//             the same decays, at tn_vlast_bound. Where tn_mma_per_key (and
//             tn_mma_per_key_chunked) take a call, they run it instead; where
//             they take every call it could get (tn_mma_per_key_chunked_covers:
//             all but V-last fp32 state on small grids), it is not built.
//             Everything else with T > 1 runs general.
//   t1_small_per_key  t1_per_key for K-last 16-bit state on the grids where
//             the scalar gate takes t1_small (fewer than t1_small_heads_per_sm *
//             SMs pairs), where the family's t1_small_per_key is set: the t1
//             body with t1_small's tile and blocks and the keys' decays (issued
//             before the tile, as the gate there), any activation dtype, at
//             t1_per_key's register caps.
//   tn_mma    T = 2..tn_mma_max_tokens with bf16 q, k, v and output, K-last
//             state of any dtype, gate none or scalar, K = 64 or 128, where the
//             family's tn_mma is set (NVIDIA sm_80+): the tokens at once on
//             tensor cores (tf32 mma), one warp per 16 value rows, the state
//             after the last token (or after each, to its per-token slot)
//             computed from the tile as loaded (kernels/decode/decode_tn_mma.cuh).
//             V-last state too where tn_mma_vlast is set (tn_mma_vlast_warps_v
//             warps along V per block). Longer T takes tn_mma_chunked where
//             set, else tn_bf16io / tn_vlast.
//   tn_mma_per_key  the same with per-key gates (KDA), where tn_mma_per_key is
//             set too (both layouts where tn_mma takes them): each key's decays
//             in the mma's B operands and the k.k, k.q sums, staged per block in
//             shared memory (kernels/decode/decode_tn_mma_keys.cuh). Longer T
//             takes tn_mma_per_key_chunked where set, else tn_per_key.
//   tn_mma_chunked  T = tn_mma_max_tokens + 1..tn_mma_chunked_max_tokens on
//             tn_mma's body and layouts, gate none or scalar, where the
//             family's tn_mma_chunked is set: chunks of 4 tokens one after
//             another, the tile held as fp32 between them (16-bit state too).
//   tn_mma_per_key_chunked  the same chunks with per-key gates (KDA), where the
//             family's tn_mma_per_key_chunked is set too: the block stages
//             every chunk's decays and sums before the first, behind one barrier.
enum class decode_mode : int {
  general = 0,
  t1 = 1,
  t1_small = 2,
  t1_pipe = 3,
  t1_bf16io = 4,
  t1_bf16io_smem = 5,
  t1_bf16io_smem_wide = 6,
  tn_bf16io = 7,
  t1_small_bf16io = 8,
  tn_bf16io_mid = 9,
  tn_vlast = 10,
  t1_per_key = 11,
  t1_per_key_smem = 12,
  tn_per_key = 13,
  t1_small_per_key = 14,
  tn_mma = 15,
  tn_mma_per_key = 16,
  tn_mma_chunked = 17,
  tn_mma_per_key_chunked = 18
};
constexpr int kDecodeModes = 19;

// Besides the shapes, each family's decode_tuning<F> holds:
//   min_blocks_per_sm  the launch halves the warps along V (down to 1) while the
//                      grid has fewer blocks than this per SM/CU;
//   launch_bound       0, or the block size __launch_bounds__ promises when it
//                      should exceed the real one: caps registers per thread
//                      (CUDA: 64K / launch_bound) so more blocks stay resident.
//   shape(c, k_last, state_bytes)              the general kernels' shapes;
//   t1_{klast,vlast}_{f32,b16}_{lanes,rows,bound}, t1_max_warps_v (K-last),
//   t1_vlast_max_warps_v, t1_small_max_warps_v  the T = 1 kernels' shapes and
//                      register caps, turned
//                      into shapes by t1_shape_of / t1_launch_bound_of below
//                      (k128, k64; K-last warps_k 1; for 16-bit state
//                      vec_chunks * 8 elements per row are held packed);
//   t1_stream_state    streaming (evict-first) cache hints on the state;
//   t1_kernels         whether T = 1 takes the t1 kernels at all;
//   t1_per_key         whether T = 1 with per-key gates takes them too
//                      (decode_mode::t1_per_key; else the general kernel);
//   t1_per_key_{klast,vlast}_{f32,b16}_bound  its register caps;
//   t1_per_key_smem, t1_per_key_smem_{f32,b16}_bound  whether K-last per-key
//                      launches with bf16 activations take
//                      decode_mode::t1_per_key_smem, and its register caps;
//   t1_per_key_smem_vlast  whether V-last ones take it too (where and at the
//                      caps of the scalar gate's V-last t1_bf16io_smem body);
//   t1_min_blocks_per_sm  as above, for the T = 1 kernels;
//   t1_small_heads_per_sm                      where t1_small takes over (0: never);
//   t1_small_bf16io    whether small grids with bf16 activations and K-last 16-bit
//                      state take t1_small_bf16io;
//   t1_small_per_key   whether small grids with per-key gates and K-last 16-bit
//                      state take decode_mode::t1_small_per_key (with t1_per_key set);
//   t1_bf16io_smem_small_sms_per_head  fp32 K-last state with bf16 activations
//                      on grids of at most one (sequence, head) pair per this
//                      many SMs takes t1_bf16io_smem instead of t1_small (0: never);
//   t1_pipe_{f32,b16}_min_heads_per_sm         where t1_pipe takes over for K-last
//                      fp32 / 16-bit state (0: never; only sm_90+, which has bulk
//                      copies), with a ring of t1_pipe_stages tiles per warp
//                      (stages - 1 in flight besides the one being computed),
//                      t1_pipe_warps warps per block, t1_pipe_blocks_per_sm
//                      resident blocks (the persistent grid), and tiles dealt to
//                      warps in chunks of t1_pipe_chunk (0: one contiguous run
//                      each) from t1_pipe_chunk_min_tiles_per_warp tiles per warp;
//   t1_pipe_vlast_b16_min_heads_per_sm         the same for V-last 16-bit state (no
//                      V-last fp32 pipe), whose walkers are blocks of
//                      t1_pipe_vlast_warps warps, t1_pipe_vlast_blocks_per_sm per SM,
//                      t1_pipe_vlast_stages tiles of one t1_pipe_vlast_row_bytes run
//                      of every key row in flight.
//   t1_bf16io          whether T = 1 launches of the t1 grid size with bf16
//                      q/k/v/output take decode_mode::t1_bf16io: K-last the
//                      t1_bf16io body (where the tile fits), with register caps
//                      t1_bf16io_{f32,b16}_bound and blocks of up to
//                      t1_bf16io_max_warps_v warps; V-last fp32 state the t1
//                      V-last tiles, caps and blocks.
//   t1_bf16io_smem_max_heads_per_sm, t1_bf16io_smem_min_heads_per_sm,
//   t1_bf16io_smem_bound  where t1_bf16io_smem takes over from t1_bf16io:
//                      grids under the first or from the second (heads per SM;
//                      0: never), and its register cap;
//   t1_bf16io_smem_b16_min_heads_per_sm, t1_bf16io_smem_b16_bound  the same
//                      body for K-last 16-bit state (where the bf16-I/O tile
//                      fits): from this many heads per SM (0: never), before
//                      t1_pipe is considered, and its register cap (V-last too);
//   t1_bf16io_smem_vlast_b16_min_heads_per_sm  the same for V-last 16-bit state
//                      (0: never);
//   t1_bf16io_smem_vlast_f32_min_heads_per_sm  V-last fp32 state with bf16 I/O:
//                      from this many heads per SM (0: never) the t1_bf16io_smem
//                      V-last body instead of the register tile;
//   t1_bf16io_smem_vlast_{f32,b16}_warps_v  warps along V per block of the
//                      V-last t1_bf16io_smem body (each warp covers 128 bytes of
//                      every key row of the tile; warps_k more split K);
//   t1_vlast_b16_v_major_lanes  V-last 16-bit state on the t1 grid: a warp's
//                      lanes along V first (geometry::v_major_lanes);
//   t1_bf16io_f32_lookahead_blocks_per_sm  fp32-state t1_bf16io grids of less
//                      than two waves of this many blocks per SM: each block of
//                      the first wave first prefetches into L2 the state tile of
//                      the block this many blocks per SM later (0: off).
//   t1_vlast_smem_{f32,b16}_lookahead_waves  V-last shared-memory T = 1 grids
//                      (t1_bf16io_smem, t1_per_key_smem) of fewer blocks than
//                      this many waves (a wave: the blocks the launch bound
//                      keeps resident): every block, once its tile is issued,
//                      prefetches into L2 the tile of the block one wave on (0: off).
//   programmatic_prefetch_max_bytes_per_sm  CUDA sm_90+, programmatic launch:
//                      blocks of the t1_small and general kernels prefetch their
//                      state tile and operand lines into L2 before waiting for the previous kernel
//                      when the call reads at most this many state bytes per SM.
//   programmatic_late_prefetch_blocks_per_sm  the same prefetch on the rotated
//                      t1 grids by the last this many blocks per SM of their
//                      first wave (0: none); for K-last state.
//   programmatic_late_prefetch_vlast_blocks_per_sm  the same for V-last state.
//   tn_bf16io, tn_bf16io_lanes, tn_bf16io_rows, tn_bf16io_bound(16)  whether T > 1
//                      launches with bf16 I/O take decode_mode::tn_bf16io, and
//                      its tile: lanes along K and rows per thread for K = 128
//                      (K = 64 halves the lanes; 16-bit state is held as fp32
//                      like fp32 state, so its tile covers the same keys), and
//                      its register cap (launch bound) for fp32 and for 16-bit state.
//   tn_bf16io_mid_min_heads_per_sm, tn_bf16io_mid_max_heads_per_sm,
//   tn_bf16io_mid_bound  where decode_mode::tn_bf16io_mid takes over from
//                      tn_bf16io: grids of at least the first and fewer than the
//                      second (heads per SM; a second of 0: never), and its
//                      register cap for both state widths.
//   tn_vlast, tn_vlast_{f32,b16}_lanes, tn_vlast_{f32,b16}_rows, tn_vlast_max_warps_v,
//   tn_vlast_bound     whether T > 1 launches with bf16 I/O on V-last state take
//                      decode_mode::tn_vlast, its tile (lanes along K and keys per
//                      thread at K = 128, one 16-byte vector of values per thread,
//                      warps per block) and its register cap.
//   tn_vlast_b16_scatter_stages  16-bit state with one warp along K: the
//                      reduce-scatter stages a token's sums take before their
//                      butterflies (0: butterflies only; fp32 state's tile takes
//                      the whole scatter).
//   tn_per_key, tn_per_key_{f32,b16}_bound  whether T > 1 launches with per-key
//                      gates and bf16 I/O on K-last state take
//                      decode_mode::tn_per_key (with tn_bf16io set), and its
//                      register caps there.
//   tn_mma, tn_mma_max_tokens, tn_mma_{f32,b16}_bound  whether T > 1 launches
//                      with bf16 I/O, gate none or scalar and at most
//                      tn_mma_max_tokens (<= 4) tokens on K-last state take
//                      decode_mode::tn_mma, and its register caps.
//   tn_mma_vlast, tn_mma_vlast_warps_v, tn_mma_vlast_b16_bound,
//   tn_mma_vlast_bf16_reload_k  whether such launches on V-last state take it
//                      too (before tn_vlast), its warps along V per block there
//                      (16 values each), its register cap for 16-bit state, and
//                      whether bf16 state's update loads k again rather than
//                      keeping it in registers.
//   tn_mma_chunked, tn_mma_chunked_max_tokens, tn_mma_chunked_bound  whether
//                      longer such launches (up to tn_mma_chunked_max_tokens
//                      tokens, gate none or scalar) take decode_mode::tn_mma_chunked
//                      on the layouts tn_mma takes, and its register cap.
//   tn_mma_per_key, tn_mma_per_key_warps_v  whether such launches with per-key
//                      gates take decode_mode::tn_mma_per_key (on the layouts
//                      tn_mma takes), and its warps along V per block (whatever
//                      the grid: they share the keys' decays).
//   tn_mma_per_key_chunked  whether longer per-key launches (up to
//                      tn_mma_chunked_max_tokens tokens) take
//                      decode_mode::tn_mma_per_key_chunked, at tn_mma_chunked_bound.
//   tn_mma_per_key_vlast_f32_min_heads_per_sm  V-last fp32 state takes it
//                      from this many (sequence, head) pairs per SM on (fewer:
//                      tn_per_key).
//   tn_mma_per_key_late_prefetch_blocks_per_sm  its K-last blocks per SM that
//                      prefetch their tiles before the programmatic wait (the
//                      last of the first wave; V-last: programmatic_late_prefetch_vlast_blocks_per_sm).
//   tn_mma_{,vlast_}{f32,b16}_lookahead_warps  tn_mma blocks prefetch into L2
//                      the tile of the block this many warps per SM (over the
//                      block's warps, times the SMs) on; 0 = off.
//   tn_per_key_vlast, tn_per_key_vlast_{f32,b16}_lanes, tn_per_key_vlast_{f32,b16}_rows
//                      whether such launches on V-last state take it too (with
//                      tn_vlast set: its blocks and register cap), and the tile
//                      there (lanes along K, keys per thread).
template <int Family>
struct decode_tuning;  // no primary definition: a family without a table fails to compile

// The device pass that compiles a table's kernels: its own family, except for
// tables a tuning tool defines on top of a real family (backends/*/tools).
template <int Family>
struct decode_device_family {
  static constexpr int value = Family;
};

// Helper for tables: 16-byte vectors along K that cover `keys` with `lanes` lanes.
constexpr int chunks_for(int keys, int lanes, int state_bytes) {
  return keys / (lanes * (16 / state_bytes));
}

// A T = 1 shape from a table's knobs: `lanes` along K, `rows` per thread (K-last:
// values; V-last: keys), for K = 128. K-last rows are whole 16-byte vectors
// along K (K = 64 halves the lanes); `small` (the t1_small shape) halves the
// K-last rows. V-last threads hold one 16-byte vector along V, and K is split
// over lanes x rows x warps_k = K warps (K = 64: half the warps, or half the
// lanes when there is one); max_warps_v counts warps per block, so V-last
// blocks have max_warps_v / warps_k warps along V (at least one).
constexpr decode_shape t1_shape_from(decode_class c, bool k_last, int state_bytes, bool small,
                                     int lanes, int rows, int max_warps_v) {
  const int keys = c == decode_class::k64 ? 64 : 128;
  if (k_last) {
    const int l = keys == 64 ? lanes / 2 : lanes;
    const int r = small && rows > 1 ? rows / 2 : rows;
    return {l, chunks_for(keys, l, state_bytes), r, 1, max_warps_v};
  }
  int wk = keys / (lanes * rows), l = lanes;
  if (wk < 1) {
    wk = 1;
    l = keys / rows;
  }
  const int wv = max_warps_v / wk > 0 ? max_warps_v / wk : 1;
  return {l, 1, rows, wk, wv};
}

// Whether small grids with bf16 activations take t1_small_bf16io for a layout and
// state width: the one rule both the mode choice and the kernel instantiation follow.
template <class Table>
constexpr bool t1_small_bf16io_takes(bool k_last, int state_bytes) {
  return Table::t1_small_bf16io && k_last && state_bytes == 2;
}

// Where t1_pipe takes over (heads per SM; 0: never) for a layout and state width:
// the one rule both the mode choice and the kernel instantiation follow.
template <class Table>
constexpr int t1_pipe_min_heads_of(bool k_last, int state_bytes) {
  return k_last ? (state_bytes == 4 ? Table::t1_pipe_f32_min_heads_per_sm : Table::t1_pipe_b16_min_heads_per_sm)
                : (state_bytes == 4 ? 0 : Table::t1_pipe_vlast_b16_min_heads_per_sm);
}

// The T = 1 kernels' register cap (launch bound) from a table's t1_* constants.
template <class Table>
constexpr int t1_launch_bound_of(bool k_last, int state_bytes, bool bf16io = false, bool smem_state = false) {
  if (smem_state) return state_bytes == 4 ? Table::t1_bf16io_smem_bound : Table::t1_bf16io_smem_b16_bound;
  if (bf16io && k_last) return state_bytes == 4 ? Table::t1_bf16io_f32_bound : Table::t1_bf16io_b16_bound;
  return k_last ? (state_bytes == 4 ? Table::t1_klast_f32_bound : Table::t1_klast_b16_bound)
                : (state_bytes == 4 ? Table::t1_vlast_f32_bound : Table::t1_vlast_b16_bound);
}

// t1_per_key's register cap: the t1 tiles hold the keys' decays as well
// (smem_state: t1_per_key_smem's).
template <class Table>
constexpr int t1_per_key_bound_of(bool k_last, int state_bytes, bool smem_state = false) {
  if (smem_state && k_last) return state_bytes == 4 ? Table::t1_per_key_smem_f32_bound : Table::t1_per_key_smem_b16_bound;
  if (smem_state) return t1_launch_bound_of<Table>(false, state_bytes, true, true);  // the scalar V-last smem caps
  return k_last ? (state_bytes == 4 ? Table::t1_per_key_klast_f32_bound : Table::t1_per_key_klast_b16_bound)
                : (state_bytes == 4 ? Table::t1_per_key_vlast_f32_bound : Table::t1_per_key_vlast_b16_bound);
}

// Whether T > 1 launches with bf16 I/O on a layout take the tn_bf16io kernels, and
// whether the family has the mid-grid instance: the one rule both the mode
// choice and the kernel instantiation follow.
template <class Table>
constexpr bool tn_bf16io_takes(bool k_last) {
  return Table::tn_bf16io && k_last;
}
template <class Table>
constexpr bool tn_bf16io_mid_takes(bool k_last) {
  return tn_bf16io_takes<Table>(k_last) && Table::tn_bf16io_mid_max_heads_per_sm > 0;
}
// Whether T > 1 with per-key gates on a layout may take decode_mode::tn_per_key
// (the host also asks for bf16 activations): K-last on the tn_bf16io body,
// V-last on the tn_vlast body.
template <class Table>
constexpr bool tn_per_key_takes(bool k_last) {
  return Table::tn_per_key && (k_last ? Table::tn_bf16io : Table::tn_vlast && Table::tn_per_key_vlast);
}

// Whether per-key T = 1 launches on small grids take decode_mode::t1_small_per_key
// for a layout and state width: the one rule both the mode choice and the
// kernel instantiation follow.
template <class Table>
constexpr bool t1_small_per_key_takes(bool k_last, int state_bytes) {
  return Table::t1_kernels && Table::t1_per_key && Table::t1_small_per_key && Table::t1_small_heads_per_sm > 0 &&
         k_last && state_bytes == 2;
}

// Whether T = 1 with per-key gates takes decode_mode::t1_per_key (else general).
template <class Table>
constexpr bool t1_per_key_takes() {
  return Table::t1_kernels && Table::t1_per_key;
}
// Whether per-key launches on a layout may take decode_mode::t1_per_key_smem
// (the host also asks for bf16 activations, a fitting tile and enough heads).
template <class Table>
constexpr bool t1_per_key_smem_takes(bool k_last) {
  return t1_per_key_takes<Table>() && Table::t1_per_key_smem && (k_last || Table::t1_per_key_smem_vlast);
}

// The same for V-last state (decode_mode::tn_vlast).
template <class Table>
constexpr bool tn_vlast_takes(bool k_last) {
  return Table::tn_vlast && !k_last;
}

// Whether T > 1 launches (with bf16 I/O, gate none or scalar, at most
// Table::tn_mma_max_tokens tokens) on a layout take decode_mode::tn_mma: the one
// rule the mode choice and the kernel instantiation follow.
template <class Table>
constexpr bool tn_mma_takes(bool k_last) {
  return Table::tn_mma && (k_last || Table::tn_mma_vlast);
}
// The same for longer T in chunks of 4 tokens (decode_mode::tn_mma_chunked).
template <class Table>
constexpr bool tn_mma_chunked_takes(bool k_last) {
  return Table::tn_mma_chunked && tn_mma_takes<Table>(k_last);
}
// Whether tn_mma_chunked takes every T a decode call may have past tn_mma's
// (max_tokens: dk::kMaxDecodeTokens): the scalar-gate tn_bf16io(_mid) and
// tn_vlast instances then take no call and are not built (the general kernel
// stands in their table slots; tn_per_key keeps their bodies).
template <class Table>
constexpr bool tn_mma_chunked_covers(bool k_last, int max_tokens) {
  return tn_mma_chunked_takes<Table>(k_last) && Table::tn_mma_chunked_max_tokens >= max_tokens;
}
// The same for per-key gates (decode_mode::tn_mma_per_key).
template <class Table>
constexpr bool tn_mma_per_key_takes(bool k_last) {
  return Table::tn_mma_per_key && tn_mma_takes<Table>(k_last);
}
// The same for longer T in chunks (decode_mode::tn_mma_per_key_chunked).
template <class Table>
constexpr bool tn_mma_per_key_chunked_takes(bool k_last) {
  return Table::tn_mma_per_key_chunked && tn_mma_per_key_takes<Table>(k_last) &&
         tn_mma_chunked_takes<Table>(k_last);
}
// Whether the per-key tn_mma modes take every per-key call of T > 1 that
// tn_per_key could get with this layout and state width (max_tokens:
// dk::kMaxDecodeTokens): tn_per_key's instance is then not built. V-last
// fp32 state under tn_mma_per_key_vlast_f32_min_heads_per_sm stays on it.
template <class Table>
constexpr bool tn_mma_per_key_chunked_covers(bool k_last, int state_bytes, int max_tokens) {
  const bool small_grids_stay = !k_last && state_bytes == 4 && Table::tn_mma_per_key_vlast_f32_min_heads_per_sm > 0;
  return tn_mma_per_key_chunked_takes<Table>(k_last) && tn_mma_chunked_covers<Table>(k_last, max_tokens) &&
         !small_grids_stay;
}
// The tn_mma tile (decode_tn_mma.cuh): warps of 16 values x K keys, lane 4 g + c
// holding 2 values and K / 4 keys. K-last: 4 lanes along K (K / 4 keys each) x
// 8 along V, 2 rows per lane, one warp per block. V-last: any shape of the same
// cover (16 values, K keys: 16-byte vectors of values, lanes along K to fill
// the warp), max_warps_v warps along V.
// Per-key gates: tn_mma_per_key_warps_v warps along V on both layouts (they
// share the keys' decays).
template <class Table>
constexpr decode_shape tn_mma_shape_of(decode_class c, bool k_last, int state_bytes, bool per_key) {
  const int keys = c == decode_class::k64 ? 64 : 128;
  const int vec = 16 / state_bytes, lanes_k = 32 / (16 / vec);  // lanes_v = 16 / vec
  const int warps_v = per_key ? Table::tn_mma_per_key_warps_v : k_last ? 1 : Table::tn_mma_vlast_warps_v;
  return k_last ? decode_shape{4, keys / 4 / vec, 2, 1, warps_v}
                : decode_shape{lanes_k, 1, keys / lanes_k, 1, warps_v};
}

// The tn_bf16io tile (K-last, one warp per block): 8 keys per thread for both
// state widths, as fp32 registers (the state stays fp32 between tokens).
template <class Table>
constexpr decode_shape tn_shape_of(decode_class c, int state_bytes) {
  return t1_shape_from(c, true, state_bytes, false, Table::tn_bf16io_lanes, Table::tn_bf16io_rows, 1);
}

// The tn_vlast tile: the t1 V-last geometry (keys split over lanes x rows x
// warps along K) with the table's own lanes and rows, for fp32 registers
// (per_key: tn_per_key's on V-last state).
template <class Table>
constexpr decode_shape tn_vlast_shape_of(decode_class c, int state_bytes, bool per_key = false) {
  const bool f32 = state_bytes == 4;
  const int lanes = per_key ? (f32 ? Table::tn_per_key_vlast_f32_lanes : Table::tn_per_key_vlast_b16_lanes)
                            : (f32 ? Table::tn_vlast_f32_lanes : Table::tn_vlast_b16_lanes);
  const int rows = per_key ? (f32 ? Table::tn_per_key_vlast_f32_rows : Table::tn_per_key_vlast_b16_rows)
                           : (f32 ? Table::tn_vlast_f32_rows : Table::tn_vlast_b16_rows);
  return t1_shape_from(c, false, state_bytes, false, lanes, rows, Table::tn_vlast_max_warps_v);
}

// Whether a table runs t1_bf16io_smem on any grid, for fp32 or 16-bit state.
template <class Table>
constexpr bool t1_bf16io_smem_on(bool f32_state = true) {
  return f32_state ? Table::t1_bf16io_smem_max_heads_per_sm > 0 || Table::t1_bf16io_smem_min_heads_per_sm > 0
                   : Table::t1_bf16io_smem_b16_min_heads_per_sm > 0;
}

// Where V-last state with bf16 I/O takes the t1_bf16io_smem body (heads per SM;
// 0: never): the one rule the mode choice and the kernel instantiation follow,
// for the scalar gate and for t1_per_key_smem.
template <class Table>
constexpr int t1_bf16io_smem_vlast_min_heads_of(int state_bytes) {
  return state_bytes == 4 ? Table::t1_bf16io_smem_vlast_f32_min_heads_per_sm
                          : Table::t1_bf16io_smem_vlast_b16_min_heads_per_sm;
}

// The T = 1 kernels' shape from a table's t1_* constants (see t1_shape_from).
template <class Table>
constexpr decode_shape t1_shape_of(decode_class c, bool k_last, int state_bytes, bool small, bool bf16io,
                                   bool smem_state = false) {
  if (smem_state && !k_last) {  // V-last t1_bf16io_smem: the V-last tile, its own warps along V
    const decode_shape s = t1_shape_of<Table>(c, false, state_bytes, false, bf16io);
    return {s.lanes_k, s.vec_chunks, s.rows, s.warps_k,
            state_bytes == 4 ? Table::t1_bf16io_smem_vlast_f32_warps_v : Table::t1_bf16io_smem_vlast_b16_warps_v};
  }
  return t1_shape_from(c, k_last, state_bytes, small,
                       k_last ? (state_bytes == 4 ? Table::t1_klast_f32_lanes : Table::t1_klast_b16_lanes)
                              : (state_bytes == 4 ? Table::t1_vlast_f32_lanes : Table::t1_vlast_b16_lanes),
                       k_last ? (state_bytes == 4 ? Table::t1_klast_f32_rows : Table::t1_klast_b16_rows)
                              : (state_bytes == 4 ? Table::t1_vlast_f32_rows : Table::t1_vlast_b16_rows),
                       small    ? Table::t1_small_max_warps_v
                       : bf16io && k_last ? Table::t1_bf16io_max_warps_v
                       : k_last ? Table::t1_max_warps_v
                                : Table::t1_vlast_max_warps_v);
}

// Whether the K-last bf16-I/O body takes a tile: the x and y of its rows
// (2 * rows values) reduce-scatter over the row's lanes_k lanes.
constexpr bool bf16io_tile_fits(const decode_shape& s) { return 2 * s.rows <= s.lanes_k; }
// The same for class c's K-last bf16-I/O tile in a table (the host's mode choice).
template <class Table>
constexpr bool t1_bf16io_klast_fits(decode_class c, int state_bytes) {
  return bf16io_tile_fits(t1_shape_of<Table>(c, true, state_bytes, false, true));
}

}  // namespace dk::tuning
