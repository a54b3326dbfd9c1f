// The compiled-in backends, best first.
#pragma once
#include "dk/hal.hpp"

namespace dk {
// nullptr-terminated list of compiled backends, GPU backends before cpu.
const backend_vtable* const* compiled_backends();
// The vtable of `id`, or nullptr when it is not compiled in.
const backend_vtable* find_backend(dk_backend id);
}  // namespace dk
