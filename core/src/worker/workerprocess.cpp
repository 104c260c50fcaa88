// SPDX-License-Identifier: MIT
#include "worker/workerprocess.h"

#include "util/sanitizer.h"

#include <switchyard/worker/protocol.h>
#include <switchyard/worker/workercontroller.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

extern char** environ;

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

// The process groups of the workers alive in this process, for kill_live_workers() (a
// signal handler, atexit). Lock-free slots: a handler may run at any moment.
constexpr int kSlots = 64;
std::atomic<pid_t> g_live[kSlots];

void add_live(pid_t pid) noexcept {
    for (auto& slot : g_live) {
        pid_t empty = 0;
        if (slot.compare_exchange_strong(empty, pid))
            return;
    }
}

void remove_live(pid_t pid) noexcept {
    for (auto& slot : g_live) {
        pid_t expected = pid;
        if (slot.compare_exchange_strong(expected, 0))
            return;
    }
}

void install_atexit_once() {
    static std::once_flag once;
    std::call_once(once, [] { std::atexit([] { kill_live_workers(); }); });
}

void write_all(int fd, const std::string& s) {
    if (!detail::write_fully(fd, s))
        throw WorkerError(std::string("cannot write the worker's input: ") + std::strerror(errno));
}

void close_fd(int& fd) noexcept {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// Waits for `pid` to end, at most `seconds`; false when it did not (or is not our child).
bool reap_within(pid_t pid, int& status, double seconds) noexcept {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
        if (Clock::now() >= deadline)
            return false;
        const timespec pause = {0, 2'000'000};
        nanosleep(&pause, nullptr);
    }
}

// Splits a byte stream into lines; a line longer than `limit` is cut and passed on.
class LineBuffer {
public:
    explicit LineBuffer(std::size_t limit) : m_limit(limit) {}
    void feed(const char* data, std::size_t n, const detail::WorkerProcess::LineFn& on_line) {
        m_buf.append(data, n);
        std::size_t start = 0, pos;
        while ((pos = m_buf.find('\n', start)) != std::string::npos) {
            if (on_line)
                on_line(m_buf.substr(start, pos - start));
            start = pos + 1;
        }
        m_buf.erase(0, start);
        if (m_buf.size() > m_limit)
            m_buf.clear(); // a runaway line: dropped
    }
    std::string take() { return std::exchange(m_buf, std::string()); }

private:
    std::string m_buf;
    std::size_t m_limit;
};

} // namespace

void kill_live_workers() noexcept {
    for (auto& slot : g_live) {
        const pid_t pid = slot.load();
        if (pid > 0)
            ::kill(-pid, SIGKILL);
    }
}

namespace detail {

bool write_fully(int fd, std::string_view s) {
    const char* p = s.data();
    std::size_t left = s.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        left -= std::size_t(n);
    }
    return true;
}

void emit_line(int fd, const nlohmann::json& message) {
    (void)write_fully(fd, protocol::to_line(message)); // the controller went away: nothing to do
}

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
#ifdef SWITCHYARD_SANITIZER_OPTIONS
    // Under a sanitizer a fault in plugin code must still end the worker with its signal (a
    // crashed row says SIGSEGV, a crashed load SIGBUS), not the sanitizer's exit code (1 for
    // ASan, 66 for TSan). These flags are common to both runtimes.
    const std::string var = SWITCHYARD_SANITIZER_OPTIONS "=";
    const std::string keep_signals =
        "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0";
    auto it = std::find_if(env.begin(), env.end(),
                           [&](const std::string& e) { return e.rfind(var, 0) == 0; });
    if (it == env.end())
        env.push_back(var + keep_signals);
    else
        *it += ":" + keep_signals;
