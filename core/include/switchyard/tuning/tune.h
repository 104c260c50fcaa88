// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/report/report.h>
#include <switchyard/tuning/tuning.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// What tune_report() decided for one measured (op, device, size).
struct SWITCHYARD_CORE_EXPORT TuneDecision {
    std::string op, device, size;
    std::string pick;   // the chain's pick, "arch/variant"
    std::string winner; // the cell the tuning keeps: the pick where nothing beat it
    DispatchVerdict verdict = DispatchVerdict::Ok;
    std::string message; // the dispatch finding's message
};

/// A tuning and how it was reached.
struct SWITCHYARD_CORE_EXPORT TuneResult {
    Tuning tuning;
    std::vector<TuneDecision> decisions; // every measured (op, device, size), in order
    std::vector<std::string> notes;      // what could not be tuned, and why
};

/// One device's view of one (op, size) in one report: the chain's pick's row. The cells
/// beside it are the report's rows of the same op, size and device.
struct SWITCHYARD_CORE_EXPORT SizeObservation {
    std::string node; // who measured it ("task 0 (vm)"; "" on one machine)
    std::string path; // the report's file ("" when it was not saved)
    const Report* report = nullptr;
    const ProfileRow* pick = nullptr;
};

/// What choose_at() decided for one (op, device kind, variant, size).
struct SWITCHYARD_CORE_EXPORT SizeChoice {
    std::string pick;   // the chain's pick, "arch/variant"
    std::string chosen; // the cell tuned in instead; "" where the pick stays
    /// The other cells within noise of `chosen` on every observation (a tie, broken by
    /// tie_order()), in that order.
    std::vector<std::string> tied;
    TunedCell chosen_cell, overrides;
    TuningEvidence evidence;        // `chosen` against the pick where it beat the pick least
    std::size_t weakest = 0;        // the observation `evidence` comes from
    double worst_regret = 1;        // chosen's median / the fastest's, the largest across them
    std::string why;                // why the pick stays ("" where a cell is chosen)
    std::vector<std::string> notes; // what the observations disagreed on
};

/// The one rule `tune` and `fleet collect --tune` decide by. Among the cells that every
/// observation measured, passing parity at the pick's tolerance and beating the pick by the
/// dispatch-regret rule (judge_cells(): DispatchVerdict::Regret), with the same code
/// identity everywhere, the cell with the smallest worst regret (its median over the
/// fastest's, the largest across the observations). A cell it does not beat on every
/// observation, and that does not beat it on every observation, ties with it (so one node's
/// burst of noise breaks no tie; a gap every node measured does); a tie goes to the first in
/// tie_order(), never to the one noise favoured. All observations must share the pick.
SWITCHYARD_CORE_EXPORT SizeChoice choose_at(const std::vector<SizeObservation>& observations);

/// Whether cell `a` ("arch/variant") comes before `b` in the order ties are broken in: the
/// chain's own (the rungs of `variant` down the device kind's arch ladder, most specific
/// first, then the terminal generic/reference), then other cells, then by name.
SWITCHYARD_CORE_EXPORT bool tie_order(std::string_view device_kind, std::string_view variant,
                                      const std::string& a, const std::string& b);

/// One measured (op, device kind, variant, size) and every observation of it.
struct SWITCHYARD_CORE_EXPORT TunePoint {
    std::string op, device_kind, variant, size;
    double work = 0; // size_work() of its dims
    std::vector<SizeObservation> observations;
};

/// choose_at() of every point, and the entries they make: per (op, device kind, variant),
/// sizes ordered by work, a run of consecutive sizes with the same chosen cell (the same
/// code) over the same pick is one entry, its evidence per size from the observation where
/// the chosen cell beat the pick least. `notes` name the ties (the cells and the one kept)
/// and what the observations disagreed on, each prefixed with its op, size and device kind.
struct SWITCHYARD_CORE_EXPORT TuneChoices {
    std::vector<TuningEntry> entries;
    std::vector<std::string> notes;
    std::vector<std::pair<TunePoint, SizeChoice>> choices; // in the points' order
};
SWITCHYARD_CORE_EXPORT TuneChoices tune_points(const std::vector<TunePoint>& points);

/// The tuning an --all-variants report supports (`switchyard-cli tune`): choose_at() of each
/// (op, device kind, size) with a dispatch finding, over the devices of the kind. Sizes are
/// ordered by work; a run of consecutive sizes with the same chosen cell (and the same pick)
/// is one entry, so the ranges follow the sizes where the choice changes, not fixed buckets.
/// The entry's cells carry the code identity the report's rows recorded. `report_path` is
/// named in each entry ("" when the report was not saved).
SWITCHYARD_CORE_EXPORT TuneResult tune_report(const Report& report, const std::string& report_path);

/// What tune_and_write() did: the tuning file and the report it names, the decisions, and
/// the tuning as written (the new entries and the file's others).
struct SWITCHYARD_CORE_EXPORT TuneWrite {
    std::string file, report;
    TuneResult result;
    Tuning written;
    std::size_t fresh = 0; // entries this run wrote
    /// "2 tuned entries written to FILE", one line per entry, the notes: what `tune` and
    /// Profile ▸ Tune dispatch print.
    std::string summary(bool dry_run = false) const;
};

/// `tune` and Profile ▸ Tune dispatch, after the run: the report saved beside the tuning
/// (report_beside(), unless `report_path` says where it already is), tune_report() of it,
/// merged with the file's entries of other ops (merge_with_file()) and written. `file` empty:
/// default_tuning_file() of the report's machine. `dry_run`: nothing is written. Throws
/// std::runtime_error when a file cannot be written.
SWITCHYARD_CORE_EXPORT TuneWrite tune_and_write(const Report& report, std::string file,
                                                std::string report_path, bool dry_run = false);

} // namespace switchyard
