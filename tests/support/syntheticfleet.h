// SPDX-License-Identifier: MIT
#pragma once
// A fleet folder of synthetic reports for the GUI's tests and the fleet benchmark: one
// report per machine (report-<host>.json, written with Report::save), each row measured in
// several independent runs (merge_runs), so the comparison's verdicts are real ones.

#include <switchyard/profiling/profilerow.h>
#include <switchyard/report/report.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace switchyard::test {

struct FleetSpec {
    int machines = 3;
    int rows = 8;
    int runs = 5;
    int samplesPerRun = 20;
    double runNoise = 0.01; // log-normal scatter of the run medians
    /// Machine `i` is `factors[i]` times slower than 1 (missing entries: 1); a factor far
    /// from the rest makes that machine an outlier.
    std::vector<double> factors;
};

inline std::string fleetHost(int machine) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "node-%02d", machine);
    return buf;
}

/// A context as Profiler::context() writes it, with a fingerprint; machines whose factor
/// is 20 % or more from 1 have another CPU (so their fingerprints differ from machine 0's).
inline nlohmann::json fleetContext(int machine, bool otherCpu) {
    const std::string brand = otherCpu ? "Slow CPU 3000" : "Test CPU 9000";
    nlohmann::json fpMachine = {
        {"cpu",
         {{"vendor", "GenuineTest"},
          {"brand", brand},
          {"family", 6},
          {"model", otherCpu ? 85 : 143},
          {"stepping", 4},
          {"microcode", otherCpu ? "0x2006e05" : "0x2b000590"},
          {"logical_cpus", 16},
          {"physical_cores", 8},
          {"caches", "L1d 48K, L2 2M, L3 105M"}}},
        {"memory_gib", otherCpu ? 64 : 256},
        {"isa", {{"best", "x86-64-v4"}, {"detected", "x86-64-v4"}, {"cap", ""}}},
        {"gpus", nlohmann::json::array()},
        {"openblas", {{"core", "SapphireRapids"}, {"threads", 8}}}};
    return {{"switchyard",
             {{"version", "0.1.0"}, {"git_hash", "9a6532b"}, {"build_type", "RelWithDebInfo"}}},
            {"date", "2025-01-0" + std::to_string(1 + machine % 9) + "T10:00:00Z"},
            {"host", {{"hostname", fleetHost(machine)}, {"os", "Linux"}}},
            {"cpu", {{"brand", brand}, {"physical_cores", 8}, {"logical_cpus", 16}}},
            {"fingerprint",
             {{"machine", fpMachine},
              {"software",
               {{"switchyard", {{"version", "0.1.0"}, {"git_hash", "9a6532b"}}}, {"os", "Linux"}}},
              {"machine_id", otherCpu ? "00000000000000ff" : "0000000000000001"}}},
            {"warnings", nlohmann::json::array()}};
}

/// One report of the fleet: `spec.rows` rows (four ops at growing sizes).
inline Report fleetReport(const FleetSpec& spec, int machine) {
    const double factor =
        std::size_t(machine) < spec.factors.size() ? spec.factors[std::size_t(machine)] : 1.0;
    std::uint64_t s = 0x9e3779b97f4a7c15ULL * std::uint64_t(machine + 1) + 12345;
    auto uniform = [&] {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return (double(s >> 11) + 0.5) / double(1ULL << 53);
    };
    auto gaussian = [&] {
        return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
    };
    static const char* ops[] = {"rms_norm", "softmax", "gemm", "flow_match_step"};
    Report rep;
    rep.context = fleetContext(machine, std::abs(factor - 1.0) >= 0.2);
    for (int i = 0; i < spec.rows; ++i) {
        std::vector<ProfileRow> runs;
        const std::int64_t n = std::int64_t(1024) << (i / 4);
        const double base = 1e-6 * double(n) / 1024.0 * (1 + i % 4);
        for (int k = 0; k < spec.runs; ++k) {
            ProfileRow r;
            r.spec.op = ops[i % 4];
            r.spec.size = std::to_string(n);
            r.spec.dims = {n, 0, 0};
            r.spec.device = "cpu";
            r.spec.device_kind = "cpu";
            r.spec.arch = "x86-64-v3";
            r.spec.variant = "avx2";
            r.spec.backend = "cpu";
            r.spec.source = "builtin";
            r.spec.index = i;
            const double median = base * factor * std::exp(spec.runNoise * gaussian());
            for (int j = 0; j < spec.samplesPerRun; ++j)
                r.samples.push_back(median * (1 + 0.004 * (uniform() - 0.5)));
            r.stats = SampleStats::from(r.samples);
            r.stop_reason = "noise";
            r.bytes = 8.0 * double(n);
            r.flops = 2.0 * double(n);
            r.gbps = r.bytes / r.stats.median / 1e9;
            runs.push_back(std::move(r));
        }
        rep.rows.push_back(merge_runs(std::move(runs), 2000));
    }
    return rep;
}

/// Writes report-<host>.json for each machine into `folder`; returns the paths.
inline std::vector<std::string> writeFleet(const std::string& folder, const FleetSpec& spec) {
    std::vector<std::string> paths;
    for (int m = 0; m < spec.machines; ++m) {
        paths.push_back(folder + "/report-" + fleetHost(m) + ".json");
        fleetReport(spec, m).save(paths.back());
    }
    return paths;
}

} // namespace switchyard::test
