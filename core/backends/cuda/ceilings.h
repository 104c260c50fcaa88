// SPDX-License-Identifier: MIT
#pragma once

// The CUDA device's ceilings from its attributes (theoretical, measured = false), plain
// host code shared by cudadevice.cpp and tests/core/tst_cuda.cpp; the measured ones come
// from the probes in probes.cuh.

#include <switchyard/sdk/device.h>
#include <switchyard/sdk/plateaus.h>

#include <algorithm>
#include <cmath>
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
    int compute_capability = 0; // major x 10 + minor; 0: unknown
};

/// Dense TF32 tensor-core flops per SM per clock, by compute capability: 1024 on GA100
/// (A100: 156 TFLOP/s = 108 SMs x 1.41 GHz x 1024), 2048 on Hopper (H100 SXM: 494.7 TFLOP/s
/// = 132 x 1.83 GHz x 2048); 0 (unknown: no ceiling) elsewhere, whose figures this table
/// does not hold.
inline int tf32_tensor_flops_per_sm_clock(int compute_capability) {
    switch (compute_capability) {
    case 80:
        return 1024;
    case 90:
        return 2048;
    default:
        return 0;
    }
}

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
    // The tensor cores' TF32 peak bounds the cells that state "compute": "tf32" (cuBLAS
    // TF32 read 5.5x the FP32 FMA ceiling on the H200), never an FP32 cell.
    if (const int per_clock = tf32_tensor_flops_per_sm_clock(a.compute_capability);
        per_clock > 0 && a.multiprocessors > 0 && a.clock_khz > 0) {
        Ceiling c;
        c.id = "theoretical.tensor.tf32";
        c.kind = "compute";
        c.value = double(a.multiprocessors) * double(a.clock_khz) * 1e3 * per_clock / 1e9;
        c.measured = false;
        c.method = std::to_string(a.multiprocessors) + " SMs x " +
                   std::to_string(a.clock_khz / 1000) + " MHz x " + std::to_string(per_clock) +
                   " dense TF32 tensor flops per SM and clock";
        out.push_back(std::move(c));
    }
    return out;
}

/// The unified L1 data cache / shared memory of one SM, by compute capability (the CUDA C++
/// Programming Guide's per-architecture tables): 128 KiB on Volta, 96 on Turing, 192 on
/// GA100, 128 on GA10x and Ada, 256 on Hopper and data-centre Blackwell (10.x), 128 on the
/// others. The sweep's kernel asks for the smallest shared-memory carveout, so nearly all of
/// it is L1.
inline std::int64_t l1_bytes_per_sm(int major, int minor) {
    const std::int64_t kib = 1024;
    if (major == 7)
        return (minor >= 5 ? 96 : 128) * kib;
    if (major == 8)
        return (minor == 0 ? 192 : 128) * kib;
    if (major == 9 || major == 10)
        return 256 * kib;
    return 128 * kib;
}

/// The caches the sweep's plateaus are matched to: the SMs' L1s together (each SM's blocks
/// keep to their share of the set) and the L2. A level the attributes do not give is left out.
inline std::vector<SweepCache> sweep_caches(const CudaAttributes& a, int major, int minor) {
    std::vector<SweepCache> caches;
    if (a.multiprocessors > 0)
        caches.push_back({"L1", double(a.multiprocessors) * double(l1_bytes_per_sm(major, minor))});
    if (a.l2_bytes > 0)
        caches.push_back({"L2", double(a.l2_bytes)});
    std::sort(caches.begin(), caches.end(), [](const SweepCache& x, const SweepCache& y) {
        return x.capacity_bytes < y.capacity_bytes;
    });
    return caches;
}

/// How far past its capacity a GPU level's plateau may reach (detect_plateaus' `reach`):
/// Hopper's L1s hold 33 MiB together and its L2 50 MiB, so the 2x of CPU caches would call
/// the L2's plateau the L1's.
constexpr double kSweepReach = 1.25;

/// The working-set sweep of a CUDA device (LBNL's Empirical Roofline Toolkit's): `blocks` of
/// `threads` each (4 per SM), working sets in steps of 2^(1/4) from the first that gives every
/// thread a float4 to 1 GiB (or an eighth of device memory), each launch making `trials`
/// passes over its set, about 1 GiB each way.
struct SweepPlan {
    unsigned blocks = 0;
    std::vector<std::int64_t> working_sets; // bytes, ascending, multiples of 256
    std::vector<int> trials;                // passes per launch, one per working set
};

inline SweepPlan sweep_plan(int multiprocessors, std::int64_t memory_bytes, int threads) {
    SweepPlan plan;
    plan.blocks = unsigned(std::max(1, multiprocessors) * 4);
    const std::int64_t first = std::int64_t(plan.blocks) * threads * 16;
    std::int64_t last = std::int64_t(1) << 30;
    if (memory_bytes > 0)
        last = std::min(last, memory_bytes / 8);
    constexpr std::int64_t kMoved = std::int64_t(1) << 30;
    std::int64_t previous = 0;
    for (int step = 0;; ++step) {
        const double exact = double(first) * std::pow(2.0, step / 4.0);
        const std::int64_t bytes = (std::int64_t(exact) + 255) / 256 * 256;
        if (bytes > last)
            break;
        if (bytes == previous)
            continue;
        plan.working_sets.push_back(bytes);
        plan.trials.push_back(int(std::clamp<std::int64_t>(kMoved / bytes, 1, 4096)));
        previous = bytes;
    }
    return plan;
}

/// What the sweep found, as ceilings and properties.sweep (the OpenCL device's form):
/// "l1.copy" and "l2.copy" from the cache plateaus. A level that a directed probe already
/// measured keeps the probe's ceiling; the sweep's value stays in properties.sweep.
inline void add_sweep_results(DeviceInfo& info, const std::vector<SweepPoint>& points,
                              const std::vector<SweepCache>& caches) {
    const auto plateaus = detect_plateaus(
        points, caches, info.properties.text_or("memory_level", "HBM"), 0.9, kSweepReach);
    for (auto& c : plateau_ceilings(plateaus, "x = a x + b in place, read+write")) {
        const bool probed = std::any_of(info.ceilings.begin(), info.ceilings.end(),
                                        [&](const Ceiling& have) { return have.id == c.id; });
        if (!probed)
            info.ceilings.push_back(std::move(c));
    }
    info.properties["sweep"] = sweep_json(points, plateaus, caches);
}

} // namespace switchyard::cuda
