// SPDX-License-Identifier: MIT
#pragma once
// Reports of --all-variants runs built in memory, for the suites of the tuning and the fleet's
// tuning (core, CLI, GUI): rms_norm on the cpu, at each size the chain's pick
// (x86-64-v4/default) and one other cell, their samples the given medians ± 1 %. The verdicts
// follow from these numbers alone, never from the CPU the suite runs on.

#include <switchyard/report/report.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::testing {

/// A measured row of (rms_norm, size, cpu, arch/variant) whose samples are `median` ± 1 %.
inline ProfileRow timed_row(std::int64_t index, const std::string& arch, const std::string& variant,
                            double median, bool resolved, const std::string& size,
                            std::int64_t rows_of_1024) {
    ProfileRow r;
    r.spec.index = index;
    r.spec.op = "rms_norm";
    r.spec.size = size;
    r.spec.dims = {rows_of_1024, 1024, 0};
    r.spec.device = "cpu";
    r.spec.device_kind = "cpu";
    r.spec.arch = arch;
    r.spec.variant = variant;
    r.spec.backend = "cpu";
    r.spec.resolved = resolved;
    constexpr int samples = 20;
    for (int i = 0; i < samples; ++i)
        r.samples.push_back(median * (0.99 + 0.02 * double(i) / double(samples - 1)));
    r.stats = SampleStats::from(r.samples);
    r.parity.checked = true;
    r.parity.pass = true;
    return r;
}

/// One measured size: `rows` rows of 1024 floats ("<rows>x1024"), the pick's median and the
/// other cell's.
struct SizeTiming {
    std::int64_t rows = 0;
    double pick_s = 0, other_s = 0;
};

/// An --all-variants report (annotated: its dispatch findings are there) of a machine
/// `machine_id`. `other` is "arch/variant"; `build_id` the code identity of both cells.
inline Report tuning_report(const std::string& machine_id, const std::vector<SizeTiming>& sizes,
                            const std::string& other = "x86-64-v3/threaded",
                            const std::string& build_id = "abc123",
                            const std::string& host = "node") {
    Report report;
    report.context.fingerprint.machine_id = machine_id;
    report.context.fingerprint.machine = {{"cpu", {{"brand", "Test CPU " + machine_id}}}};
    report.context.host.hostname = host;
    report.context.date = "2026-12-06T07:00:00Z";
    report.context.settings.variant = "default";
    const auto slash = other.find('/');
    std::int64_t index = 0;
    for (const auto& s : sizes) {
        const std::string size = std::to_string(s.rows) + "x1024";
        auto pick = timed_row(index++, "x86-64-v4", "default", s.pick_s, true, size, s.rows);
        auto cell = timed_row(index++, other.substr(0, slash), other.substr(slash + 1), s.other_s,
                              false, size, s.rows);
        pick.spec.code = {"cpu", "0.1.0", build_id};
        cell.spec.code = {"cpu", "0.1.0", build_id};
        report.rows.push_back(pick);
        report.rows.push_back(cell);
    }
    report.annotate();
    return report;
}

/// The same run without the other cells (a default run): no dispatch findings.
inline Report plain_report(const std::string& machine_id, const std::string& host = "node") {
    Report report;
    report.context.fingerprint.machine_id = machine_id;
    report.context.host.hostname = host;
    report.context.date = "2026-12-06T07:00:00Z";
    report.rows.push_back(timed_row(0, "x86-64-v4", "default", 2.7e-3, true, "4x1024", 4));
    report.annotate();
    return report;
}

} // namespace switchyard::testing
