// SPDX-License-Identifier: MIT
#pragma once

// One worker process from spawn to reap (the process part of the worker module, shared by
// the profile controller and plugin inspection). No Qt, no blocking call without a deadline.
//
// The controller starts a keeper, which starts the worker and reaps. The keeper is PID 1 of
// a PID namespace of its own (Containment::PidNamespace: when it ends, the kernel ends
// every process in the namespace) or a child subreaper (Containment::Subreaper: orphans of
// the worker's descendants come back to it, and it kills every descendant it finds in
// /proc until none is left). Either way no descendant of the worker outlives it, not one
// that called setsid() (out of the process group) nor one that double-forked (out of the
// worker's children). The keeper ends all of them and then itself when the worker ends,
// when the controller says stop (a timeout, a cancel, the destructor, the controller's
// exit: atexit, kill_live_workers() from a signal handler) and when the controller dies by
// any signal, SIGKILL included: it watches a socket only the controller holds the other end
// of, and has PR_SET_PDEATHSIG. It then sends the worker's wait status back on that socket,
// so a crash reads as the worker's signal (SIGABRT), not the keeper's. The worker itself
// is an ordinary process (PID 2 in the namespace: signals act on it as anywhere), its own
// stdio the pipes, fds above 2 closed.

#include <sys/types.h>

#include <switchyard/worker/workercontroller.h>

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard::detail {

/// Writes all of `s` to `fd` (retrying on EINTR); false on any other error (errno says
/// which).
bool write_fully(int fd, std::string_view s);
/// One protocol message as one line on `fd`; a controller that went away is ignored.
void emit_line(int fd, const nlohmann::json& message);

/// The worker's environment: ours plus `extra` (an extra replaces ours), as "K=V" entries.
std::vector<std::string>
worker_environment(const std::vector<std::pair<std::string, std::string>>& extra);

/// The descriptor number a worker finds WorkerProcess's `shared_fd` at.
constexpr int kWorkerSharedFd = 3;

/// How a worker ended.
struct WorkerEnd {
    int status = 0;         // the waitpid status (when reaped)
    bool timed_out = false; // silent past its limit: killed
    bool cancelled = false; // cancel was set: killed
    bool reaped = true;     // false: still not gone 10 s after SIGKILL (status unknown)
    bool paused = false; // run()'s `pause` said so: the worker lives on, run() may be called again
};

class WorkerProcess {
public:
    using LineFn = std::function<void(const std::string& line)>;

    /// Starts `argv` with environment `env` (entries "K=V"); `input` is its standard input,
    /// a memory file it reads at its own pace (no size limit, unlike argv's 128 KiB per
    /// string). The containment is SWITCHYARD_CONTAINMENT's (see Containment): `auto` takes
    /// a PID namespace where one can be made without a user namespace (root, CAP_SYS_ADMIN),
    /// else a subreaper. Throws WorkerError when it cannot start, when the variable names no
    /// containment, or when `pid-namespace` was asked for and none can be made.
    /// `interactive`: the standard input is a socket instead, `input` its first bytes, and
    /// send() writes more until close_input() (a worker that takes commands as it goes).
    /// `shared_fd` (>= 0): a descriptor of ours the worker gets as its kWorkerSharedFd (the
    /// memory file an A/B run's two workers place their CPU buffers in); the caller keeps its
    /// own.
    WorkerProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  const std::string& input, bool interactive = false, int shared_fd = -1);
    /// Kills the group and reaps the worker if run() has not.
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    /// The keeper's process id (the worker's is its own, in its namespace).
    pid_t pid() const noexcept { return m_pid; }
    Containment containment() const noexcept { return m_containment; }

    /// Reads the worker's stdout line by line (on_line) and its stderr (on_err, lines cut at
    /// 4 KiB) until it exits, it stays silent on stdout longer than `limit()` seconds (counted
    /// from this call at the longest), or `cancel` is set. Then ends it and everything it
    /// started (grandchildren holding the pipes included) and reaps the keeper. Called once,
    /// unless `pause` (asked after each read) returns true: then it returns at once with
    /// WorkerEnd::paused, the worker left running, and may be called again.
    WorkerEnd run(const std::function<double()>& limit, const LineFn& on_line, const LineFn& on_err,
                  const std::atomic<bool>& cancel, const std::function<bool()>& pause = {});
    /// An interactive worker's input: writes `text` to it; false when it cannot take it (it
    /// ended, or the input is not interactive or closed).
    bool send(std::string_view text) noexcept;
    /// Ends an interactive worker's input (it reads end of file).
    void close_input() noexcept;

    /// Tells the keeper `keeper` to end its worker and every descendant, then itself.
    /// Async-signal-safe.
    static void stop(pid_t keeper) noexcept;

private:
    void finish(WorkerEnd& end) noexcept;

    struct Reading; // what run() has read of each pipe, kept between paused calls

    pid_t m_pid = -1; // the keeper
    Containment m_containment = Containment::Subreaper;
    int m_out = -1, m_err = -1, m_link = -1, m_in = -1;
    bool m_finished = false;
    std::unique_ptr<Reading> m_reading;
};

} // namespace switchyard::detail
