// SPDX-License-Identifier: MIT
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace switchyard::cuda {

/// What the CUDA probes (probes.cu) measured on one device; 0 where a probe failed.
struct CudaProbeResult {
    double hbm_copy_gbs = 0;         // device-memory copy, read + write bytes per second
    std::int64_t hbm_copy_bytes = 0; // its working set (source + destination)
    double l2_copy_gbs = 0;          // the same copy with both buffers in L2
    std::int64_t l2_copy_bytes = 0;
    double fma_gflops = 0; // fp32 FMA chains on every SM
};

/// Runs the copy and FMA probes on the current device's `stream` (best of a few timed
/// launches each, CUDA events). Throws std::runtime_error when CUDA fails.
CudaProbeResult run_cuda_probes(cudaStream_t stream, int multiprocessors, std::int64_t l2_bytes,
                                std::int64_t memory_bytes);

} // namespace switchyard::cuda
