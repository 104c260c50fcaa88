// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/report/compare.h>
#include <switchyard/report/report.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace switchyard {

/// What compare's FASTER/SLOWER rule called among rows of identical code: every call a false
/// positive, since nothing changed but the machine's state between the runs.
struct SWITCHYARD_CORE_EXPORT CalibrationCount {
    std::size_t judged = 0;          // rows of identical code that got a verdict
    std::size_t false_positives = 0; // ... called FASTER or SLOWER
    std::size_t same = 0, ambiguous = 0;
    /// false_positives / judged (0 without any judged).
    double rate() const;
    /// The one-sided 95 % upper bound of the rate (Clopper-Pearson): with 0 of 72, 4.1 %.
    double upper_95() const;
    nlohmann::json to_json() const;
};

/// compare --calibrate: the measured false-positive rate of compare's verdict rule on one
/// machine, from K reports of identical runs (an A/A test). Every pair of reports is
/// compared with the rule (CompareOptions, the false-discovery control over each pair's
/// rows); a row counts where both sides ran identical code (SampleComparison::
/// identical_code), else it is skipped and said. The pairs share reports, so they are not
/// independent: the bound is a guide, not a guarantee.
struct SWITCHYARD_CORE_EXPORT Calibration {
    static constexpr const char* kFormat = "switchyard.calibration";
    static constexpr int kFormatVersion = 1;

    std::string machine_id;
    nlohmann::json machine; // the fingerprint's machine part
    std::string date;       // UTC ISO 8601, when it was worked out
    std::string rule;       // CompareOptions::describe() of the rule calibrated
    std::size_t reports = 0, report_pairs = 0;
    std::size_t skipped_rows = 0; // rows whose code was not identical (or not recorded)
    CalibrationCount overall;
    std::map<std::string, CalibrationCount> per_op;
    SettleAdvice advice; // over every judged row of every pair
    /// How far apart identical reports of this machine put a row: the 95th percentile of
    /// |B/A - 1| over every judged row of identical code (its ratio of centers). compare
    /// uses it in its rule (apply_to): a difference between reports made apart must exceed
    /// it. 0 in a calibration from before it was kept (compare --calibrate again).
    double spread_95 = 0;
    std::vector<std::string> sources; // the reports' names, in order

    /// "0 of 72 rows of identical code called FASTER or SLOWER (3 runs, 3 pairs): a false-
    /// positive rate of 0 %, at most 4.1 % (95 %)".
    std::string summary() const;
    /// What compare prints under its rule for this machine's reports: "Measured on this
    /// machine (compare --calibrate, 2026-12-06): <summary>".
    std::string beside_the_rule() const;
    /// The rule with this machine's calibration in it: CompareOptions::calibrated_floor
    /// = spread_95, and where it came from. Leaves `options` as it is without a spread.
    void apply_to(CompareOptions& options) const;
    /// The summary, a table per op, the advice.
    std::string text() const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming what is wrong.
    static Calibration from_json(const nlohmann::json& j);
    void save(const std::string& path) const;
    static Calibration load(const std::string& path);
};

/// The calibration of K >= 2 reports of one machine. Throws std::invalid_argument for fewer
/// than two reports or reports of different machines (a calibration is of one machine).
SWITCHYARD_CORE_EXPORT Calibration calibrate(std::span<const Report> reports,
                                             std::vector<std::string> names,
                                             const CompareOptions& options = {});

/// Where this user keeps the calibration of a machine: <data>/switchyard/calibration/
/// MACHINE_ID.json (the data folder of the tuning files). Throws std::invalid_argument
/// without a home folder.
SWITCHYARD_CORE_EXPORT std::string default_calibration_file(const std::string& machine_id);
/// The calibration kept for `machine_id`; nullopt where there is none or it cannot be read.
SWITCHYARD_CORE_EXPORT std::optional<Calibration> find_calibration(const std::string& machine_id);

} // namespace switchyard
