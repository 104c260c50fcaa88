// SPDX-License-Identifier: MIT
#pragma once

// Rows and ceilings as a profile run writes them, for the GUI suites' reports (the results
// table, the plots, comparisons).

#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/stats.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace switchyard::test {

/// A measured row on the CPU: `n` samples spread ±spread around `median` seconds.
inline ProfileRow makeRow(const std::string& op, std::int64_t n, const std::string& arch,
                          const std::string& variant, double median, double flopsPerElem = 2,
                          double bytesPerElem = 8, int count = 20, double spread = 0.02) {
    ProfileRow r;
    r.spec.op = op;
    r.spec.size = std::to_string(n);
    r.spec.dims = {n, 0, 0};
    r.spec.device = "cpu";
    r.spec.device_kind = "cpu";
    r.spec.arch = arch;
    r.spec.variant = variant;
    r.spec.backend = "cpu";
    r.spec.source = "builtin";
    for (int i = 0; i < count; ++i)
        r.samples.push_back(median * (1 + spread * (double(i) - count / 2.0) / count));
    r.stats = SampleStats::from(r.samples);
    r.stop_reason = "noise";
    r.bytes = bytesPerElem * double(n);
    r.flops = flopsPerElem * double(n);
    r.gbps = r.bytes / r.stats.median / 1e9;
    r.gflops = r.flops / r.stats.median / 1e9;
    r.parity.checked = true;
    r.parity.pass = true;
    r.parity.max_abs_error = 1e-7;
    r.parity.max_rel_error = 2e-6;
    return r;
}

inline nlohmann::json ceilingJson(const std::string& id, const std::string& kind,
                                  const std::string& level, double value, bool measured = true,
                                  int threads = 0) {
    return {{"id", id},         {"kind", kind},          {"level", level},
            {"value", value},   {"threads", threads},    {"measured", measured},
            {"method", "test"}, {"working_set_bytes", 0}};
}

} // namespace switchyard::test
