// SPDX-License-Identifier: MIT
#include <switchyard/worker/workercontroller.h>

#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/worker/protocol.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

extern char** environ;

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

void write_all(int fd, const std::string& s) {
    const char* p = s.data();
    std::size_t left = s.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; // the controller went away; nothing to do
        }
        p += n;
        left -= std::size_t(n);
    }
}

void emit(int fd, const nlohmann::json& message) {
    write_all(fd, protocol::to_line(message));
}

// --- process: spawn, pipes, poll, kill ---

struct Child {
    pid_t pid = -1;
    int out = -1; // protocol (worker stdout)
    int err = -1; // worker stderr
};

Child spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0)
        throw WorkerError(std::string("cannot create a pipe: ") + std::strerror(errno));
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        close(out_pipe[0]);
        close(out_pipe[1]);
        throw WorkerError(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    // Everything the child needs is prepared before fork(): after it only
    // async-signal-safe calls (the caller may be a multi-threaded GUI).
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env)
        cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
            close(fd);
        throw WorkerError(std::string("cannot fork a worker: ") + std::strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0); // its own group: a timeout kills whatever it started too
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); // a crashing kernel should not dump core
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        execve(cargv[0], cargv.data(), cenv.data());
        const char msg[] = "switchyard worker: exec failed\n";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    setpgid(pid, pid); // also from the parent, so kill(-pid) works at once
    return {pid, out_pipe[0], err_pipe[0]};
}

int reap(pid_t pid, bool kill_first) {
    if (kill_first)
        kill(-pid, SIGKILL), kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

} // namespace

std::string describe_wait_status(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* abbrev = sigabbrev_np(sig);
        const char* text = strsignal(sig);
        return "signal " + std::to_string(sig) + " (" +
               (abbrev ? "SIG" + std::string(abbrev) : std::string("?")) +
               (text ? ": " + std::string(text) : std::string()) + ")";
    }
    if (WIFEXITED(status))
        return "exit code " + std::to_string(WEXITSTATUS(status));
    return "status " + std::to_string(status);
}

WorkerController::WorkerController(Options options) : m_options(std::move(options)) {}

void WorkerController::cancel() noexcept {
    m_cancel = true;
    const int pid = m_pid.load();
    if (pid > 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
}

// --- bookkeeping: the plan, the rows, where the next worker starts ---

struct WorkerController::RunState {
    Report report;
    std::vector<RowSpec> plan;
    bool have_plan = false;
    std::map<std::int64_t, ProfileRow> finished;
    std::int64_t start = 0;
    std::string peaks_json;
    std::int64_t last_failed_start = -1;
};

// What one worker process did before it ended.
struct WorkerController::Attempt {
    std::int64_t current = -1; // the row in progress
    std::string phase;
    bool done = false, timed_out = false;
    std::string fatal;
    bool fatal_usage = false;
    std::string err_tail; // the last ~2 KiB of its stderr
    int status = 0;
};

namespace {

// --- protocol: line framing ---

// Splits a byte stream into lines; a line longer than `limit` is dropped.
class LineBuffer {
public:
    explicit LineBuffer(std::size_t limit) : m_limit(limit) {}
    template <class OnLine> void feed(const char* data, std::size_t n, OnLine on_line) {
        m_buf.append(data, n);
        std::size_t pos;
        while ((pos = m_buf.find('\n')) != std::string::npos) {
            on_line(m_buf.substr(0, pos));
            m_buf.erase(0, pos + 1);
        }
    }
    bool over_limit() const noexcept { return m_buf.size() > m_limit; }
    std::string take() { return std::exchange(m_buf, std::string()); }

private:
    std::string m_buf;
    std::size_t m_limit;
};

// The worker's environment: ours plus the extras (an extra replaces ours).
std::vector<std::string>
worker_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        const auto name = kv.substr(0, kv.find('='));
        bool replaced = false;
        for (const auto& [k, v] : extra)
            replaced |= k == name;
        if (!replaced)
            env.push_back(std::move(kv));
    }
    for (const auto& [k, v] : extra)
        env.push_back(k + "=" + v);
    return env;
}

std::string phase_or_start(const std::string& phase) {
    return phase.empty() ? "start" : phase;
}

} // namespace

