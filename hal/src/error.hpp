#pragma once
namespace dk {
// Empties this thread's dk_last_error(); every API entry point starts with it.
void clear_error();
}  // namespace dk
