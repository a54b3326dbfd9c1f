// The decode kernels (SPEC §2). Eight bodies (tuning/decode_shape.hpp, decode_mode):
// decode_body (everything: decode_body.cuh), decode_t1_body (T = 1, K = 64/128,
// gate none/scalar, or per key in t1_(small_)per_key: no staging, 16-bit state packed
// in registers: decode_t1_body.cuh) and
// decode_t1_bf16io_body (its K-last variant for bf16 activations,
// decode_t1_bf16io.cuh, with the state tile in registers or, t1_bf16io_smem
// and with per-key gates t1_per_key_smem, in shared memory; V-last bf16
// activations run decode_t1_body with the dtypes fixed, and on large grids its
// tile in shared memory, per-key gates too), one block
// per (sequence, value head, V tile); decode_tn_bf16io_body (T > 1 with bf16
// activations, K-last, gate none/scalar, or per key in tn_per_key:
// decode_tn_bf16io.cuh, the t1_bf16io tile in fp32 registers over the
// tokens); decode_tn_vlast_body
// (the same on V-last state, per key in tn_per_key too: decode_tn_vlast.cuh,
// the t1 V-last blocks); decode_tn_mma_body (T = 2..4, K-last or V-last, gate none or
// scalar, or per key in tn_mma_per_key; T = 5..16 in chunks of 4 in
// tn_mma_chunked and, per key, tn_mma_per_key_chunked; on tensor cores: decode_tn_mma.cuh,
// decode_tn_mma_keys.cuh); and the
// two t1_pipe bodies (K-last, V-last: decode_pipe.cuh), a persistent grid
// streaming tiles through shared memory.
// This header includes the pieces in dependency order:
#pragma once
#include "decode_geometry.cuh"    // launch_params, geometry, smem_layout
#include "decode_operands.cuh"    // small operands, gate, lane sums, 16-byte vectors, streams
#include "decode_body.cuh"        // decode_body
#include "decode_t1_helpers.cuh"  // what the T = 1 bodies share
#include "decode_t1_body.cuh"     // decode_t1_body
#include "decode_pipe.cuh"        // the t1_pipe bodies, on top of the T = 1 helpers
#include "decode_t1_bf16io.cuh"   // the t1_bf16io body, likewise
#include "decode_tn_bf16io.cuh"   // the tn_bf16io body (T > 1), on the t1_bf16io helpers
#include "decode_tn_vlast.cuh"    // the tn_vlast body (T > 1, V-last), on the t1 helpers
#include "decode_tn_mma.cuh"       // the tn_mma body (T = 2..4 on tensor cores)
#include "decode_launch.cuh"      // decode_kernel; host: launch shape, mode_for