void WorkerController::apply(const protocol::Message& m, RunState& state, Attempt& attempt,
                             const Callbacks& cb) {
    using protocol::Event;
    switch (m.event) {
    case Event::Context:
        if (m.context.is_object() && state.report.context.empty()) {
            state.report.context = m.context;
            if (cb.on_context)
                cb.on_context(state.report.context);
        }
        if (!m.peaks.is_null() && state.peaks_json.empty())
            state.peaks_json = m.peaks.dump();
        break;
    case Event::Plan:
        if (!state.have_plan) {
            state.plan = m.plan;
            state.have_plan = true;
            if (cb.on_plan)
                cb.on_plan(state.plan);
        }
        break;
    case Event::RowStart:
        attempt.current = m.index;
        attempt.phase = "start";
        if (cb.on_row_start && m.index < std::int64_t(state.plan.size()))
            cb.on_row_start(state.plan[std::size_t(m.index)]);
        break;
    case Event::Progress:
        attempt.phase = m.phase;
        if (cb.on_progress)
            cb.on_progress(m.index, m.phase, m.samples);
        break;
    case Event::Row:
        state.finished[m.row.spec.index] = m.row;
        attempt.current = -1;
        state.start = m.row.spec.index + 1;
        if (cb.on_row)
            cb.on_row(m.row);
        break;
    case Event::Done:
        attempt.done = true;
        break;
    case Event::Fatal:
        attempt.fatal = m.message;
        attempt.fatal_usage = m.usage;
        break;
    }
}

void WorkerController::handle_line(const std::string& line, RunState& state, Attempt& attempt,
                                   const Callbacks& cb) {
    if (line.empty())
        return;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (...) {
        if (cb.on_worker_stderr)
            cb.on_worker_stderr("(unparsable worker output) " + line.substr(0, 200));
        return;
    }
    try {
        if (const auto m = protocol::parse(j))
            apply(*m, state, attempt, cb);
    } catch (const std::exception& e) {
        if (cb.on_worker_stderr)
            cb.on_worker_stderr(std::string("(bad worker message) ") + e.what());
    }
}

std::vector<std::string> WorkerController::worker_argv(const RunState& state,
                                                       const std::string& settings_json) const {
    std::vector<std::string> argv = {m_options.executable};
    argv.insert(argv.end(), m_options.worker_args.begin(), m_options.worker_args.end());
    argv.insert(argv.end(), {"--settings", settings_json, "--start", std::to_string(state.start)});
    if (!state.peaks_json.empty())
        argv.insert(argv.end(), {"--peaks", state.peaks_json});
    return argv;
}

// Reads the worker's stdout (the protocol) and stderr until both close, the worker is
// silent for too long (attempt.timed_out) or the run is cancelled. Returns whether the
// protocol pipe is still open.
bool WorkerController::pump(int out_fd, int err_fd, RunState& state, Attempt& attempt,
                            const Callbacks& cb) {
    const double row_timeout = m_options.settings.row_timeout_s;
    LineBuffer out(std::size_t(256) << 20), err(4096);
    auto last_event = Clock::now();
    bool out_open = true, err_open = true;
    while ((out_open || err_open) && !m_cancel) {
        pollfd fds[2];
        int nfds = 0;
        if (out_open)
            fds[nfds++] = {out_fd, POLLIN, 0};
        if (err_open)
            fds[nfds++] = {err_fd, POLLIN, 0};
        const double limit =
            attempt.current >= 0 ? row_timeout : std::max(row_timeout, m_options.startup_timeout_s);
        const double left =
            limit - std::chrono::duration<double>(Clock::now() - last_event).count();
        if (left <= 0) {
            attempt.timed_out = true;
            break;
        }
        const int r = poll(fds, nfds_t(nfds), int(std::min(left, 0.25) * 1000) + 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < nfds; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[65536];
            const ssize_t n = read(fds[i].fd, buf, sizeof buf);
            const bool is_out = fds[i].fd == out_fd;
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                (is_out ? out_open : err_open) = false;
                continue;
            }
            if (is_out) {
                last_event = Clock::now();
                out.feed(buf, std::size_t(n),
                         [&](const std::string& line) { handle_line(line, state, attempt, cb); });
                if (out.over_limit())
                    out.take(); // a runaway line; drop it
            } else {
                err.feed(buf, std::size_t(n), [&](const std::string& line) {
                    if (cb.on_worker_stderr)
                        cb.on_worker_stderr(line);
                    attempt.err_tail += line + "\n";
                });
                if (err.over_limit())
                    attempt.err_tail += err.take();
                if (attempt.err_tail.size() > 2048)
                    attempt.err_tail.erase(0, attempt.err_tail.size() - 2048);
            }
        }
    }
    return out_open;
}

