// SPDX-License-Identifier: MIT
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace switchyard::cuda {

/// What the CUDA probes (probes.cu) measured on one device; 0 where a probe failed.
struct CudaProbeResult {
    double hbm_copy_gbs = 0;          // device-memory copy, read + write bytes per second
    std::int64_t hbm_copy_bytes = 0;  // its working set (source + destination)
    double hbm_triad_gbs = 0;         // a = b + s c: two reads and a write per element
    std::int64_t hbm_triad_bytes = 0; // its working set (the three arrays)
    double l2_copy_gbs = 0;           // the same copy with both buffers in L2
    std::int64_t l2_copy_bytes = 0;
    double fma_gflops = 0; // fp32 FMA chains on every SM
};

/// nvbench's per-sample clock: SM 0's clock64() and %globaltimer (ns), stamped by a kernel
/// on the stream before and after a sample's launches; the clock is their ratio.
class ClockStamps {
public:
    /// `multiprocessors` blocks of one thread each are launched per stamp, so one of them
    /// runs on SM 0 (only that one writes).
    explicit ClockStamps(int multiprocessors);
    ~ClockStamps();
    ClockStamps(const ClockStamps&) = delete;
    ClockStamps& operator=(const ClockStamps&) = delete;
    /// Stamp `slot` (0: before, 1: after) on `stream`.
    void record(cudaStream_t stream, int slot);
    /// After the stream is synchronized: cycles per nanosecond between the two stamps (GHz);
    /// 0 when a stamp is missing (no block ran on SM 0) or the interval is empty.
    double ghz();

private:
    unsigned long long* m_stamps = nullptr; // device: {timer0, clock0, timer1, clock1}
    int m_blocks = 1;
};

/// Threads per block of every probe kernel (probes.cuh's kProbeThreads).
constexpr int kProbeBlockThreads = 256;

/// Seconds one launch of the sweep kernel (probes.cuh) takes over the first `bytes` of `x`
/// (device memory) with `trials` passes: the best of `timings` after a warm-up, CUDA events.
/// Throws std::runtime_error when CUDA fails.
double time_sweep_probe(cudaStream_t stream, float* x, std::int64_t bytes, unsigned blocks,
                        int trials, int timings);

/// Runs the copy and FMA probes on the current device's `stream` (best of a few timed
/// launches each, CUDA events). Throws std::runtime_error when CUDA fails.
CudaProbeResult run_cuda_probes(cudaStream_t stream, int multiprocessors, std::int64_t l2_bytes,
                                std::int64_t memory_bytes);

} // namespace switchyard::cuda
