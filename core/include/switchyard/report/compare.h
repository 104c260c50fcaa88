// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/report/report.h>

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

namespace switchyard {

/// How two sets of samples are judged (Google Benchmark's compare.py: a two-sided
/// Mann-Whitney U test at `alpha`, meaningful from `min_samples` per side).
struct CompareOptions {
    double alpha = 0.05;
    std::size_t min_samples = 2; // compare.py's UTEST_MIN_REPETITIONS
    std::size_t optimal_samples =
        9;                    // compare.py's UTEST_OPTIMAL_REPETITIONS: fewer cannot claim SAME
    double min_effect = 0.01; // a significant change smaller than 1 % is SAME
    /// Ceilings of the same id (context.devices[].ceilings) whose values differ by more
    /// than this relative amount mean the reports come from different machines. Where both
    /// reports record their probes' spread (ceiling_differences()), the limit is that
    /// spread, at least this; without it, this for compute ceilings (an FMA loop in
    /// registers: only the clock moves it) ...
    double ceiling_tolerance = 0.10;
    /// ... and this for bandwidth ceilings. The caches and memory a probe measures are
    /// shared with everything else on the machine (other processes on the other cores,
    /// other tenants' VMs on the same L3 and memory controllers): two runs on one loaded VM
    /// measured L3 and DRAM ceilings 20-50 % apart; a different machine class (another
    /// memory generation, another cache size) differs by more.
    double bandwidth_ceiling_tolerance = 0.35;
};

/// Warnings about two report contexts whose devices have different ceilings: for each
/// device id in both, the ceiling ids only one has, and each id whose values differ
/// (relative to A) by more than the sum of the two probes' spreads where both contexts
/// record them (context.cpu_peaks.spread, CpuPeaks::spread), at least `tolerance`; where
/// they do not, by more than `tolerance` (compute ceilings) or `bandwidth_tolerance` (kind
/// "bandwidth"). Empty when the ceilings agree, or when neither report has any (reports
/// older than the ceilings).
std::vector<std::string> ceiling_differences(const nlohmann::json& context_a,
                                             const nlohmann::json& context_b,
                                             double tolerance = 0.10,
                                             double bandwidth_tolerance = 0.35);

/// The verdict on B against A.
struct SampleComparison {
    std::string verdict; // SAME, FASTER, SLOWER, UNCERTAIN
    double ratio = 0;    // median(B) / median(A): under 1 means B is faster
    double p_value = 1;
    std::string note; // why UNCERTAIN
};

SampleComparison compare_samples(std::span<const double> a, std::span<const double> b,
                                 const CompareOptions& options = {});

/// Two reports side by side. Rows pair on (op, size, backend, device, arch, variant);
/// rows without a partner are listed, not dropped.
class Comparison {
public:
    /// `compare --json` carries these at the top level (docs/json.md).
    static constexpr const char* kFormat = "switchyard.compare";
    static constexpr int kFormatVersion = 1;

    struct Pair {
        ProfileRow a, b;
        SampleComparison result;
    };

    static Comparison of(const Report& a, const Report& b, const CompareOptions& options = {});

    const std::vector<Pair>& pairs() const noexcept { return m_pairs; }
    const std::vector<ProfileRow>& only_in_a() const noexcept { return m_only_a; }
    const std::vector<ProfileRow>& only_in_b() const noexcept { return m_only_b; }
    /// Why the comparison may not be like for like (ceiling_differences()); JSON "warnings".
    const std::vector<std::string>& warnings() const noexcept { return m_warnings; }

    nlohmann::json to_json() const;
    std::string to_text() const;

private:
    std::vector<Pair> m_pairs;
    std::vector<ProfileRow> m_only_a, m_only_b;
    std::vector<std::string> m_warnings;
};

} // namespace switchyard
