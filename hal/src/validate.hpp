// Argument validation, done once for every backend: turns the public views into
// normalised problems, or fails with a status and a message naming the argument.
#pragma once
#include "dk/problem.hpp"
#include "deltakit/deltakit.h"

namespace dk {

// `device` is the context's device: every tensor must live there.
// With need_data false (queries) data pointers may be NULL.
dk_status validate_decode(const dk_device& device, const dk_config* config,
                          const dk_decode_args* args, bool need_data, decode_problem* out);
dk_status validate_prefill(const dk_device& device, const dk_config* config,
                           const dk_prefill_args* args, bool need_data, prefill_problem* out);

}  // namespace dk
