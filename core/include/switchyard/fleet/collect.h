// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
// `fleet collect`: which task's report is in the shared folder, and for each missing one
// what Slurm and its log say.

#include <switchyard/fleet/fleet.h>
#include <switchyard/fleet/slurm.h>

#include <string>
#include <vector>

namespace switchyard::fleet {

struct SWITCHYARD_CORE_EXPORT CollectedTask {
    Target target;
    TaskState state;
    std::string report;                // the report's path; empty when missing
    std::string host;                  // from the report's file name
    std::string problem;               // why it is missing: "no report file", "unreadable: ..."
    std::string log;                   // the task's log path
    std::vector<std::string> log_tail; // its last lines, for missing reports (raw text)
    std::vector<std::string> extra_reports; // more reports for the task (a requeue elsewhere)

    bool collected() const { return !report.empty(); }
    nlohmann::json to_json() const;
};

struct SWITCHYARD_CORE_EXPORT Collection {
    std::string job_id;
    std::vector<CollectedTask> tasks;
    std::vector<std::string> notes;

    std::size_t missing() const;
    std::vector<std::string> report_paths() const;
    nlohmann::json to_json() const;
};

/// The last `lines` lines of the file at `path` (its last 64 KiB at most); {} when it cannot
/// be read. Lines are raw: escape them before they reach a terminal.
SWITCHYARD_CORE_EXPORT std::vector<std::string> tail_lines(const std::string& path,
                                                           std::size_t lines);

/// Looks for each task's report in the manifest's folder (checked to load as a report) and
/// pairs it with `status` (its tasks by index).
SWITCHYARD_CORE_EXPORT Collection collect(const Manifest& manifest, const FleetStatus& status,
                                          std::size_t tail = 10);

} // namespace switchyard::fleet
