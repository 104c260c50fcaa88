// SPDX-License-Identifier: MIT
#include "worker/workerprocess.h"

#include "util/sanitizer.h"

#include <switchyard/worker/protocol.h>
#include <switchyard/worker/workercontroller.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

extern char** environ;

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

// The keepers of the workers alive in this process, for kill_live_workers() (a
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

const char* containment_name(Containment c) noexcept {
    return c == Containment::PidNamespace ? "pid-namespace" : "subreaper";
}

void kill_live_workers() noexcept {
    for (auto& slot : g_live) {
        const pid_t pid = slot.load();
        if (pid > 0)
            detail::WorkerProcess::stop(pid);
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

namespace {

// The keeper's file descriptors, whatever numbers the controller's were.
constexpr int kKeeperIn = 3, kKeeperOut = 4, kKeeperErr = 5, kKeeperLink = 6, kKeeperShared = 7,
              kKeeperSignals = 8;

// The keeper's status message on the link: a tag, then the worker's wait status.
constexpr std::uint32_t kStatusTag = 0x53594b31; // "SYK1"

struct KeeperPlan {
    int in, out, err, link; // the worker's stdin, stdout, stderr; the keeper's end of the link
    int controller_link;    // the controller's end: closed in the keeper
    int shared;             // the worker's fd kWorkerSharedFd; -1: none
    Containment mode;
    bool map_user; // a user namespace came with the PID namespace: map our ids
    char uid_map[64], gid_map[64];
    char* const* argv;
    char* const* envp;
};

void say(const char* msg) noexcept {
    (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
}

bool write_file(const char* path, const char* text) noexcept {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = detail::write_fully(fd, text);
    ::close(fd);
    return ok;
}

// Reaps every child that has ended; the worker's status when it is among them.
// False once there is no child left at all.
bool reap_children(pid_t worker, int& status, bool& worker_done) noexcept {
    for (;;) {
        int st = 0;
        const pid_t r = waitpid(-1, &st, WNOHANG);
        if (r > 0) {
            if (r == worker) {
                status = st;
                worker_done = true;
            }
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        return !(r < 0 && errno == ECHILD);
    }
}

// The subreaper's sweep: SIGKILL to every descendant of this process found in /proc
// (/proc/PID/stat's parent field; the kernel's per-task "children" lists are an optional
// feature). No allocation: the keeper is a fork of a possibly multi-threaded controller.
void kill_descendants() noexcept {
    constexpr int kMax = 1 << 15;
    static pid_t pids[kMax], parents[kMax];
    static bool marked[kMax];
    int n = 0;
    const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    alignas(8) char buf[16384];
    for (;;) {
        const long got = syscall(SYS_getdents64, dir, buf, sizeof buf);
        if (got <= 0)
            break;
        for (long off = 0; off < got;) {
            struct Dirent {
                std::uint64_t ino;
                std::int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[1];
            };
            const auto* d = reinterpret_cast<const Dirent*>(buf + off);
            off += d->reclen;
            pid_t pid = 0;
            const char* c = d->name;
            for (; *c >= '0' && *c <= '9'; ++c)
                pid = pid * 10 + (*c - '0');
            if (*c != '\0' || pid <= 0 || n >= kMax)
                continue;
            char path[40], stat[512];
            std::snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
            const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            const ssize_t len = ::read(fd, stat, sizeof stat - 1);
            ::close(fd);
            if (len <= 0)
                continue;
            stat[len] = '\0';
            // "PID (comm) S PPID ...": comm may hold anything, so from its last ')'.
            const char* close = std::strrchr(stat, ')');
            if (!close || close[1] == '\0' || close[2] == '\0')
                continue;
            pids[n] = pid;
            parents[n] = pid_t(std::strtol(close + 4, nullptr, 10));
            marked[n] = false;
            ++n;
        }
    }
    ::close(dir);
    const pid_t self = getpid();
    // A descendant: a process whose parent is this one or a descendant (a fixpoint, as
    // deep as the tree).
    for (bool grew = true; grew;) {
        grew = false;
        for (int i = 0; i < n; ++i) {
            if (marked[i])
                continue;
            bool below = parents[i] == self;
            for (int j = 0; !below && j < n; ++j)
                below = marked[j] && pids[j] == parents[i];
            if (below) {
                marked[i] = grew = true;
                ::kill(pids[i], SIGKILL);
            }
        }
    }
}

// Ends every descendant and reaps them all, the worker's status among them.
void end_all(Containment mode, pid_t worker, int& status, bool& worker_done) noexcept {
    for (;;) {
        if (mode == Containment::PidNamespace)
            ::kill(-1, SIGKILL); // from a namespace's init: every process in it but itself
        else
            kill_descendants();
        if (!reap_children(worker, status, worker_done))
            return; // no child left, so no descendant: all of them were reaped here
        const timespec pause = {0, 1'000'000};
        nanosleep(&pause, nullptr);
    }
}

// A copy of `fd` above the keeper's fixed numbers, so moving the four into place never
// overwrites one of them (a controller with no stdin may have handed us fd 0).
int lift(int fd) noexcept {
    return fcntl(fd, F_DUPFD, 64);
}

[[noreturn]] void keeper_main(const KeeperPlan& plan) noexcept {
    // Signals were blocked by the controller around the fork and stay so: the keeper takes
    // them from a signalfd.
    setpgid(0, 0);
    ::close(plan.controller_link);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    const int fds[4] = {lift(plan.in), lift(plan.out), lift(plan.err), lift(plan.link)};
    const int shared = plan.shared >= 0 ? lift(plan.shared) : -1;
    for (int i = 0; i < 4; ++i)
        if (fds[i] < 0 || dup2(fds[i], kKeeperIn + i) < 0)
            _exit(127);
    if (plan.shared >= 0 ? shared < 0 || dup2(shared, kKeeperShared) < 0
                         : ::close(kKeeperShared) < 0 && errno != EBADF)
        _exit(127);
    // Nothing of the controller's stays open here (another worker's link would not see its
    // controller close while we hold a copy).
    close_range(kKeeperSignals, ~0U, 0);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3 && devnull >= 0; ++fd)
        dup2(devnull, fd);
    if (devnull > 2)
        ::close(devnull);
    // The controller may have died before prctl() ran: then the link reads EOF.
    pollfd link = {kKeeperLink, POLLIN, 0};
    if (poll(&link, 1, 0) != 0)
        _exit(127);
    if (plan.map_user && !(write_file("/proc/self/setgroups", "deny") &&
                           write_file("/proc/self/uid_map", plan.uid_map) &&
                           write_file("/proc/self/gid_map", plan.gid_map))) {
        dup2(kKeeperErr, STDERR_FILENO);
        say("switchyard worker: cannot map the user and group ids in the worker's user "
            "namespace; set SWITCHYARD_CONTAINMENT=subreaper\n");
        _exit(127);
    }
    if (plan.mode == Containment::Subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        dup2(kKeeperErr, STDERR_FILENO);
        say("switchyard worker: cannot become a child subreaper (PR_SET_CHILD_SUBREAPER)\n");
        _exit(127);
    }
    sigset_t watched;
    sigemptyset(&watched);
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT})
        sigaddset(&watched, sig);
    const int sfd = signalfd(-1, &watched, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0 || (sfd != kKeeperSignals && dup2(sfd, kKeeperSignals) < 0))
        _exit(127);
    if (sfd != kKeeperSignals)
        ::close(sfd);
    const pid_t keeper = getpid(); // 1 in its own namespace

    const pid_t worker = _Fork(); // no atfork handlers: this is a fork of a fork
    if (worker < 0)
        _exit(127);
    if (worker == 0) {
        // Dies with the keeper; the check closes the race with one that died before.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != keeper)
            _exit(127);
        // The controller's handlers (kill_live_workers()) must not run here before the
        // exec, which resets them anyway; what it ignores stays ignored, as exec keeps it.
        for (int sig = 1; sig < NSIG; ++sig) {
            struct sigaction old = {};
            if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_DFL &&
                old.sa_handler != SIG_IGN) {
                struct sigaction dfl = {};
                dfl.sa_handler = SIG_DFL;
                sigaction(sig, &dfl, nullptr);
            }
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); // a crashing kernel should not dump core
        dup2(kKeeperIn, STDIN_FILENO);
        dup2(kKeeperOut, STDOUT_FILENO);
        dup2(kKeeperErr, STDERR_FILENO);
        if (plan.shared >= 0 && dup2(kKeeperShared, kWorkerSharedFd) < 0)
            _exit(127);
        close_range(plan.shared >= 0 ? kWorkerSharedFd + 1 : 3, ~0U, 0);
        execve(plan.argv[0], plan.argv, plan.envp);
        say("switchyard worker: exec failed\n");
        _exit(127);
    }
    // The pipes are the worker's: they close when it and its descendants are gone.
    for (int fd : {kKeeperIn, kKeeperOut, kKeeperErr, kKeeperShared})
        ::close(fd);

    int status = 0;
    bool worker_done = false;
    for (bool stop = false; !stop && !worker_done;) {
        pollfd watch[2] = {{kKeeperLink, POLLIN, 0}, {kKeeperSignals, POLLIN, 0}};
        if (poll(watch, 2, -1) < 0 && errno != EINTR)
            break;
        // The controller never writes: anything on the link is its close (stop or death).
        if (watch[0].revents)
            stop = true;
        signalfd_siginfo info;
        while (::read(kKeeperSignals, &info, sizeof info) == ssize_t(sizeof info))
            if (info.ssi_signo != SIGCHLD)
                stop = true;
        (void)reap_children(worker, status, worker_done);
    }
    end_all(plan.mode, worker, status, worker_done);
    if (worker_done) {
        const std::uint32_t msg[2] = {kStatusTag, std::uint32_t(status)};
        (void)send(kKeeperLink, msg, sizeof msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    _exit(0);
}

// SWITCHYARD_CONTAINMENT: what was asked for (nullopt: auto).
std::optional<Containment> asked_containment() {
    const char* v = std::getenv("SWITCHYARD_CONTAINMENT");
    const std::string value = v ? v : "";
    if (value.empty() || value == "auto")
        return std::nullopt;
    if (value == "pid-namespace" || value == "pidns")
        return Containment::PidNamespace;
    if (value == "subreaper")
        return Containment::Subreaper;
    throw WorkerError("SWITCHYARD_CONTAINMENT is '" + value +
                      "': expected auto (the default), pid-namespace or subreaper");
}

// Whether the NVIDIA kernel driver is loaded. `auto` then takes no PID namespace: the CUDA
// driver writes /proc/<getpid()>/task/<tid>/comm, and in a PID namespace of its own (the
// host's /proc still mounted) that names another process or none, so cuInit fails with
// cudaErrorOperatingSystem (seen on an H200 host). A subreaper contains the descendants too.
bool nvidia_driver_loaded() noexcept {
    struct stat st = {};
    return ::stat("/proc/driver/nvidia", &st) == 0 && S_ISDIR(st.st_mode);
}

// clone() as fork(), with `flags` added; the child runs on a copy of this stack.
pid_t clone_process(unsigned long flags) noexcept {
    return pid_t(syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

} // namespace

struct WorkerProcess::Reading {
    LineBuffer out{std::size_t(256) << 20}, err{4096};
    bool out_open = true, err_open = true;
};

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, const std::string& input,
                             bool interactive, int shared_fd)
    : m_reading(std::make_unique<Reading>()) {
    install_atexit_once();
    const auto asked = asked_containment();
    // Interactive: a socket pair, ours [0] (written with MSG_NOSIGNAL: a worker that died
    // is an error, not a SIGPIPE), the worker's [1].
    int talk[2] = {-1, -1};
    if (interactive && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, talk) != 0)
        throw WorkerError(std::string("cannot create the worker's input: ") + std::strerror(errno));
    int in = interactive ? talk[1] : memfd_create("switchyard-worker-input", MFD_CLOEXEC);
    if (in < 0)
        throw WorkerError(std::string("cannot create the worker's input: ") + std::strerror(errno));
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, link[2] = {-1, -1};
    const auto close_all = [&] {
        for (int fd :
             {in, talk[0], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], link[0], link[1]})
            if (fd >= 0)
                ::close(fd);
    };
    try {
        if (interactive)
            write_all(talk[0], input); // the first request: small, the socket buffers it
        else
            write_all(in, input);
        if ((!interactive && lseek(in, 0, SEEK_SET) != 0) || pipe2(out_pipe, O_CLOEXEC) != 0 ||
            pipe2(err_pipe, O_CLOEXEC) != 0 ||
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) != 0)
            throw WorkerError(std::string("cannot create a pipe: ") + std::strerror(errno));
    } catch (...) {
        close_all();
        throw;
    }
    // Everything the keeper needs is prepared before the fork: after it only
    // async-signal-safe calls (the caller may be a multi-threaded GUI).
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env)
        cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    KeeperPlan plan = {.in = in,
                       .out = out_pipe[1],
                       .err = err_pipe[1],
                       .link = link[1],
                       .controller_link = link[0],
                       .shared = shared_fd,
                       .mode = Containment::Subreaper,
                       .map_user = false,
                       .uid_map = {},
                       .gid_map = {},
                       .argv = cargv.data(),
                       .envp = cenv.data()};
    std::snprintf(plan.uid_map, sizeof plan.uid_map, "%u %u 1\n", unsigned(geteuid()),
                  unsigned(geteuid()));
    std::snprintf(plan.gid_map, sizeof plan.gid_map, "%u %u 1\n", unsigned(getegid()),
                  unsigned(getegid()));

    // Signals stay blocked in the keeper until its signalfd takes them: a handler of ours
    // (kill_live_workers()) must never run there.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = -1;
    int clone_error = 0;
    if (asked == Containment::PidNamespace || (!asked && !nvidia_driver_loaded())) {
        // A PID namespace: as root (or with CAP_SYS_ADMIN) on its own; asked for by an
        // unprivileged user, inside a user namespace of its own. `auto` never takes the
        // user namespace: in it every file of root's reads as owned by "nobody", which the
        // plugins' trust rule (trust.cpp) refuses.
        plan.mode = Containment::PidNamespace;
        pid = clone_process(CLONE_NEWPID);
        if (pid == 0)
            keeper_main(plan);
        if (pid < 0 && asked && geteuid() != 0) {
            plan.map_user = true;
            pid = clone_process(CLONE_NEWPID | CLONE_NEWUSER);
            if (pid == 0)
                keeper_main(plan);
        }
        clone_error = pid < 0 ? errno : 0;
    }
    if ((pid < 0 && !asked) || asked == Containment::Subreaper) {
        plan.mode = Containment::Subreaper;
        plan.map_user = false;
        pid = fork();
        if (pid == 0)
            keeper_main(plan);
        clone_error = pid < 0 ? errno : 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) {
        close_all();
        if (plan.mode == Containment::PidNamespace)
            throw WorkerError(std::string("cannot start a worker in a PID namespace of its own "
                                          "(SWITCHYARD_CONTAINMENT=pid-namespace): ") +
                              std::strerror(clone_error) +
                              "; unset SWITCHYARD_CONTAINMENT to use a subreaper instead");
        throw WorkerError(std::string("cannot fork a worker: ") + std::strerror(clone_error));
    }
    setpgid(pid, pid); // also from here, so it is its own group at once
    for (int fd : {in, out_pipe[1], err_pipe[1], link[1]})
        ::close(fd);
    m_pid = pid;
    m_in = talk[0];
    m_containment = plan.mode;
    m_out = out_pipe[0];
    m_err = err_pipe[0];
    m_link = link[0];
    fcntl(m_out, F_SETFL, O_NONBLOCK);
    fcntl(m_err, F_SETFL, O_NONBLOCK);
    add_live(pid);
}

