// SPDX-License-Identifier: MIT
#pragma once

// One worker process from spawn to reap (the process part of the worker module, shared by
// the profile controller and plugin inspection). No Qt, no blocking call without a deadline.
//
// Every exit path kills the worker's whole process group (the worker and anything it
// started): its own end, a timeout, a cancel, the destructor, the controller's exit
// (atexit, kill_live_workers() from a signal handler) and the controller's death by any
// signal, SIGKILL included: a tiny guardian process in the worker's group waits for a pipe
// only the controller holds and kills the group when it closes. The worker also gets
// PR_SET_PDEATHSIG(SIGKILL) and checks getppid() right after setting it.

#include <sys/types.h>

#include <atomic>
#include <functional>
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

/// How a worker ended.
struct WorkerEnd {
    int status = 0;         // the waitpid status (when reaped)
    bool timed_out = false; // silent past its limit: killed
    bool cancelled = false; // cancel was set: killed
    bool reaped = true;     // false: still not gone 10 s after SIGKILL (status unknown)
};

class WorkerProcess {
public:
    using LineFn = std::function<void(const std::string& line)>;

    /// Starts `argv` with environment `env` (entries "K=V"); `input` is its standard input,
    /// a memory file it reads at its own pace (no size limit, unlike argv's 128 KiB per
    /// string). Throws WorkerError when it cannot start.
    WorkerProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  const std::string& input);
    /// Kills the group and reaps the worker if run() has not.
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    pid_t pid() const noexcept { return m_pid; }

    /// Reads the worker's stdout line by line (on_line) and its stderr (on_err, lines cut at
    /// 4 KiB) until it exits, it stays silent on stdout longer than `limit()` seconds, or
    /// `cancel` is set. Then kills its process group (grandchildren holding the pipes
    /// included) and reaps it. Called once.
    WorkerEnd run(const std::function<double()>& limit, const LineFn& on_line, const LineFn& on_err,
                  const std::atomic<bool>& cancel);

    /// SIGKILL to the worker's group. Async-signal-safe.
    void kill_group() noexcept;

private:
    void finish(WorkerEnd& end) noexcept;

    pid_t m_pid = -1;
    pid_t m_guardian = -1;
    int m_out = -1, m_err = -1, m_guard = -1;
    bool m_finished = false;
};

} // namespace switchyard::detail
