// SPDX-License-Identifier: MIT
// The CUDA device's ceiling probes: a device-memory copy, an L2-resident copy and an FMA
// loop, timed with CUDA events (the kernels are in probes.cuh).
#include "cudaprobes.h"

#include <cuda_runtime.h>

#include "probes.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace switchyard::cuda {
namespace {

void ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " +
                                 cudaGetErrorString(e));
}

struct ProbeLaunch {
    cudaStream_t stream;
    template <class... Params, class... Args>
    void operator()(dim3 grid, dim3 block, void (*kernel)(Params...), Args&&... args) const {
        kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
        ok(cudaGetLastError(), "probe launch");
    }
};

struct Buffer {
    void* p = nullptr;
    explicit Buffer(std::size_t bytes) { ok(cudaMalloc(&p, bytes), "cudaMalloc (probe)"); }
    ~Buffer() { (void)cudaFree(p); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    float* f() const { return static_cast<float*>(p); }
};

struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    Events() {
        ok(cudaEventCreate(&start), "cudaEventCreate");
        ok(cudaEventCreate(&stop), "cudaEventCreate");
    }
    ~Events() {
        (void)cudaEventDestroy(start);
        (void)cudaEventDestroy(stop);
    }
    // Seconds `count` calls of `fn` took on `stream`; best of `timings`.
    template <class Fn> double best(cudaStream_t stream, int timings, int count, Fn&& fn) {
        double best = 0;
        fn(); // warm-up
        for (int t = 0; t < timings; ++t) {
            ok(cudaEventRecord(start, stream), "cudaEventRecord");
            for (int i = 0; i < count; ++i)
                fn();
            ok(cudaEventRecord(stop, stream), "cudaEventRecord");
            ok(cudaEventSynchronize(stop), "probe (cudaEventSynchronize)");
            float ms = 0;
            ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
            const double s = double(ms) * 1e-3 / double(count);
            if (s > 0 && (best == 0 || s < best))
                best = s;
        }
        return best;
    }
};

} // namespace

CudaProbeResult run_cuda_probes(cudaStream_t stream, int multiprocessors, std::int64_t l2_bytes,
                                std::int64_t memory_bytes) {
    CudaProbeResult r;
    const unsigned blocks = unsigned(std::max(1, multiprocessors) * 8);
    const ProbeLaunch launch{stream};
    Events ev;
    {
        // Device memory: 2 x 512 MiB (or an eighth of memory each), far past any L2.
        std::int64_t each = std::int64_t(512) << 20;
        if (memory_bytes > 0)
            each = std::min(each, memory_bytes / 8);
        each = std::max<std::int64_t>(each, std::int64_t(16) << 20) / 256 * 256;
        Buffer src{std::size_t(each)}, dst{std::size_t(each)};
        ok(cudaMemsetAsync(src.p, 0, std::size_t(each), stream), "cudaMemsetAsync");
        const double kernel_s =
            ev.best(stream, 5, 3, [&] { run_copy_probe(src.f(), dst.f(), each, blocks, launch); });
        const double memcpy_s = ev.best(stream, 5, 3, [&] {
            ok(cudaMemcpyAsync(dst.p, src.p, std::size_t(each), cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync (probe)");
        });
        const double s = std::min(kernel_s > 0 ? kernel_s : 1e30, memcpy_s > 0 ? memcpy_s : 1e30);
        r.hbm_copy_bytes = 2 * each;
        r.hbm_copy_gbs = s < 1e30 ? 2.0 * double(each) / s / 1e9 : 0;
        // The triad: a third array of the same size.
        Buffer third{std::size_t(each)};
        ok(cudaMemsetAsync(dst.p, 0, std::size_t(each), stream), "cudaMemsetAsync");
        const double triad_s = ev.best(stream, 5, 3, [&] {
            run_triad_probe(src.f(), dst.f(), 0.5f, third.f(), each, launch);
        });
        r.hbm_triad_bytes = 3 * each;
        r.hbm_triad_gbs = triad_s > 0 ? 3.0 * double(each) / triad_s / 1e9 : 0;
    }
    if (l2_bytes > 0) {
        // Both buffers together half the L2, copied back and forth so they stay there.
        const std::int64_t each = std::max<std::int64_t>(l2_bytes / 4 / 256 * 256, 4096);
        Buffer src{std::size_t(each)}, dst{std::size_t(each)};
        ok(cudaMemsetAsync(src.p, 0, std::size_t(each), stream), "cudaMemsetAsync");
        const double s =
            ev.best(stream, 5, 50, [&] { run_copy_probe(src.f(), dst.f(), each, blocks, launch); });
        r.l2_copy_bytes = 2 * each;
        r.l2_copy_gbs = s > 0 ? 2.0 * double(each) / s / 1e9 : 0;
    }
    {
        constexpr int iterations = 4096;
        Buffer out{std::size_t(blocks) * kProbeThreads * sizeof(float)};
        const double s =
            ev.best(stream, 5, 1, [&] { run_fma_probe(out.f(), blocks, iterations, launch); });
        r.fma_gflops = s > 0 ? fma_probe_flops(blocks, iterations) / s / 1e9 : 0;
    }
    return r;
}

static_assert(kProbeBlockThreads == kProbeThreads, "cudaprobes.h and probes.cuh disagree");

double time_sweep_probe(cudaStream_t stream, float* x, std::int64_t bytes, unsigned blocks,
                        int trials, int timings) {
    // All of the SM's unified cache as L1: the kernel uses no shared memory. A driver that
    // refuses the hint leaves its default carveout (the plateau is then smaller, not wrong).
    if (cudaFuncSetAttribute(sweep_probe_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             0) != cudaSuccess)
        (void)cudaGetLastError();
    const ProbeLaunch launch{stream};
    Events ev;
    return ev.best(stream, timings, 1, [&] { run_sweep_probe(x, bytes, blocks, trials, launch); });
}

namespace {

// SM 0 writes its clock64() and the global nanosecond timer into stamps[2 slot ..].
__global__ void clock_stamp_kernel(unsigned long long* stamps, int slot) {
    unsigned smid = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (smid != 0 || threadIdx.x != 0)
        return;
    unsigned long long timer = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(timer));
    const long long cycles = clock64();
    stamps[2 * slot] = timer;
    stamps[2 * slot + 1] = static_cast<unsigned long long>(cycles);
}

} // namespace

ClockStamps::ClockStamps(int multiprocessors) : m_blocks(std::max(1, multiprocessors)) {
    ok(cudaMalloc(&m_stamps, 4 * sizeof(unsigned long long)), "cudaMalloc (clock stamps)");
}

ClockStamps::~ClockStamps() {
    (void)cudaFree(m_stamps);
}

void ClockStamps::record(cudaStream_t stream, int slot) {
    if (slot == 0)
        ok(cudaMemsetAsync(m_stamps, 0, 4 * sizeof(unsigned long long), stream),
           "cudaMemsetAsync (clock stamps)");
    clock_stamp_kernel<<<m_blocks, 1, 0, stream>>>(m_stamps, slot);
    ok(cudaGetLastError(), "clock stamp launch");
}

double ClockStamps::ghz() {
    unsigned long long s[4] = {};
    ok(cudaMemcpy(s, m_stamps, sizeof s, cudaMemcpyDeviceToHost), "cudaMemcpy (clock stamps)");
    if (s[0] == 0 || s[2] <= s[0] || s[3] <= s[1])
        return 0;
    return double(s[3] - s[1]) / double(s[2] - s[0]);
}

} // namespace switchyard::cuda
