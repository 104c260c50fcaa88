// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
// A fleet's tuning (`fleet collect --tune`, the Fleet tab): the nodes grouped by machine class
// (the reports' fingerprint machine_id), one tuning per class kept from the entries every node
// of the class agrees on (tuning/tune.h's tune_report() of each node's --all-variants report),
// and the regret map: per class, each (op, size, device kind) where the chain's pick was
// regretted (DispatchVerdict::Regret), by how much and on how many of the class's nodes.

#include <switchyard/report/report.h>
#include <switchyard/tuning/tuning.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace switchyard::fleet {

/// One node's report as the fleet tuning reads it.
struct SWITCHYARD_CORE_EXPORT FleetNode {
    std::string name;               // "task 0 (vm)": node_name()
    std::string path;               // the report's path ("" when it was not read from a file)
    const Report* report = nullptr; // not owned; must outlive tune_fleet()
};

/// "task 3 (host)" for a fleet report file (report-<host>-<job>_<task>.json, fleet.h), else
/// the file name of `path`.
SWITCHYARD_CORE_EXPORT std::string node_name(const std::string& path);

/// One machine class: its nodes and the tuning they agree on.
struct SWITCHYARD_CORE_EXPORT ClassTuning {
    std::string machine_id;
    std::string description;                   // the CPU's brand and the GPUs' names
    std::vector<std::string> nodes;            // the nodes tuned (with dispatch findings)
    std::vector<std::string> without_findings; // the class's nodes left out: no findings
    Tuning tuning;                             // the entries every one of `nodes` keeps
    std::vector<std::string> notes; // entries and sizes dropped (naming the nodes), and why
    std::string file;               // where write_tunings() wrote it; "" before

    /// Whether there is a tuning to write: at least one node had dispatch findings.
    bool tunable() const { return !nodes.empty(); }
    nlohmann::json to_json() const;
};

/// One line of the regret map: on `nodes` (n of `class_nodes`) of a class, the chain picked
/// `pick` for (op, size, device kind) and `faster` was faster by the dispatch-regret rule.
struct SWITCHYARD_CORE_EXPORT RegretEntry {
    std::string machine_id, op, size, device;   // device: the device kind
    double work = 0;                            // of the size (size_work), for the order
    std::string pick, faster;                   // "arch/variant"
    double min_speedup = 1, median_speedup = 1; // pick median / faster median, across `nodes`
    std::vector<std::string> nodes;             // the nodes where the pick was regretted so
    std::size_t class_nodes = 0;                // the class's nodes with dispatch findings
    std::string tuned; // the cell the class's tuning uses there instead; "" when none

    nlohmann::json to_json() const;
};

/// What tune_fleet() found. JSON: `switchyard.fleet-tuning` (docs/json.md).
struct SWITCHYARD_CORE_EXPORT FleetTuning {
    static constexpr const char* kFormat = "switchyard.fleet-tuning";
    static constexpr int kFormatVersion = 1;

    std::vector<ClassTuning> classes; // by machine_id
    std::vector<RegretEntry> regrets; // by machine_id, op, device, work, size, pick, faster
    std::vector<std::string> notes;   // nodes in no class (no machine id)

    nlohmann::json to_json() const;
    /// The regret map as an aligned text table, one line per RegretEntry in their order
    /// (untrusted text escaped); a line saying so when there is none.
    std::string regret_map_text() const;
    /// Per class: its nodes, its entries (one line each) and where it was written, then the
    /// notes.
    std::string summary() const;
};

/// Groups `nodes` by machine class and keeps, per class, the tuning entries on which every node
/// with dispatch findings agrees: the same op, device kind, variant, chosen and overridden cell
/// and code identity, over the sizes every node kept (split into ranges at any size the class
/// measured that not all of them kept). A dropped entry or size is noted with the nodes that
/// kept it and what the others did. A node without dispatch findings (not run with
/// --all-variants) is left out of its class with a note saying what to run.
SWITCHYARD_CORE_EXPORT FleetTuning tune_fleet(const std::vector<FleetNode>& nodes);

/// Writes each tunable class's tuning to `<dir>/<machine_id>.tuning` (replacing a file there)
/// and sets ClassTuning::file. Throws std::runtime_error naming the file that could not be
/// written.
SWITCHYARD_CORE_EXPORT void write_tunings(FleetTuning& fleet_tuning, const std::string& dir);

} // namespace switchyard::fleet