WorkerController::Attempt WorkerController::run_one_worker(RunState& state,
                                                           const std::vector<std::string>& env,
                                                           const std::string& settings_json,
                                                           const Callbacks& cb) {
    Child child = spawn(worker_argv(state, settings_json), env);
    m_pid = child.pid;
    if (m_cancel)
        kill(-child.pid, SIGKILL);
    Attempt attempt;
    const bool out_open = pump(child.out, child.err, state, attempt, cb);
    attempt.status = reap(child.pid, attempt.timed_out || m_cancel || out_open);
    m_pid = 0;
    close(child.out);
    close(child.err);
    return attempt;
}

// The row a worker that died or hung takes with it: crashed or timed_out.
ProfileRow WorkerController::failed_row(const RowSpec& spec, const Attempt& attempt) const {
    ProfileRow row;
    row.spec = spec;
    row.status = attempt.timed_out ? RowStatus::TimedOut : RowStatus::Crashed;
    if (attempt.timed_out) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", m_options.settings.row_timeout_s);
        row.reason = std::string("no progress for ") + secs +
                     " s (phase: " + phase_or_start(attempt.phase) + "); the worker was killed";
    } else {
        const std::string tail =
            attempt.err_tail.empty() ? std::string() : "; worker stderr: " + attempt.err_tail;
        row.reason = "the worker died with " + describe_wait_status(attempt.status) +
                     " (phase: " + phase_or_start(attempt.phase) + ")" + tail;
    }
    return row;
}

// After a worker ended without "done": blame its row, move on. False when no row is left.
bool WorkerController::recover(RunState& state, const Attempt& attempt, const Callbacks& cb) const {
    if (!state.have_plan) {
        const std::string tail =
            attempt.err_tail.empty() ? std::string() : "; worker stderr: " + attempt.err_tail;
        throw WorkerError("the profiling worker failed before planning (" +
                          (attempt.timed_out
                               ? std::string("no output for ") +
                                     std::to_string(int(m_options.startup_timeout_s)) + " s"
                               : describe_wait_status(attempt.status)) +
                          ")" + tail);
    }
    std::int64_t victim = attempt.current;
    if (victim < 0) {
        // Died between rows: blame the next row only if a fresh worker already failed there.
        if (state.last_failed_start == state.start)
            victim = state.start;
        state.last_failed_start = state.start;
    }
    if (victim >= 0 && victim < std::int64_t(state.plan.size())) {
        const auto row = failed_row(state.plan[std::size_t(victim)], attempt);
        state.finished[victim] = row;
        if (cb.on_row)
            cb.on_row(row);
        state.start = victim + 1;
    }
    return state.start < std::int64_t(state.plan.size());
}

Report WorkerController::run(const Callbacks& cb) {
    RunState state;
    const auto env = worker_environment(m_options.environment);
    const std::string settings_json = m_options.settings.to_json().dump();
    while (!m_cancel) {
        const Attempt attempt = run_one_worker(state, env, settings_json, cb);
        if (m_cancel)
            break;
        if (!attempt.fatal.empty()) {
            if (attempt.fatal_usage)
                throw WorkerUsageError(attempt.fatal);
            throw WorkerError(attempt.fatal);
        }
        if (attempt.done || !recover(state, attempt, cb))
            break;
    }
    for (auto& [i, row] : state.finished)
        state.report.rows.push_back(std::move(row));
    if (state.report.context.is_null())
        state.report.context = nlohmann::json::object();
    return std::move(state.report);
}

int run_profile_worker(const ProfileSettings& settings, std::int64_t start, const CpuPeaks* peaks,
                       int fd, BackendRegistry& backends, DeviceRegistry& devices) {
    try {
        if (peaks)
            set_cpu_peaks(*peaks);
        Profiler profiler(settings, backends, devices);
        std::vector<RowSpec> plan;
        try {
            plan = profiler.plan();
        } catch (const std::invalid_argument& e) {
            emit(fd, protocol::fatal_message(e.what(), true));
            return 2;
        }
        emit(fd, protocol::context_message(start == 0 ? profiler.context() : nlohmann::json(),
                                           cpu_peaks().to_json()));
        emit(fd, protocol::plan_message(plan));
        for (std::int64_t i = std::max<std::int64_t>(0, start); i < std::int64_t(plan.size());
             ++i) {
            emit(fd, protocol::row_start_message(i));
            const auto row = profiler.run_row(plan[std::size_t(i)],
                                              [&](const std::string& phase, std::int64_t n) {
                                                  emit(fd, protocol::progress_message(i, phase, n));
                                              });
            emit(fd, protocol::row_message(row));
        }
        emit(fd, protocol::done_message());
        return 0;
    } catch (const std::exception& e) {
        emit(fd, protocol::fatal_message(std::string("worker: ") + e.what()));
        return 1;
    }
}

} // namespace switchyard