#endif
    return env;
}

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, const std::string& input) {
    install_atexit_once();
    int in = memfd_create("switchyard-worker-input", MFD_CLOEXEC);
    if (in < 0)
        throw WorkerError(std::string("cannot create the worker's input: ") + std::strerror(errno));
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    try {
        write_all(in, input);
        if (lseek(in, 0, SEEK_SET) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
            pipe2(err_pipe, O_CLOEXEC) != 0)
            throw WorkerError(std::string("cannot create a pipe: ") + std::strerror(errno));
    } catch (...) {
        for (int fd : {in, out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
            if (fd >= 0)
                ::close(fd);
        throw;
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
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {in, out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
            ::close(fd);
        throw WorkerError(std::string("cannot fork a worker: ") + std::strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0); // its own group: every exit path kills whatever it started too
        // Dies with the controller; the check closes the race with a controller that died
        // before prctl() ran.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); // a crashing kernel should not dump core
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        dup2(in, STDIN_FILENO);
        execve(cargv[0], cargv.data(), cenv.data());
        const char msg[] = "switchyard worker: exec failed\n";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        _exit(127);
    }
    setpgid(pid, pid); // also from the parent, so kill(-pid) works at once
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(in);
    m_pid = pid;
    m_out = out_pipe[0];
    m_err = err_pipe[0];
    fcntl(m_out, F_SETFL, O_NONBLOCK);
    fcntl(m_err, F_SETFL, O_NONBLOCK);
    add_live(pid);

    // The guardian: kills the worker's group when the controller is gone, however it went
    // (the read end sees EOF once every copy of the write end, all in this process, closed).
    int guard[2];
    if (pipe2(guard, O_CLOEXEC) == 0) {
        const pid_t g = fork();
        if (g == 0) {
            setpgid(0, pid); // in the worker's group: a Ctrl-C to ours does not reach it
            struct sigaction dfl = {};
            dfl.sa_handler = SIG_DFL;
            for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
                sigaction(sig, &dfl, nullptr);
            if (guard[0] != 3)
                dup2(guard[0], 3);
            close_range(4, ~0U, 0);
            const int devnull = open("/dev/null", O_RDWR);
            for (int fd = 0; fd < 3 && devnull >= 0; ++fd)
                dup2(devnull, fd);
            char c;
            while (read(3, &c, 1) != 0 && errno == EINTR) {
            }
            kill(-pid, SIGKILL);
            _exit(0);
        }
        ::close(guard[0]);
        if (g > 0) {
            setpgid(g, pid);
            m_guardian = g;
            m_guard = guard[1];
        } else {
            ::close(guard[1]); // no guardian: PDEATHSIG still covers the worker itself
        }
    }
}

WorkerProcess::~WorkerProcess() {
    if (!m_finished) {
        WorkerEnd end;
        finish(end);
    }
}

void WorkerProcess::kill_group() noexcept {
    if (m_pid > 0) {
        ::kill(-m_pid, SIGKILL);
        ::kill(m_pid, SIGKILL);
    }
}

void WorkerProcess::finish(WorkerEnd& end) noexcept {
    m_finished = true;
    // The worker is not reaped yet (a zombie at worst), so its group id cannot be reused.
    kill_group();
    int status = 0;
    if (m_guardian > 0) {
        ::kill(m_guardian, SIGKILL);
        reap_within(m_guardian, status, 10);
    }
    end.reaped = reap_within(m_pid, end.status, 10);
    remove_live(m_pid);
    close_fd(m_guard);
    close_fd(m_out);
    close_fd(m_err);
}

WorkerEnd WorkerProcess::run(const std::function<double()>& limit, const LineFn& on_line,
                             const LineFn& on_err, const std::atomic<bool>& cancel) {
    WorkerEnd end;
    LineBuffer out(std::size_t(256) << 20), err(4096);
    bool out_open = true, err_open = true;
    auto last_event = Clock::now();
    // Reads what `fd` has now: 1 data, 0 closed, -1 nothing yet.
    auto read_some = [&](int fd) {
        char buf[65536];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? -1 : 0;
        if (n == 0)
            return 0;
        if (fd == m_out) {
            last_event = Clock::now();
            out.feed(buf, std::size_t(n), on_line);
        } else {
            err.feed(buf, std::size_t(n), on_err);
        }
        return 1;
    };
    for (;;) {
        if (cancel) {
            end.cancelled = true;
            break;
        }
        siginfo_t info = {};
        if (waitid(P_PID, id_t(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == m_pid) {
            // It ended: what it wrote is in the pipes. Read that, not what a grandchild
            // holding them may still write (at most 64 MiB or 1 s).
            const auto stop = Clock::now() + std::chrono::seconds(1);
            std::size_t budget = std::size_t(64) << 20;
            for (int fd : {m_out, m_err}) {
                bool& open = fd == m_out ? out_open : err_open;
                while (open && budget > 0 && Clock::now() < stop) {
                    const int r = read_some(fd);
                    if (r < 0)
                        break;
                    open = r > 0;
                    budget = budget > 65536 ? budget - 65536 : 0;
                }
            }
            break;
        }
        const double left =
            limit() - std::chrono::duration<double>(Clock::now() - last_event).count();
        if (left <= 0) {
            end.timed_out = true;
            break;
        }
        pollfd fds[2];
        nfds_t n = 0;
        if (out_open)
            fds[n++] = {m_out, POLLIN, 0};
        if (err_open)
            fds[n++] = {m_err, POLLIN, 0};
        // Short waits: the worker's end (pipes may stay open) and cancel are polled too.
        const int r = poll(fds, n, int(std::min(left, 0.05) * 1000) + 1);
        if (r <= 0)
            continue;
        for (nfds_t i = 0; i < n; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (read_some(fds[i].fd) == 0)
                (fds[i].fd == m_out ? out_open : err_open) = false;
        }
    }
    if (const auto rest = err.take(); !rest.empty() && on_err)
        on_err(rest);
    finish(end);
    return end;
}

} // namespace detail
} // namespace switchyard
