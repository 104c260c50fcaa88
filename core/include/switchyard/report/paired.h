// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/report/compare.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace switchyard {

/// The statistics of a paired A/B run (`switchyard-cli ab`): each row measured in turns
/// that alternate between the sides (A B B A ...), so each pair of turns shares its moment
/// of the machine, and the verdict rests on the pairs' log ratios log(B / A) alone. What
/// drifts between pairs (the neighbours' load, the clock) cancels within each pair.
///
/// The rule, in compare's words (Verdict) and with its false-discovery control (Benjamini-
/// Hochberg over every row of the run, CompareOptions::fdr):
/// - FASTER/SLOWER: the Wilcoxon signed-rank test on the log ratios is significant after the
///   control (q < fdr), and the median ratio differs from 1 by more than the threshold
///   (CompareOptions::min_effect) and by more than the run's machine gap: the largest gap
///   between the sides that a row of identical code on both (the CPU reference, an unchanged
///   cell) showed beyond doubt in the same run (the near end of its 90 % interval). Two workers of
///   one build sat 2-3 % apart on some rows for the whole row (their physical pages, their place on
///   the vCPUs): a gap the run's own controls show is not the code's;
/// - SAME: the 90 % bootstrap interval of the median log ratio lies within
///   +-log(1 + threshold) (a 10 % change hidden in noise is AMBIGUOUS, not SAME);
/// - AMBIGUOUS otherwise, or with fewer than kMinPairs pairs.
struct SWITCHYARD_CORE_EXPORT PairedComparison {
    Verdict verdict = Verdict::Ambiguous;
    double ratio = 0;               // B over A: exp(median log ratio)
    double ci_low = 0, ci_high = 0; // the 90 % bootstrap interval of that ratio
    double p_value = 1;             // the signed-rank test's two-sided p
    double q_value = 1;             // Benjamini-Hochberg adjusted over the run's rows
    double threshold = 0;           // the practical threshold (relative)
    double noise = 0;               // the log ratios' standard deviation (pair to pair)
    double machine_gap = 0;         // the run's identical-code rows' largest gap (relative)
    std::size_t pairs = 0;          // pairs of turns the verdict rests on
    bool identical_code = false;    // both sides ran the same code (RowSpec::code)
    std::string note;               // what the verdict rests on, or why AMBIGUOUS

    static constexpr std::size_t kMinPairs = 5;
    nlohmann::json to_json() const;
    static PairedComparison from_json(const nlohmann::json& j);
};

/// "paired turns (A B B A ...): false-discovery rate 0.05 (Benjamini-Hochberg over all rows);
/// a difference must exceed 2.0 %; SAME needs the 90 % bootstrap interval of the median ratio
/// within it": what a paired run printed its verdicts under.
SWITCHYARD_CORE_EXPORT std::string paired_rule(const CompareOptions& options);

/// The two-sided p of the Wilcoxon signed-rank test that `d`'s median is 0 (zeros dropped,
/// ties given their mean rank): exact up to 25 non-zero values, the normal approximation
/// with a tie correction beyond. 1 for an empty `d`.
SWITCHYARD_CORE_EXPORT double signed_rank_p(std::span<const double> d);

/// The `level` (0.9) percentile bootstrap interval of the median of `d`, from `resamples`
/// resamples drawn with a fixed seed: the same `d` gives the same interval. {0, 0} when empty.
SWITCHYARD_CORE_EXPORT std::pair<double, double>
bootstrap_median_interval(std::span<const double> d, double level = 0.9,
                          std::size_t resamples = 2000, std::uint64_t seed = 0x5eed);

/// Whether a row's pairs so far have settled it SAME beyond doubt: the 90 % bootstrap interval
/// of their median log ratio (bootstrap_median_interval) lies within half the threshold,
/// +-log(1 + threshold / 2). `ab` stops a row there (AbController::Options::min_pairs): a
/// change of the threshold's size would put the interval's middle past half of it.
SWITCHYARD_CORE_EXPORT bool settled_same(std::span<const double> log_ratios, double threshold);

/// Judges each row's log ratios (log(B / A), one per pair of turns) by the rule above, the
/// false-discovery control over all the rows together. `identical_code[i]` marks rows whose
/// sides ran the same code (said in the note); may be empty. Deterministic.
SWITCHYARD_CORE_EXPORT std::vector<PairedComparison>
judge_paired(std::span<const std::vector<double>> log_ratios, const CompareOptions& options = {},
             const std::vector<bool>& identical_code = {});
/// judge_paired() in its two steps. measure_paired: one row's own figures (pairs, ratio, its
/// interval, noise, p), the costly part (a bootstrap); decide_paired: the run's rule over
/// measured rows (thresholds, q-values, the machine gap, verdicts and notes), cheap, so a
/// run can judge its rows so far after each row without measuring them again.
SWITCHYARD_CORE_EXPORT PairedComparison measure_paired(std::span<const double> log_ratios,
                                                       bool identical_code = false);
SWITCHYARD_CORE_EXPORT void decide_paired(std::span<PairedComparison> rows,
                                          const CompareOptions& options = {});

} // namespace switchyard
