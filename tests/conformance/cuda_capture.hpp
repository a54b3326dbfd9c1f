// CUDA-only conformance helpers: capturing deltakit calls into a CUDA graph.
#pragma once
#include <cuda_runtime.h>

#include "harness.hpp"

namespace dkc {

// Captures `launch(stream)` into an executable graph; REQUIREs the call itself to succeed.
template <class Launch>
cudaGraphExec_t capture(void* stream, Launch&& launch) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  const dk_status status = launch(stream);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  INFO("captured call -> " << dk_status_string(status) << ": " << dk_last_error());
  REQUIRE(status == DK_STATUS_SUCCESS);
  REQUIRE(end == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  cudaGraphDestroy(graph);
  return exec;
}

}  // namespace dkc
