// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <optional>
#include <span>
#include <vector>

// The statistics compare's verdict rule rests on (report/verdictrule.h): Student's t,
// Welch's test, the false-discovery control. No report types: numbers in, numbers out.
namespace switchyard {

/// The t value with P(T > t) = p (0 < p < 0.5) of Student's t distribution with `df`
/// degrees of freedom (one-sided upper quantile).
SWITCHYARD_CORE_EXPORT double student_t_upper_quantile(double p, double df);

/// Benjamini-Hochberg adjusted p-values (q-values), in the order of `p`.
SWITCHYARD_CORE_EXPORT std::vector<double> benjamini_hochberg(std::span<const double> p);

/// Welch's two-sided t test on two samples of at least two values each: the p-value (1
/// when the samples have no variance and equal means, 0 when none and different means).
SWITCHYARD_CORE_EXPORT double welch_t_p(std::span<const double> a, std::span<const double> b);

/// Two rows' independent runs (their run medians) on the log scale: what compare and the
/// dispatch findings judge a repeated run by.
struct SWITCHYARD_CORE_EXPORT RunsComparison {
    double ratio = 0;                  // B over A: the ratio of the geometric means
    double center_a = 0, center_b = 0; // the geometric means of the run medians
    double noise = 0;                  // pooled standard deviation of the log run medians
    double p_value = 1;                // Welch's two-sided t test on the logs
    double ci_half_width = 0;          // of the 90 % confidence interval of the log ratio
};
/// nullopt unless both sides hold at least two positive, finite values.
SWITCHYARD_CORE_EXPORT std::optional<RunsComparison> compare_runs(std::span<const double> a,
                                                                  std::span<const double> b);

} // namespace switchyard
