// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
// Talking to Slurm: every command (sbatch, scontrol, squeue, sacct) goes through a
// CommandRunner, so the parsers and the logic are tested with recorded outputs and the CLI
// runs the real programs (SubprocessRunner). The parsers read:
//   squeue --array --noheader --jobs=J --format=%i|%T|%r|%N
//   sacct --jobs=J --allocations --parsable2 --noheader --format=JobID,State,ExitCode,NodeList
//   scontrol --oneliner show job J
// Without accounting storage (accounting_storage/none) sacct fails; the states of finished
// tasks then come from scontrol (which keeps them MinJobAge, 300 s by default) and, after
// that, only the reports and logs on disk say what happened.

#include <switchyard/fleet/fleet.h>
#include <switchyard/sdk/errors.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::fleet {

struct SWITCHYARD_CORE_EXPORT CommandResult {
    bool started = false; // false: the program could not be run (error says why)
    int exit_code = -1;   // the exit status, or 128 + the signal
    std::string out, err, error;
};

class SWITCHYARD_CORE_EXPORT CommandRunner {
public:
    virtual ~CommandRunner() = default;
    /// Runs argv[0] (searched in PATH) with the process's environment.
    virtual CommandResult run(const std::vector<std::string>& argv) = 0;
};

/// fork + exec, both pipes read with poll, killed after `timeout_s`.
class SWITCHYARD_CORE_EXPORT SubprocessRunner : public CommandRunner {
public:
    explicit SubprocessRunner(double timeout_s = 120) : m_timeout_s(timeout_s) {}
    CommandResult run(const std::vector<std::string>& argv) override;

private:
    double m_timeout_s;
};

/// A Slurm command that failed: what() names the command and its message.
class SWITCHYARD_CORE_EXPORT SlurmError : public Error {
public:
    using Error::Error;
};

/// One array task as Slurm reports it.
struct SWITCHYARD_CORE_EXPORT TaskState {
    std::int64_t index = -1;
    std::string state;     // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    std::string reason;    // squeue/scontrol: why it is pending (JobArrayTaskLimit, ...)
    std::string exit_code; // "0:0" (status:signal) where known
    std::string node;
    std::string source; // "squeue", "sacct", "scontrol"; empty: no longer known to Slurm

    bool known() const { return !source.empty(); }
    /// Slurm will not run it again: COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, ...
    bool terminal() const;
    nlohmann::json to_json() const;
};

/// "123_4" -> {4}; "123_[2-3%1]" -> {2, 3}; "123_[0,4-5]" -> {0, 4, 5}; a record of another
/// job, a step ("123_4.batch") or a bare "123" -> {}. Throws std::invalid_argument on a
/// malformed range.
SWITCHYARD_CORE_EXPORT std::vector<std::int64_t> array_indices(std::string_view job_id_field,
                                                               std::string_view job_id);

/// Records by task index. Lines of other jobs and steps are skipped; a malformed line
/// throws SlurmError naming it.
SWITCHYARD_CORE_EXPORT std::map<std::int64_t, TaskState> parse_squeue(std::string_view out,
                                                                      std::string_view job_id);
SWITCHYARD_CORE_EXPORT std::map<std::int64_t, TaskState> parse_sacct(std::string_view out,
                                                                     std::string_view job_id);
SWITCHYARD_CORE_EXPORT std::map<std::int64_t, TaskState> parse_scontrol(std::string_view out,
                                                                        std::string_view job_id);

/// What Slurm says about a fleet's tasks.
struct SWITCHYARD_CORE_EXPORT FleetStatus {
    std::string job_id;
    std::vector<TaskState> tasks; // one per target, in index order
    bool accounting = false;      // sacct answered
    std::vector<std::string> notes;

    /// No task is pending or running (throttled ones included).
    bool finished() const;
    /// "2 COMPLETED, 1 PENDING".
    std::string summary() const;
    nlohmann::json to_json() const;
};

/// squeue for the live tasks, then sacct, else scontrol, for the others. Throws
/// SlurmError when squeue itself cannot answer (no controller, squeue not installed).
SWITCHYARD_CORE_EXPORT FleetStatus query_status(const Manifest& manifest, CommandRunner& runner);

/// Writes the batch script, submits it (held when tasks are pinned), pins each task with
/// `scontrol update`, releases the array and writes fleet.json. A failed pin cancels the
/// job before anything runs. Throws SlurmError (the command and its message) or
/// std::runtime_error (the folder).
SWITCHYARD_CORE_EXPORT Manifest submit(const Plan& plan, CommandRunner& runner);

/// "sbatch --parsable" output ("123" or "123;cluster") -> "123"; throws SlurmError.
SWITCHYARD_CORE_EXPORT std::string parse_sbatch_job_id(std::string_view out);

} // namespace switchyard::fleet
