// SPDX-License-Identifier: MIT
#include <switchyard/worker/workercontroller.h>
#include <switchyard/kernels/probes.h>

#include <switchyard/profiling/profiler.h>

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

void emit(int fd, const nlohmann::json& j) {
    write_all(fd, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

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
        return "signal " + std::to_string(sig) + " (" + (abbrev ? "SIG" + std::string(abbrev) : std::string("?")) +
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

Report WorkerController::run(const Callbacks& cb) {
    Report report;
    std::vector<RowSpec> plan;
    bool have_plan = false;
    std::map<std::int64_t, ProfileRow> finished;
    std::int64_t start = 0;
    std::string peaks_json;
    std::int64_t last_failed_start = -1;

    // The worker's environment: ours plus the extras (an extra replaces ours).
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        const auto name = kv.substr(0, kv.find('='));
        bool replaced = false;
        for (const auto& [k, v] : m_options.environment)
            replaced |= k == name;
        if (!replaced)
            env.push_back(std::move(kv));
    }
    for (const auto& [k, v] : m_options.environment)
        env.push_back(k + "=" + v);

    const std::string settings_json = m_options.settings.to_json().dump();
    const double row_timeout = m_options.settings.row_timeout_s;

    while (!m_cancel) {
        std::vector<std::string> argv = {m_options.executable};
        argv.insert(argv.end(), m_options.worker_args.begin(), m_options.worker_args.end());
        argv.insert(argv.end(), {"--settings", settings_json, "--start", std::to_string(start)});
        if (!peaks_json.empty())
            argv.insert(argv.end(), {"--peaks", peaks_json});
        Child child = spawn(argv, env);
        m_pid = child.pid;
        if (m_cancel)
            kill(-child.pid, SIGKILL);

        std::string out_buf, err_buf, err_tail;
        std::int64_t current = -1; // the row in progress
        std::string phase;
        bool done = false, timed_out = false;
        std::string fatal;
        bool fatal_usage = false;
        auto last_event = Clock::now();
        bool out_open = true, err_open = true;

        auto handle_line = [&](const std::string& line) {
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
            if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
                return;
            const auto ev = j["event"].get<std::string>();
            try {
                if (ev == "context") {
                    if (j.contains("context") && j["context"].is_object() && report.context.empty()) {
                        report.context = j["context"];
                        if (cb.on_context)
                            cb.on_context(report.context);
                    }
                    if (j.contains("peaks") && peaks_json.empty())
                        peaks_json = j["peaks"].dump();
                } else if (ev == "plan") {
                    if (!have_plan) {
                        for (const auto& r : j.at("rows"))
                            plan.push_back(RowSpec::from_json(r));
                        have_plan = true;
                        if (cb.on_plan)
                            cb.on_plan(plan);
                    }
                } else if (ev == "row_start") {
                    current = j.at("index").get<std::int64_t>();
                    phase = "start";
                    if (cb.on_row_start && current >= 0 && current < std::int64_t(plan.size()))
                        cb.on_row_start(plan[std::size_t(current)]);
                } else if (ev == "progress") {
                    phase = j.value("phase", std::string());
                    if (cb.on_progress)
                        cb.on_progress(j.value("index", std::int64_t(-1)), phase, j.value("samples", std::int64_t(0)));
                } else if (ev == "row") {
                    auto row = ProfileRow::from_json(j.at("row"));
                    finished[row.spec.index] = row;
                    current = -1;
                    start = row.spec.index + 1;
                    if (cb.on_row)
                        cb.on_row(row);
                } else if (ev == "done") {
                    done = true;
                } else if (ev == "fatal") {
                    fatal = j.value("message", std::string("the worker failed"));
                    fatal_usage = j.value("usage", false);
                }
            } catch (const std::exception& e) {
                if (cb.on_worker_stderr)
                    cb.on_worker_stderr(std::string("(bad worker message) ") + e.what());
            }
        };

        while ((out_open || err_open) && !m_cancel) {
            pollfd fds[2];
            int nfds = 0;
            if (out_open)
                fds[nfds++] = {child.out, POLLIN, 0};
            if (err_open)
                fds[nfds++] = {child.err, POLLIN, 0};
            const double limit = current >= 0 ? row_timeout : std::max(row_timeout, m_options.startup_timeout_s);
            const double waited = std::chrono::duration<double>(Clock::now() - last_event).count();
            const double left = limit - waited;
            if (left <= 0) {
                timed_out = true;
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
                const bool is_out = fds[i].fd == child.out;
                if (n <= 0) {
                    if (n < 0 && errno == EINTR)
                        continue;
                    (is_out ? out_open : err_open) = false;
                    continue;
                }
                if (is_out) {
                    last_event = Clock::now();
                    out_buf.append(buf, std::size_t(n));
                    std::size_t pos;
                    while ((pos = out_buf.find('\n')) != std::string::npos) {
                        handle_line(out_buf.substr(0, pos));
                        out_buf.erase(0, pos + 1);
                    }
                    if (out_buf.size() > (std::size_t(256) << 20))
                        out_buf.clear(); // a runaway line; drop it
                } else {
                    err_buf.append(buf, std::size_t(n));
                    std::size_t pos;
                    while ((pos = err_buf.find('\n')) != std::string::npos) {
                        const auto line = err_buf.substr(0, pos);
                        if (cb.on_worker_stderr)
                            cb.on_worker_stderr(line);
                        err_tail += line + "\n";
                        err_buf.erase(0, pos + 1);
                    }
                    if (err_buf.size() > 4096) {
                        err_tail += err_buf;
                        err_buf.clear();
                    }
                    if (err_tail.size() > 2048)
                        err_tail.erase(0, err_tail.size() - 2048);
                }
            }
        }
        const int status = reap(child.pid, timed_out || m_cancel || out_open);
        m_pid = 0;
        close(child.out);
        close(child.err);
        if (m_cancel)
            break;
        if (!fatal.empty()) {
            if (fatal_usage)
                throw WorkerUsageError(fatal);
            throw WorkerError(fatal);
        }
        if (done)
            break;

        const std::string tail = err_tail.empty() ? std::string() : "; worker stderr: " + err_tail;
        if (!have_plan)
            throw WorkerError("the profiling worker failed before planning (" +
                              (timed_out ? std::string("no output for ") + std::to_string(int(m_options.startup_timeout_s)) + " s"
                                         : describe_wait_status(status)) +
                              ")" + tail);
        std::int64_t victim = current;
        if (victim < 0) {
            // Died between rows: blame the next row only if a fresh worker already failed there.
            if (last_failed_start == start)
                victim = start;
            last_failed_start = start;
        }
        if (victim >= 0 && victim < std::int64_t(plan.size())) {
            ProfileRow row;
            row.spec = plan[std::size_t(victim)];
            row.status = timed_out ? "timed_out" : "crashed";
            if (timed_out) {
                char secs[32];
                std::snprintf(secs, sizeof secs, "%g", row_timeout);
                row.reason = std::string("no progress for ") + secs + " s (phase: " + (phase.empty() ? "start" : phase) +
                             "); the worker was killed";
            } else {
                row.reason = "the worker died with " + describe_wait_status(status) + " (phase: " +
                             (phase.empty() ? "start" : phase) + ")" + tail;
            }
            finished[victim] = row;
            if (cb.on_row)
                cb.on_row(row);
            start = victim + 1;
        }
        if (start >= std::int64_t(plan.size()))
            break;
    }
    for (auto& [i, row] : finished)
        report.rows.push_back(std::move(row));
    if (report.context.is_null())
        report.context = nlohmann::json::object();
    return report;
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
            emit(fd, {{"event", "fatal"}, {"usage", true}, {"message", e.what()}});
            return 2;
        }
        nlohmann::json ctx = {{"event", "context"}};
        if (start == 0)
            ctx["context"] = profiler.context();
        ctx["peaks"] = cpu_peaks().to_json();
        emit(fd, ctx);
        auto plan_json = nlohmann::json::array();
        for (const auto& r : plan)
            plan_json.push_back(r.to_json());
        emit(fd, {{"event", "plan"}, {"rows", plan_json}});
        for (std::int64_t i = std::max<std::int64_t>(0, start); i < std::int64_t(plan.size()); ++i) {
            emit(fd, {{"event", "row_start"}, {"index", i}});
            const auto row = profiler.run_row(plan[std::size_t(i)], [&](const std::string& phase, std::int64_t n) {
                emit(fd, {{"event", "progress"}, {"index", i}, {"phase", phase}, {"samples", n}});
            });
            emit(fd, {{"event", "row"}, {"row", row.to_json()}});
        }
        emit(fd, {{"event", "done"}});
        return 0;
    } catch (const std::exception& e) {
        emit(fd, {{"event", "fatal"}, {"message", std::string("worker: ") + e.what()}});
        return 1;
    }
}

} // namespace switchyard