WorkerProcess::~WorkerProcess() {
    if (!m_finished) {
        WorkerEnd end;
        finish(end);
    }
}

void WorkerProcess::stop(pid_t keeper) noexcept {
    if (keeper > 0)
        ::kill(keeper, SIGTERM); // blocked there and read from its signalfd: it ends them all
}

void WorkerProcess::finish(WorkerEnd& end) noexcept {
    m_finished = true;
    // The keeper is not reaped yet (a zombie at worst), so its pid cannot be reused.
    remove_live(m_pid);
    stop(m_pid);
    ::shutdown(m_link, SHUT_WR);
    int keeper_status = 0;
    end.reaped = reap_within(m_pid, keeper_status, 10);
    if (!end.reaped) {
        // A keeper stuck past 10 s (a descendant that will not die): the namespace's
        // processes still end with it.
        ::kill(m_pid, SIGKILL);
        end.reaped = reap_within(m_pid, keeper_status, 10);
    }
    // The worker's own status, which the keeper sent before it exited; without it (the
    // keeper was killed), the keeper's.
    std::uint32_t msg[2] = {0, 0};
    if (end.reaped && recv(m_link, msg, sizeof msg, MSG_DONTWAIT) == ssize_t(sizeof msg) &&
        msg[0] == kStatusTag)
        end.status = int(msg[1]);
    else
        end.status = keeper_status;
    close_fd(m_link);
    close_fd(m_out);
    close_fd(m_err);
    close_fd(m_in);
}

bool WorkerProcess::send(std::string_view text) noexcept {
    if (m_in < 0 || m_finished)
        return false;
    while (!text.empty()) {
        const ssize_t n = ::send(m_in, text.data(), text.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        text.remove_prefix(std::size_t(n));
    }
    return true;
}

void WorkerProcess::close_input() noexcept {
    if (m_in >= 0)
        ::shutdown(m_in, SHUT_WR);
}

WorkerEnd WorkerProcess::run(const std::function<double()>& limit, const LineFn& on_line,
                             const LineFn& on_err, const std::atomic<bool>& cancel,
                             const std::function<bool()>& pause) {
    WorkerEnd end;
    auto& out = m_reading->out;
    auto& err = m_reading->err;
    bool& out_open = m_reading->out_open;
    bool& err_open = m_reading->err_open;
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
        if (pause && pause()) {
            end.paused = true;
            return end;
        }
    }
    if (const auto rest = err.take(); !rest.empty() && on_err)
        on_err(rest);
    finish(end);
    return end;
}

} // namespace detail
} // namespace switchyard
