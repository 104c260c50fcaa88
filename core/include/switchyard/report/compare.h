// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/profiling/driftcontrol.h>
#include <switchyard/report/report.h>
#include <switchyard/report/statistics.h>
#include <switchyard/report/verdictrule.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

// Whole reports compared: rows paired by key and judged by the verdict rule
// (report/verdictrule.h), their machines' fingerprints, ceilings and drift beside them.
namespace switchyard {

/// Warnings about two report contexts whose devices have different ceilings: for each
/// device id in both, the ceiling ids only one has, and each id whose values differ
/// (relative to A) by more than the sum of the two probes' spreads where both contexts
/// record them (context.cpu_peaks.spread, CpuPeaks::spread), at least `tolerance`; where
/// they do not, by more than `tolerance` (compute ceilings) or `bandwidth_tolerance` (kind
/// "bandwidth"). Empty when the ceilings agree, or when neither report has any (reports
/// older than the ceilings).
SWITCHYARD_CORE_EXPORT std::vector<std::string>
ceiling_differences(const RunContext& context_a, const RunContext& context_b,
                    double tolerance = 0.10, double bandwidth_tolerance = 0.35);

/// What differs between two reports' hardware fingerprints (context.fingerprint, see
/// profiling/fingerprint.h): one line per field, "machine.cpu.microcode: 0xa101144 ->
/// 0xa101148". Empty when they match. A report without a fingerprint (older than format 4)
/// gives one line saying so: such reports are never taken to be the same machine.
SWITCHYARD_CORE_EXPORT std::vector<std::string>
fingerprint_differences(const RunContext& context_a, const RunContext& context_b);
/// Both contexts have fingerprints whose machine parts match (the software may differ).
SWITCHYARD_CORE_EXPORT bool same_machine(const RunContext& context_a, const RunContext& context_b);

/// N reports side by side, the first (or `baseline`) the reference for every other: one
/// line per row key (ProfileRow::key(): op, size, backend, device, arch, variant), a cell
/// per report, each judged against the baseline's row, with the false-discovery control
/// over every (line, report) test together. The unit a fleet compares.
class SWITCHYARD_CORE_EXPORT MultiComparison {
public:
    /// `compare --json` carries these at the top level (docs/json.md).
    static constexpr const char* kFormat = "switchyard.compare";
    static constexpr int kFormatVersion = 2;

    struct Cell {
        const ProfileRow* row = nullptr; // nullptr: the report has no row with this key
        SampleComparison result;         // against the baseline; unset for the baseline
        bool judged = false;             // result is a verdict (both rows measured)
        /// The cell's median is far from the line's median over all reports (three or more
        /// reports): more than max(10 %, 3 robust standard deviations of the line).
        bool outlier = false;
    };
    struct Line {
        std::string key;
        const ProfileRow* first = nullptr; // the first report's row with this key
        std::vector<Cell> cells;           // one per report
    };
    struct Source {
        std::string name; // the file name, or the host
        /// fingerprint_differences() against the baseline (empty: the same machine).
        std::vector<std::string> fingerprint_differences;
        /// ceiling_differences() against the baseline.
        std::vector<std::string> ceiling_differences;
        /// The fingerprints' machine parts match the baseline's (software may differ).
        bool same_machine = false;
        /// How far the machine moved from the baseline's run to this one (their controls;
        /// unknown between two machines, whose controls differ by the machines).
        MachineDrift drift;
        std::string machine_id; // context.fingerprint.machine_id ("" when none)
    };

    /// `reports` must outlive the comparison (cells point into their rows). Throws
    /// std::invalid_argument for fewer than two reports, a baseline out of range or a
    /// different number of names.
    static MultiComparison of(std::span<const Report> reports, std::vector<std::string> names,
                              const CompareOptions& options = {}, std::size_t baseline = 0);

    const std::vector<Line>& lines() const noexcept { return m_lines; }
    const std::vector<Source>& sources() const noexcept { return m_sources; }
    std::size_t baseline() const noexcept { return m_baseline; }
    const CompareOptions& options() const noexcept { return m_options; }
    /// Counts over every judged cell.
    std::size_t count(Verdict v) const;
    /// True when every report's fingerprint matches the baseline's.
    bool same_machine() const;
    /// settle_advice() over every judged cell.
    SettleAdvice advice() const;

    nlohmann::json to_json() const;
    std::string to_text() const;

private:
    std::vector<Line> m_lines;
    std::vector<Source> m_sources;
    std::size_t m_baseline = 0;
    CompareOptions m_options;
};

/// Two reports side by side (B against A): MultiComparison of two, as pairs. Rows pair on
/// (op, size, backend, device, arch, variant); rows without a partner are listed, not
/// dropped.
class SWITCHYARD_CORE_EXPORT Comparison {
public:
    static constexpr const char* kFormat = MultiComparison::kFormat;
    static constexpr int kFormatVersion = MultiComparison::kFormatVersion;

    struct Pair {
        ProfileRow a, b;
        SampleComparison result;
    };

    static Comparison of(const Report& a, const Report& b, const CompareOptions& options = {});
    /// The baseline of `m` (A) against its report `other` (B), with m's verdicts (the
    /// false-discovery control over all of m's cells). Copies the rows: `m` may go.
    static Comparison of(const MultiComparison& m, std::size_t other);

    const std::vector<Pair>& pairs() const noexcept { return m_pairs; }
    const std::vector<ProfileRow>& only_in_a() const noexcept { return m_only_a; }
    const std::vector<ProfileRow>& only_in_b() const noexcept { return m_only_b; }
    /// Why the comparison may not be like for like: the fingerprints' differences, then
    /// ceiling_differences(); JSON "warnings".
    const std::vector<std::string>& warnings() const noexcept { return m_warnings; }
    const CompareOptions& options() const noexcept { return m_options; }
    /// How far the machine moved between A's run and B's (their drift controls).
    const MachineDrift& drift() const noexcept { return m_drift; }
    /// settle_advice() over the pairs.
    SettleAdvice advice() const;

    nlohmann::json to_json() const;
    std::string to_text() const;

private:
    std::vector<Pair> m_pairs;
    std::vector<ProfileRow> m_only_a, m_only_b;
    std::vector<std::string> m_warnings;
    CompareOptions m_options;
    MachineDrift m_drift;
    bool m_same_machine = false;
};

} // namespace switchyard
