// SPDX-License-Identifier: MIT
#pragma once

// The CUDA device's ceilings from its attributes (theoretical, measured = false), plain
// host code shared by cudadevice.cpp and tests/core/tst_cuda.cpp; the measured ones come
// from the probes in probes.cuh.

#include <switchyard/sdk/device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::cuda {

/// What cudaDeviceGetAttribute / cudaGetDeviceProperties report.
struct CudaAttributes {
    int multiprocessors = 0;
    int clock_khz = 0;        // SM (boost) clock
    int memory_clock_khz = 0; // memory clock
    int memory_bus_bits = 0;
    int fp32_lanes_per_sm = 128;
    std::int64_t l2_bytes = 0;
};

/// "HBM" for the wide stacked-memory buses of data-centre GPUs (>= 1024 bits), else
/// "DRAM" (GDDR).
inline std::string memory_level(const CudaAttributes& a) {
    return a.memory_bus_bits >= 1024 ? "HBM" : "DRAM";
}

/// Double data rate x memory clock x bus width / 8, in GB/s.
inline double theoretical_bandwidth_gbs(const CudaAttributes& a) {
    return 2.0 * double(a.memory_clock_khz) * 1e3 * double(a.memory_bus_bits) / 8.0 / 1e9;
}

/// SMs x clock x FP32 lanes per SM x 2 (an FMA is two flops), in GFLOP/s.
inline double theoretical_fp32_gflops(const CudaAttributes& a) {
    return double(a.multiprocessors) * double(a.clock_khz) * 1e3 * double(a.fp32_lanes_per_sm) *
           2.0 / 1e9;
}

/// "theoretical.<hbm|dram>" and "theoretical.fma.fp32"; an attribute the device did not
/// report (0) leaves its ceiling out.
inline std::vector<Ceiling> theoretical_ceilings(const CudaAttributes& a) {
    std::vector<Ceiling> out;
    if (a.memory_clock_khz > 0 && a.memory_bus_bits > 0) {
        Ceiling c;
        const auto level = memory_level(a);
        c.id = level == "HBM" ? "theoretical.hbm" : "theoretical.dram";
        c.kind = "bandwidth";
        c.level = level;
        c.value = theoretical_bandwidth_gbs(a);
        c.measured = false;
        c.method = "2 x memory clock (" + std::to_string(a.memory_clock_khz / 1000) + " MHz) x " +
                   std::to_string(a.memory_bus_bits) + "-bit bus / 8";
        out.push_back(std::move(c));
    }
    if (a.multiprocessors > 0 && a.clock_khz > 0) {
        Ceiling c;
        c.id = "theoretical.fma.fp32";
        c.kind = "compute";
        c.value = theoretical_fp32_gflops(a);
        c.measured = false;
        c.method = std::to_string(a.multiprocessors) + " SMs x " +
                   std::to_string(a.clock_khz / 1000) + " MHz x " +
                   std::to_string(a.fp32_lanes_per_sm) + " FP32 lanes x 2 (FMA)";
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace switchyard::cuda
