// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/report/report.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace switchyard {

/// Expected values with tolerances, per system, the way ReFrame keeps its references: a
/// CI gate (`switchyard-cli check REPORT... --references refs.json`) fails when a row's
/// time leaves its band. File format (docs/json.md):
///
///     {"format": "switchyard.references", "format_version": 1,
///      "systems": [{"name": "zen4-2c",
///                   "match": {"machine_id": "5f0c1e2a9b3d4c7e", "hostnames": ["node*"]},
///                   "rows": [{"op": "gemm", "size": "512x512x512", "device": "cpu",
///                             "backend": "builtin", "arch": "x86-64-v4",
///                             "variant": "default", "value": 1.3e-3,
///                             "lower": -0.10, "upper": 0.10}]}]}
///
/// `value` is the row's median time per launch in seconds; the row passes when
/// value × (1 + lower) <= median <= value × (1 + upper). `lower` in [-1, 0], `upper` >= 0;
/// null (or absent) leaves that side open, as ReFrame's None. A system matches a report
/// when every criterion it gives holds: the fingerprint's machine_id, and one of the host
/// name patterns (fnmatch: `*`, `?`, `[0-9]`). The first matching system is used.
struct SWITCHYARD_CORE_EXPORT ReferenceRow {
    std::string op, size, device, backend, arch, variant;
    double value = 0; // seconds per launch
    std::optional<double> lower, upper;
    /// The memory bandwidth the row's probe got beside it when the reference was measured
    /// (ProfileRow::memory, GB/s; JSON "memory_gbs", absent for rows without it). A report
    /// row with its own memory beside it is judged by its time at the reference's memory:
    /// the part of its time the memory accounts for (its share s of the memory beside it,
    /// gbps / memory, at most 1) scaled by the two memories, median / (1 - s + s x this /
    /// its memory). That follows a shared host whose memory other tenants take a share of,
    /// where a raw time cannot.
    std::optional<double> memory_gbs;
    /// How `upper` was set (JSON "band"): "runs" (from the variation between the row's runs,
    /// BandRule), "reports" (from the spread between K reports of the system), "floor" (one
    /// run: the floor), "given" (--upper), "" (an older file).
    std::string band;
    /// ProfileRow::key()'s form.
    std::string key() const;
};

/// How check --write-references sets each row's band. Given tolerances (`lower`, `upper`)
/// make a fixed band for every row, as ReFrame's. Otherwise the upper tolerance comes from
/// the variation measured between the row's runs (profile --repeat N; for a row with memory
/// beside it, of its times at the memory each run got): `sigmas` standard deviations of one
/// future run's median about the reference's (sigma x sqrt(1 + 1/N) on the log scale), at
/// least `floor`; a row of one run gets the floor. Written from K >= 2 reports of one system
/// (References::system_from of several), the value is the geometric mean of the reports'
/// medians and sigma the standard deviation of their logs *between the reports*, at least the
/// median of that over the system's rows (with K = 3, one row's two degrees of freedom say
/// little; the machine's drift between runs is shared by its rows), times sqrt(1 + 1/K).
struct SWITCHYARD_CORE_EXPORT BandRule {
    std::optional<double> lower, upper;
    double floor = 0.10;
    double sigmas = 3.1; // one-sided, about 1 in 1,000 identical runs outside
};

/// The drift control of the reports a system was written from (their context.control): the
/// fastest and the slowest sentinel time they saw. check widens a row's band by as far as its
/// own report's control went beyond that range: the machine ran slower (or faster) than in
/// any reference run, and a row slower by as much is the machine's.
struct SWITCHYARD_CORE_EXPORT ReferenceControl {
    std::string sentinel;
    double fastest = 0, slowest = 0; // seconds per launch
};

