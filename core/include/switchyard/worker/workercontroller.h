// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/hardware/hardware.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/report/report.h>
#include <switchyard/sdk/errors.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

class BackendRegistry;
class DeviceRegistry;
namespace protocol {
struct Message;
struct ProfileRequest;
} // namespace protocol

/// The run could not go on: no worker starts, or it fails before planning. A usage
/// problem in the settings (unknown op, bad size) is a WorkerUsageError.
class SWITCHYARD_CORE_EXPORT WorkerError : public Error {
public:
    using Error::Error;
};
class SWITCHYARD_CORE_EXPORT WorkerUsageError : public WorkerError {
public:
    using WorkerError::WorkerError;
};

/// Runs a profile in worker processes (fork/exec + pipes + poll; no Qt), so the caller
/// survives whatever a kernel does. A worker that dies in a row (a signal, an exit) marks
/// that row `crashed`; one that reports no progress for `row_timeout_s` is killed and the
/// row marked `timed_out`. Either way the run goes on with the next row in a fresh worker.
/// The controller keeps every deadline itself (no blocking wait): a worker that closed its
/// pipes and hangs is still timed out, and one that ended while a process it started holds
/// the pipes ends the attempt at once. Each worker runs under a keeper (a PID namespace's
/// init, or a child subreaper; see Containment) that ends it and every process it started
/// on every exit path (its end, timeout, cancel, the controller's exit or death; see
/// kill_live_workers()), so no process of a run outlives it, not even one that called
/// setsid() or double-forked. The report's context says which containment ran.
///
/// The worker is `executable worker_args...`; its standard input holds
/// `{"settings": ProfileSettings, "start": N, "peaks": {...}?}` (no argv size limit), and it
/// calls run_profile_worker(), writing the protocol (protocol.h) on its stdout, one JSON
/// object per line.
/// Thread-safe to cancel() from another thread; everything else is single-threaded.
class SWITCHYARD_CORE_EXPORT WorkerController {
public:
    struct Options {
        std::string executable; // switchyard-cli ("/proc/self/exe" from the CLI)
        std::vector<std::string> worker_args = {"__worker", "profile"}; // the hidden subcommand
        ProfileSettings settings;
        std::vector<std::pair<std::string, std::string>> environment; // added to the worker's
        double startup_timeout_s = 60; // silence allowed outside rows (probes, planning)
        /// Set: every worker takes these CPU ceilings instead of probing (a run that reuses
        /// an earlier report's, see reusable_cpu_peaks()); `ceiling_set` says where they
        /// came from (reported_ceiling_choice()), the cache is not asked.
        std::optional<CpuPeaks> cpu_peaks;
        nlohmann::json ceiling_set;
        /// Where measured CPU ceilings are kept between runs (runtime's
        /// default_ceiling_cache()): without cpu_peaks, a run uses the set kept there when
        /// it holds by `ceiling_policy`, else measures and keeps what it measured. Unset:
        /// every run measures. The report's context.ceiling_set says which set judged it.
        std::optional<CeilingCache> ceiling_cache;
        CeilingCachePolicy ceiling_policy;
    };
    struct Callbacks {
        std::function<void(const RunContext& context)> on_context;
        std::function<void(const std::vector<RowSpec>& plan)> on_plan;
        std::function<void(const RowSpec& row)> on_row_start;
        std::function<void(std::int64_t index, const std::string& phase, std::int64_t samples)>
            on_progress;
        std::function<void(const ProfileRow& row)> on_row; // every finished row, crashed ones too
        std::function<void(const std::string& line)> on_worker_stderr;
    };

    explicit WorkerController(Options options);

    /// Runs every row (settings.repeat times over, pass after pass, each row's runs merged:
    /// merge_runs()); returns the report (rows in plan order). Throws WorkerUsageError
    /// for bad settings, WorkerError when no worker can run at all.
    Report run(const Callbacks& callbacks = {});
    /// Stops the run: kills the worker; run() returns the rows finished so far.
    void cancel() noexcept;
    bool cancelled() const noexcept { return m_cancel.load(); }

private:
    struct RunState;
    struct Attempt;
    // process: one worker from spawn to reap; its pipes read until it ends or hangs
    Report run_pass(RunState& state, const std::vector<std::string>& env, const Callbacks& cb);
    Attempt run_one_worker(RunState& state, const std::vector<std::string>& env,
                           const Callbacks& cb);
    std::string worker_input(const RunState& state) const;
    double startup_silence_s() const;
    // protocol: one line, one message
    void handle_line(const std::string& line, RunState& state, Attempt& attempt,
                     const Callbacks& cb);
    void apply(const protocol::Message& m, RunState& state, Attempt& attempt, const Callbacks& cb);
    // the run's CPU ceilings: kept in the cache when measured, recorded in the context
    void record_ceilings(RunContext& context, const CpuPeaks* peaks);
    // bookkeeping: the row a dead worker takes with it, where the next one starts
    ProfileRow failed_row(const RowSpec& spec, const Attempt& attempt) const;
    bool recover(RunState& state, const Attempt& attempt, const Callbacks& cb) const;
    void add_run(RunState& state, std::int64_t pass, ProfileRow row, const Callbacks& cb) const;

    Options m_options;
    CeilingSetChoice m_ceilings; // this run's (run() chooses; the first context records it)
    std::atomic<bool> m_cancel{false};
    std::atomic<int> m_pid{0};
};

/// The CPU ceilings an earlier report measured (its `context.cpu_peaks`), for a run that
/// reuses them instead of probing again (`profile --ceilings-from`). Throws ReportError,
/// naming `origin`, when the report has none, or when they were measured on another
/// machine: another host name, CPU brand or number of logical CPUs than this process sees.
SWITCHYARD_CORE_EXPORT CpuPeaks reusable_cpu_peaks(const Report& earlier,
                                                   const std::string& origin);

/// The worker side: plans, then runs rows from `request.start` on, writing the protocol to
/// `fd`. `request.peaks` (when set) are given to `devices`' CPU device instead of probing, so
/// every worker of a run shares them; the other devices keep their figures in
/// `request.ceiling_cache` (when set). Rows in `request.skip` are not run (no messages).
/// Returns the process exit code (0 done, 2 bad settings).
SWITCHYARD_CORE_EXPORT int run_profile_worker(const protocol::ProfileRequest& request, int fd,
                                              BackendRegistry& backends, DeviceRegistry& devices);

/// Ends every worker this process has running (profile and inspection workers) and
/// everything they started: each worker's keeper is told to kill them all. Async-signal-safe:
/// for SIGINT/SIGTERM handlers; also registered with atexit() when the first worker starts.
SWITCHYARD_CORE_EXPORT void kill_live_workers() noexcept;

/// How a worker's descendants are kept from outliving it, chosen by
/// SWITCHYARD_CONTAINMENT (`auto`, the default, `pid-namespace` or `subreaper`).
/// PidNamespace: the worker's keeper is PID 1 of a PID namespace of its own, so the kernel
/// ends every process in it when the keeper ends. Subreaper: the keeper is a child
/// subreaper (PR_SET_CHILD_SUBREAPER) that kills and reaps every descendant itself.
enum class Containment { PidNamespace, Subreaper };
/// "pid-namespace" / "subreaper": the report context's `containment`.
SWITCHYARD_CORE_EXPORT const char* containment_name(Containment c) noexcept;

/// "signal 11 (SIGSEGV: Segmentation fault)" / "exit code 3": how a waitpid status reads.
SWITCHYARD_CORE_EXPORT std::string describe_wait_status(int status);

} // namespace switchyard
