// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
// Fleet profiling on Slurm: one `sbatch` job array, one task per target, each
// task running `switchyard-cli profile` with the same settings into a shared folder. This
// header is the pure part: the per-task targets, the batch script, the report file names and
// the folder's manifest (fleet.json). Talking to Slurm is fleet/slurm.h.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::fleet {

/// What pins one array task: nothing (a copy), a node, a partition, a constraint (Slurm
/// features) or a generic resource such as gpu:h100:1.
enum class Placement { None, Node, Partition, Constraint, Gres };

SWITCHYARD_CORE_EXPORT std::string_view to_string(Placement p);
/// The option that lists it: "--nodelist", "--partition", "--constraint", "--gres".
SWITCHYARD_CORE_EXPORT std::string_view option_of(Placement p);
/// The `scontrol update` field that pins a task to it: NodeList, Partition, Features, Gres.
SWITCHYARD_CORE_EXPORT std::string_view scontrol_field(Placement p);
SWITCHYARD_CORE_EXPORT std::optional<Placement> placement_from_string(std::string_view text);

/// One array task's target.
struct SWITCHYARD_CORE_EXPORT Target {
    std::int64_t index = 0;
    Placement placement = Placement::None;
    std::string value; // the node, partition, constraint or gres; empty for Placement::None
    /// "node vm", "partition gpu", "gres gpu:h100:1", "copy 2".
    std::string label() const;
    nlohmann::json to_json() const;
    static Target from_json(const nlohmann::json& j);
};

/// A Slurm hostlist ("node[01-03,7],login") as host names ("node01", "node02", "node03",
/// "node7", "login"). Throws std::invalid_argument naming the problem (an unclosed bracket,
/// a reversed range, more than 100000 hosts).
SWITCHYARD_CORE_EXPORT std::vector<std::string> expand_hostlist(std::string_view text);

/// What `fleet submit` was asked for.
struct SWITCHYARD_CORE_EXPORT SubmitRequest {
    std::string folder; // the shared folder; made absolute by plan()
    std::string cli;    // the switchyard-cli each task runs; absolute
    std::string job_name = "switchyard-fleet";
    std::int64_t tasks = 0; // --tasks: copies without placement (0: one per listed target)
    // Comma-separated lists; the one with several values gives one task per value, a single
    // value is passed through to sbatch for every task.
    std::string nodelist, partition, constraint, gres;
    std::string account, time;
    std::vector<std::string> sbatch_args; // --sbatch-arg, passed through as they are
    std::int64_t throttle = 0;            // at most this many tasks at once (%K); 0: no limit
    bool exclusive = false;
    std::vector<std::string> profile_args; // what follows `--`: the profile settings
};

/// A checked request: its targets, the batch script and the commands that pin each task.
struct SWITCHYARD_CORE_EXPORT Plan {
    SubmitRequest request;
    std::vector<Target> targets;
    Placement placement = Placement::None;
    std::string script;
    std::vector<std::string> sbatch_options; // the script's #SBATCH lines, without "#SBATCH "
    /// argv of `scontrol update JobId=<job>_<i> Field=value` per pinned task.
    std::vector<std::vector<std::string>> pin_commands(const std::string& job_id) const;
    /// "<folder>/fleet.sbatch", "<folder>/logs", "<folder>/fleet.json".
    std::string script_path() const;
};

/// Checks `request` and builds its plan; throws std::invalid_argument saying what is wrong
/// and what to do (two options that both list several values, --tasks against a list of
/// another length, a folder or value the batch script cannot carry, -o among the profile
/// settings).
SWITCHYARD_CORE_EXPORT Plan plan(SubmitRequest request);

/// `text` as one word for a POSIX shell ('it'\''s').
SWITCHYARD_CORE_EXPORT std::string shell_quote(std::string_view text);

/// "report-<host>-<job>_<task>.json", the name each task writes.
SWITCHYARD_CORE_EXPORT std::string report_file_name(std::string_view host, std::string_view job_id,
                                                    std::int64_t task);
/// The parts of a report file name, or nullopt when `name` is not one.
struct SWITCHYARD_CORE_EXPORT ReportName {
    std::string host, job_id;
    std::int64_t task = 0;
};
SWITCHYARD_CORE_EXPORT std::optional<ReportName> parse_report_file_name(std::string_view name);
/// "<folder>/logs/<job>_<task>.log" (the batch script's --output=%A_%a).
SWITCHYARD_CORE_EXPORT std::string log_path(const std::string& folder, std::string_view job_id,
                                            std::int64_t task);

/// fleet.json: what status and collect need, given only the folder.
struct SWITCHYARD_CORE_EXPORT Manifest {
    static constexpr const char* kFormat = "switchyard.fleet";
    static constexpr int kFormatVersion = 1;
    static constexpr const char* kFileName = "fleet.json";

    std::string job_id;
    std::string job_name;
    std::string folder;
    std::string cli;
    std::string submitted; // ISO 8601, UTC
    std::int64_t throttle = 0;
    std::vector<Target> targets;
    std::vector<std::string> profile_args;
    std::vector<std::string> sbatch_options; // the #SBATCH lines' options, for the record

    std::int64_t tasks() const { return std::int64_t(targets.size()); }
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the key that is wrong.
    static Manifest from_json(const nlohmann::json& j);
    /// Reads `<folder>/fleet.json`; throws std::runtime_error ("F/fleet.json: cannot open:
    /// ... (was the folder given to `fleet submit`?)").
    static Manifest load(const std::string& folder);
    void save() const;
};

} // namespace switchyard::fleet
