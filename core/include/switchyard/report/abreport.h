// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/report/compare.h>
#include <switchyard/report/paired.h>
#include <switchyard/report/report.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

/// One side of a paired A/B run: where its worker finds plugins, and which tuning it follows.
struct SWITCHYARD_CORE_EXPORT AbSide {
    /// The plugin folder the side's worker searches first (SWITCHYARD_PLUGIN_PATH); empty:
    /// the default search path.
    std::string plugin_dir;
    /// The tuning file the side follows (SWITCHYARD_TUNING); empty: the machine's tuning
    /// files, as profile; kNoTuning: none (the fallback chain alone).
    std::string tuning;
    static constexpr const char* kNoTuning = "none";

    /// "plugins /x/a, tuning none" / "the default plugins and tuning".
    std::string describe() const;
    nlohmann::json to_json() const;
    static AbSide from_json(const nlohmann::json& j);
};

/// One row of a paired A/B run: both sides' rows (each side's samples of the row, all its
/// turns), the log ratio log(B / A) of each pair of turns (the medians of A's turn and of B's
/// next to it), and the verdict on them.
struct SWITCHYARD_CORE_EXPORT AbRow {
    ProfileRow a, b;
    std::vector<double> log_ratios;
    PairedComparison result;

    /// Both sides ran the same build of the same cell: a gap is the machine's (MACHINE).
    bool identical_code() const;
};

/// A paired A/B run (`switchyard-cli ab`): both sides, their rows and pairs, the verdicts.
///
/// File format (JSON, docs/json.md): {"format": "switchyard.ab", "format_version": 1,
/// "a": AbSide, "b": AbSide, "pairs": N, "min_pairs": M, "options": CompareOptions, "context": A's
/// context, "context_b": B's, "rows": [{"a": ProfileRow, "b": ProfileRow, "log_ratios": [...],
/// "verdict": PairedComparison}, ...]}.
struct SWITCHYARD_CORE_EXPORT AbReport {
    static constexpr const char* kFormat = "switchyard.ab";
    static constexpr int kFormatVersion = 1;

    AbSide a, b;
    std::int64_t pairs = 0;     // pairs of turns asked for a row (a turn: a pairs-th of it)
    std::int64_t min_pairs = 0; // a row settled SAME may stop from here (0: every row ran all)
    CompareOptions options;     // the verdicts' rule
    RunContext context;         // side A's worker's
    RunContext context_b;       // side B's
    std::vector<AbRow> rows;

    /// Judges every row from its log ratios (judge_paired(): the false-discovery control
    /// over all of them), identical code where both rows name the same build.
    void judge();
    std::size_t count(Verdict v) const;
    nlohmann::json to_json() const;
    /// Throws ReportError naming the bad key.
    static AbReport from_json(const nlohmann::json& j);
    /// As Report::load/save (util/safefile.h).
    static AbReport load(const std::string& path);
    void save(const std::string& path) const;
    /// The table the CLI prints: one line per row, then the counts.
    std::string to_text() const;
};

} // namespace switchyard
