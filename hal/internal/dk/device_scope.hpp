// Makes one device current for the length of a call, then restores the calling
// thread's previous one: CUDA's and HIP's current device is per host thread and
// belongs to the engine. Instantiated by the CUDA and HIP backends with their
// runtime's get/set functions.
#pragma once

namespace dk {

template <class Error, Error Success, Error (*GetDevice)(int*), Error (*SetDevice)(int)>
class device_scope {
 public:
  explicit device_scope(int id) {
    error_ = GetDevice(&previous_);
    if (error_ == Success && previous_ != id) {
      error_ = SetDevice(id);
      restore_ = error_ == Success;
    }
  }
  ~device_scope() {
    if (restore_) (void)SetDevice(previous_);  // nothing to report from a destructor
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;
  Error error() const { return error_; }

 private:
  int previous_ = -1;
  bool restore_ = false;
  Error error_ = Success;
};

}  // namespace dk
