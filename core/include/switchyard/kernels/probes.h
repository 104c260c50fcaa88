// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

namespace switchyard {

/// Peak-ish figures of the host CPU measured by small probes, cached for the process.
struct CpuPeaks {
    double triad_gbs = 0;         // STREAM triad (a = b + s*c, fp32, all threads), 12 bytes/element
    std::int64_t triad_bytes = 0; // working set the probe used
    double fma_gflops = 0;        // dependent-free FMA loop on all threads (0 without x86-64-v3)
    nlohmann::json to_json() const;
};
/// Runs the probes on first use (about 0.2 s), then returns the cached result.
const CpuPeaks& cpu_peaks();
/// Replaces the cached figures (a worker process reuses the controller's measurement so
/// every row of a run shares one peak).
void set_cpu_peaks(const CpuPeaks& peaks);
/// Runs the triad probe now over `bytes` of working set; best of `repeats` passes in GB/s.
double measure_triad_gbs(std::int64_t bytes, int repeats = 10);

} // namespace switchyard
