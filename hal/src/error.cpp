// Thread-local error text behind the integer status.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "dk/hal.hpp"
#include "error.hpp"

namespace {
thread_local char g_last_error[1024] = "";
}

namespace dk {

dk_status set_error(dk_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(g_last_error, sizeof g_last_error, format, args);
  va_end(args);
  return status;
}

void clear_error() { g_last_error[0] = '\0'; }

void copy_string(char* dst, size_t capacity, const char* text) {
  if (capacity == 0) return;
  size_t n = text ? std::strlen(text) : 0;
  if (n >= capacity) n = capacity - 1;
  if (n) std::memcpy(dst, text, n);
  dst[n] = '\0';
}

}  // namespace dk

extern "C" DK_API const char* dk_last_error(void) { return g_last_error; }

extern "C" DK_API const char* dk_status_string(dk_status status) {
  switch (status) {
    case DK_STATUS_SUCCESS: return "DK_STATUS_SUCCESS";
    case DK_STATUS_INVALID_ARGUMENT: return "DK_STATUS_INVALID_ARGUMENT";
    case DK_STATUS_UNSUPPORTED: return "DK_STATUS_UNSUPPORTED";
    case DK_STATUS_NO_DEVICE: return "DK_STATUS_NO_DEVICE";
    case DK_STATUS_OUT_OF_MEMORY: return "DK_STATUS_OUT_OF_MEMORY";
    case DK_STATUS_DEVICE_ERROR: return "DK_STATUS_DEVICE_ERROR";
    case DK_STATUS_INSUFFICIENT_WORKSPACE: return "DK_STATUS_INSUFFICIENT_WORKSPACE";
    case DK_STATUS_INTERNAL: return "DK_STATUS_INTERNAL";
  }
  return "DK_STATUS_<unknown>";
}
