// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/report/report.h>
#include <switchyard/tuning/tuning.h>

#include <string>
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

/// The tuning an --all-variants report supports (`switchyard-cli tune`). For each (op,
/// device kind, size) with a dispatch finding, the winner is the fastest cell that passed
/// parity at the chain pick's tolerance when it beats the pick by the dispatch-regret rule
/// (DispatchVerdict::Regret), else the pick. Sizes are ordered by work; a run of consecutive
/// sizes where one cell beats the pick is one range, and each range whose winner is not the
/// pick is an entry (so the ranges follow the sizes where the winner changes, not fixed
/// buckets). A range keeps its first size's winner through a size where another cell measured
/// fastest if the kept cell beats the pick there too and the fastest does not beat it by the
/// same rule (two tied cells are one range, with a note, not an entry per size). The
/// entry's cells carry the code identity the report's rows recorded. `report_path` is named
/// in each entry ("" when the report was not saved).
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
