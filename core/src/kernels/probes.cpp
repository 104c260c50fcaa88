// SPDX-License-Identifier: MIT
// The CPU's ceilings, measured by small probes built from the CPU kernels' own loops.
#include <switchyard/kernels/probes.h>

#include <switchyard/hardware/hardware.h>

#include "kernels/cpukernels.h"
#include "kernels/cpuvariants.h"
#include "kernels/threadpool.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

namespace switchyard {

namespace {

std::mutex g_peaks_mutex;
std::optional<CpuPeaks> g_peaks;

struct AlignedFree {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using AlignedBuffer = std::unique_ptr<float, AlignedFree>;
AlignedBuffer aligned_floats(std::size_t n) {
    return AlignedBuffer(
        static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64))));
}

double measure_fma_gflops() {
    if (!cpu_supports_x86_64_v3())
        return 0.0;
    auto& pool = ThreadPool::instance();
    const std::int64_t threads = pool.size();
    constexpr std::int64_t iterations = 2'000'000;
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<double> flops(std::size_t(threads), 0.0);
        pool.parallel_for(threads, [&](std::int64_t t) {
            flops[std::size_t(t)] = cpu::avx2::fma_probe(iterations);
        });
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double total = 0;
        for (double f : flops)
            total += f;
        best = std::max(best, total / s / 1e9);
    }
    return best;
}

} // namespace

nlohmann::json CpuPeaks::to_json() const {
    return {{"triad_gbs", triad_gbs}, {"triad_bytes", triad_bytes}, {"fma_gflops", fma_gflops}};
}

double measure_triad_gbs(std::int64_t bytes, int repeats) {
    const std::int64_t n = std::max<std::int64_t>(1024, bytes / 12);
    auto a = aligned_floats(std::size_t(n)), b = aligned_floats(std::size_t(n)),
         c = aligned_floats(std::size_t(n));
    auto& pool = ThreadPool::instance();
    const std::int64_t parts = pool.size();
    auto chunk = [&](std::int64_t t, auto&& fn) {
        const std::int64_t i0 = n * t / parts, i1 = n * (t + 1) / parts;
        fn(i0, i1);
    };
    // First touch by the thread that will use the pages.
    pool.parallel_for(parts, [&](std::int64_t t) {
        chunk(t, [&](std::int64_t i0, std::int64_t i1) {
            for (std::int64_t i = i0; i < i1; ++i) {
                a.get()[i] = 0.0f;
                b.get()[i] = 1.0f;
                c.get()[i] = 2.0f;
            }
        });
    });
    double best = 0;
    // STREAM's triad a = b + s*c in every form this CPU can run (plain stores, SSE2
    // non-temporal stores, AVX2+FMA non-temporal stores), interleaved; the best is the
    // machine's limit, so no kernel can beat the probe by storing differently.
    const int forms = cpu_supports_x86_64_v3() ? 3 : 2;
    for (int r = 0; r < forms * std::max(1, repeats); ++r) {
        const int form = r % forms;
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(parts, [&](std::int64_t t) {
            chunk(t, [&](std::int64_t i0, std::int64_t i1) {
                float* out = a.get() + i0;
                const float* x = b.get() + i0;
                const float* v = c.get() + i0;
                if (form == 0)
                    cpu::generic::triad(i1 - i0, out, x, v, 3.0f);
                else if (form == 1)
                    cpu::generic::triad_stream(i1 - i0, out, x, v, 3.0f);
                else
                    cpu::avx2::flow_match(i1 - i0, x, v, 3.0f, out, /*stream=*/true);
            });
        });
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > 0)
            best = std::max(best, 12.0 * double(n) / s / 1e9);
    }
    return best;
}

const CpuPeaks& cpu_peaks() {
    std::lock_guard lock(g_peaks_mutex);
    if (!g_peaks) {
        CpuPeaks p;
        p.triad_bytes =
            std::max<std::int64_t>(std::int64_t(64) << 20, 4 * cpu_info().last_level_cache_bytes());
        p.triad_gbs = measure_triad_gbs(p.triad_bytes);
        p.fma_gflops = measure_fma_gflops();
        g_peaks = p;
    }
    return *g_peaks;
}

void set_cpu_peaks(const CpuPeaks& peaks) {
    std::lock_guard lock(g_peaks_mutex);
    g_peaks = peaks;
}

} // namespace switchyard
