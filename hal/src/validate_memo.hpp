// The last successful decode validation of the calling thread, kept with every
// argument byte the validation read: an engine repeats the same calls layer after
// layer, and validation is most of the library's own host time per call.
#pragma once
#include "dk/problem.hpp"
#include "deltakit/deltakit.h"

namespace dk {

// validate_decode, skipped when the device, config and args (each tensor's
// fields and its shape and stride arrays' contents) equal those of the calling
// thread's last successful validation with the same need_data.
dk_status validate_decode_memo(const dk_device& device, const dk_config* config,
                               const dk_decode_args* args, bool need_data, decode_problem* out);

}  // namespace dk
