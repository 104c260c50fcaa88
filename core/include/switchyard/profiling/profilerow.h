// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/parity.h>
#include <switchyard/profiling/stats.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

/// One row of a profile run before it runs: what to measure, where.
struct RowSpec {
    std::int64_t index = 0;
    std::string op;
    std::string size; // dims_to_string()
    Dims dims{};
    std::string device;      // device id the kernel runs on ("cpu", "cuda:0")
    std::string device_kind; // kernel key's device field
    std::string arch;
    std::string variant;
    std::string backend;
    std::string source;
    std::string resolved_for; // the device the resolution was for, when it fell back elsewhere
    std::int64_t workspace_bytes = 0;

    /// "gemm 512x512x512 cpu x86-64-v3/default"
    std::string label() const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key.
    static RowSpec from_json(const nlohmann::json& j);
};

/// One measured row of a report.
struct ProfileRow {
    RowSpec spec;
    /// ok: measured, parity PASS; fail: measured, parity FAIL; error: the kernel threw or
    /// was unavailable; crashed: the worker died in this row; timed_out: the row hung.
    std::string status = "ok";
    std::string reason; // why, for every status but ok
    std::string timer = "host"; // "host" (steady_clock) or "device" (device events)
    std::int64_t launches_per_sample = 1;
    std::string stop_reason; // StoppingRule::to_string
    SampleStats stats;       // seconds per launch
    std::vector<double> samples; // seconds per launch (thinned to keep_samples)
    double bytes = 0, flops = 0;
    double gbps = 0, gflops = 0; // from the median
    double peak_bandwidth_gbs = 0, bandwidth_fraction = 0;
    double peak_gflops = 0, flops_fraction = 0;
    ParityResult parity;
    std::vector<std::string> warnings;

    bool measured() const noexcept { return status == "ok" || status == "fail"; }
    /// (op, size, backend, device, arch, variant): how compare pairs rows.
    std::string key() const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key.
    static ProfileRow from_json(const nlohmann::json& j);
};

} // namespace switchyard
