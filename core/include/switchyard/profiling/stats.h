// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace switchyard {

/// Summary statistics of a set of timing samples (seconds).
struct SWITCHYARD_CORE_EXPORT SampleStats {
    std::int64_t count = 0;
    double min = 0, max = 0, mean = 0, median = 0;
    double p90 = 0;       // linear interpolation between order statistics (numpy's default)
    double stddev = 0;    // sample standard deviation (n - 1)
    double rel_noise = 0; // stddev / mean (0 from a single sample: see noise_known)

    /// Whether rel_noise says anything: one sample has no spread, and its 0 is not "quiet"
    /// (tables print n/a for it).
    bool noise_known() const noexcept { return count >= 2; }

    /// Throws std::invalid_argument on NaN/Inf samples.
    static SampleStats from(std::span<const double> samples);
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key.
    static SampleStats from_json(const nlohmann::json& j);
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const SampleStats& stats);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, SampleStats& stats);

/// Keeps every (size / keep)-th sample when there are more than `keep_samples`, so a report
/// stays small (a negative `keep_samples` keeps all).
SWITCHYARD_CORE_EXPORT void thin_samples(std::vector<double>& samples, std::int64_t keep_samples);

/// The q-quantile (0..1) of sorted data, numpy's linear method.
SWITCHYARD_CORE_EXPORT double quantile_sorted(std::span<const double> sorted, double q);

/// nvbench's stopping rule: take samples until the relative standard deviation is under
/// `max_noise` with at least `min_samples`, or the time budget is spent, or `max_samples`.
class SWITCHYARD_CORE_EXPORT StoppingRule {
public:
    struct Criteria {
        double max_noise = 0.005; // 0.5 %
        std::int64_t min_samples = 10;
        double time_budget_s = 1.0;
        std::int64_t max_samples = 100000;
    };
    enum class Stop { None, Converged, TimeBudget, MaxSamples };

    explicit StoppingRule(Criteria criteria) : m_criteria(criteria) {}

    /// Adds one sample; `elapsed_s` is the time spent sampling so far. Returns why to stop
    /// now (None: keep going). Once it said stop, it keeps saying so.
    Stop add(double sample, double elapsed_s);

    std::int64_t count() const noexcept { return m_count; }
    double mean() const noexcept { return m_mean; }
    double rel_noise() const noexcept;
    Stop stopped() const noexcept { return m_stop; }
    const Criteria& criteria() const noexcept { return m_criteria; }

    static std::string_view to_string(Stop s) noexcept;

private:
    Criteria m_criteria;
    std::int64_t m_count = 0;
    double m_mean = 0, m_m2 = 0; // Welford
    Stop m_stop = Stop::None;
};

/// The two-sided p-value of the Mann-Whitney U test, as scipy.stats.mannwhitneyu
/// (alternative='two-sided', method='auto') computes it: exact when both samples have
/// fewer than 8 values and there are no ties, else the normal approximation with tie and
/// continuity corrections. 1.0 when either sample is empty.
SWITCHYARD_CORE_EXPORT double mann_whitney_p(std::span<const double> a, std::span<const double> b);

} // namespace switchyard