struct SWITCHYARD_CORE_EXPORT ReferenceSystem {
    std::string name;
    std::string machine_id;             // "" : any
    std::vector<std::string> hostnames; // fnmatch patterns; empty: any
    std::vector<ReferenceRow> rows;
    std::size_t reports = 1; // how many reports the values and bands came from (JSON "reports")
    std::optional<ReferenceControl> control; // JSON "control"; unset: none recorded
    /// Every criterion given holds for `report` (its context.fingerprint.machine_id and
    /// context.host.hostname). A system with no criterion matches every report.
    bool matches(const Report& report) const;
};

class SWITCHYARD_CORE_EXPORT ReferenceError : public ReportError {
public:
    using ReportError::ReportError;
};

struct SWITCHYARD_CORE_EXPORT References {
    static constexpr const char* kFormat = "switchyard.references";
    static constexpr int kFormatVersion = 1;

    std::vector<ReferenceSystem> systems;

    /// The first system that matches `report`, or nullptr.
    const ReferenceSystem* match(const Report& report) const;

    nlohmann::json to_json() const;
    /// Throws ReferenceError naming `origin` and the key of the first problem
    /// ("refs.json: systems[0].rows[3].upper: expected a number >= 0, got -0.1").
    static References from_json(const nlohmann::json& j, const std::string& origin = "references");
    static References load(const std::string& path);
    /// Written without destroying anything (atomic replace; util/safefile.h).
    void save(const std::string& path) const;

    /// The system a report's measured rows make: `name` (default: the report's host name),
    /// matched by the report's machine_id and, when given, `hostnames`; each row's median as
    /// its value, its memory beside it where measured, and the band `rule` sets.
    static ReferenceSystem system_from(const Report& report, std::string name,
                                       std::vector<std::string> hostnames,
                                       const BandRule& rule = {});
    /// The system K reports of one machine make (BandRule: bands from the spread between
    /// them), with their drift control's range. A row enters where every report measured
    /// it. One report: as above. Throws ReferenceError for no reports, or reports of
    /// different machines (fingerprints' machine_id).
    static ReferenceSystem system_from(std::span<const Report> reports, std::string name,
                                       std::vector<std::string> hostnames,
                                       const BandRule& rule = {});
    /// Adds `system`, replacing one of the same name.
    void put(ReferenceSystem system);
};

/// One row's outcome under check.
struct SWITCHYARD_CORE_EXPORT CheckedRow {
    enum class Status { Pass, Fail, Missing, NotMeasured, NoReference };
    Status status = Status::NoReference;
    std::string label;               // "gemm 512x512x512 cpu x86-64-v4/default [builtin]"
    double measured = 0;             // the report's median (0 when missing)
    double value = 0;                // the reference's
    std::optional<double> low, high; // the band, seconds
    /// The median at the reference's memory (ReferenceRow::memory_gbs), which the band
    /// judged instead of `measured`; unset where the row was judged by its time.
    std::optional<double> at_reference_memory;
    /// How far the report's drift control went beyond the references' (ReferenceControl):
    /// the band's top was multiplied by `drift_high` (>= 1), its bottom by `drift_low` (<= 1).
    double drift_low = 1, drift_high = 1;
    std::string message; // why it failed, or what it was judged by
    bool failed() const noexcept {
        return status == Status::Fail || status == Status::Missing || status == Status::NotMeasured;
    }
};
SWITCHYARD_CORE_EXPORT const char*
to_string(CheckedRow::Status status) noexcept; // "pass", "FAIL", "missing", ...

struct SWITCHYARD_CORE_EXPORT CheckResult {
    std::string report; // its name (the path)
    std::string system; // the matching system's name ("" when none matched)
    std::vector<CheckedRow> rows;
    std::size_t failures() const;
};

/// Checks every reference row of the system that matches `report`, and lists the report's
/// rows without a reference. A report that no system matches gets system "" and no rows.
SWITCHYARD_CORE_EXPORT CheckResult check_report(const Report& report, const References& references,
                                                std::string name);

} // namespace switchyard
