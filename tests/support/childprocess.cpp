// SPDX-License-Identifier: MIT
#include "support/childprocess.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace switchyard::test {
namespace {

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The test's environment with `overrides` set on top, as execve() wants it.
std::vector<std::string> environment(const QMap<QString, QString>& overrides) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const auto eq = entry.find('=');
        const QString name = QString::fromStdString(entry.substr(0, eq));
        if (!overrides.contains(name))
            env.push_back(entry);
    }
    for (auto it = overrides.begin(); it != overrides.end(); ++it)
        env.push_back((it.key() + "=" + it.value()).toStdString());
    return env;
}

} // namespace

ChildProcess::ChildProcess(const QString& program, const QStringList& args,
                           const ProcessOptions& options)
    : m_input(options.input) {
    m_start_ns = now_ns();
    std::vector<std::string> argv{program.toStdString()};
    for (const auto& a : args)
        argv.push_back(a.toStdString());
    const auto env = environment(options.env);
    // Everything the child needs is prepared before fork(): after it only
    // async-signal-safe calls (a Qt Test program has threads).
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env)
        cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    // execvp's PATH search, done here: "python3" and "ldd" are found like a shell would.
    std::string path = argv[0];
    if (path.find('/') == std::string::npos) {
        const char* dirs = std::getenv("PATH");
        std::string list = dirs ? dirs : "/usr/bin:/bin";
        std::size_t begin = 0;
        while (begin <= list.size()) {
            const auto end = std::min(list.find(':', begin), list.size());
            const std::string candidate = list.substr(begin, end - begin) + "/" + argv[0];
            if (access(candidate.c_str(), X_OK) == 0) {
                path = candidate;
                break;
            }
            begin = end + 1;
        }
    }
    const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    int exec_failed[2] = {-1, -1}; // sees errno when execve fails, EOF when it succeeds
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
        (options.has_input && pipe2(in, O_CLOEXEC) != 0) || pipe2(exec_failed, O_CLOEXEC) != 0) {
        m_result.err = QByteArray("cannot create a pipe: ") + std::strerror(errno);
        for (int fd : {devnull, out[0], out[1], err[0], err[1], in[0], in[1], exec_failed[0],
                       exec_failed[1]})
            if (fd >= 0)
                ::close(fd);
        return;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        dup2(options.has_input ? in[0] : devnull, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        execve(path.c_str(), cargv.data(), cenv.data());
        const int e = errno;
        (void)!::write(exec_failed[1], &e, sizeof e);
        _exit(127);
    }
    const int fork_errno = errno;
    for (int fd : {devnull, out[1], err[1], in[0], exec_failed[1]})
        if (fd >= 0)
            ::close(fd);
    if (pid < 0) {
        m_result.err = QByteArray("cannot fork: ") + std::strerror(fork_errno);
        for (int fd : {out[0], err[0], in[1], exec_failed[0]})
            if (fd >= 0)
                ::close(fd);
        return;
    }
    m_pid = pid;
    int e = 0;
    ssize_t n;
    while ((n = ::read(exec_failed[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    ::close(exec_failed[0]);
    m_out = out[0];
    m_err = err[0];
    m_in = in[1];
    fcntl(m_out, F_SETFL, O_NONBLOCK);
    fcntl(m_err, F_SETFL, O_NONBLOCK);
    if (m_in >= 0) {
        fcntl(m_in, F_SETFL, O_NONBLOCK);
        if (m_input.isEmpty()) {
            ::close(m_in);
            m_in = -1;
        }
    }
    if (n == sizeof e) {
        m_result.err = QByteArray("cannot run ") + path.c_str() + ": " + std::strerror(e);
        reap(true);
        close_fds();
        return;
    }
    m_result.started = true;
}

ChildProcess::~ChildProcess() {
    if (m_pid > 0) // not reaped yet
        kill();
    close_fds();
}

void ChildProcess::close_fds() {
    for (int* fd : {&m_out, &m_err, &m_in})
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
}

// True once the process has ended (its status is in m_result).
bool ChildProcess::reap(bool block) {
    if (m_pid <= 0)
        return true;
    int status = 0;
    pid_t r;
    while ((r = waitpid(m_pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r == 0)
        return false;
    if (r == m_pid) {
        if (WIFEXITED(status))
            m_result.code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            m_result.signal = WTERMSIG(status);
    }
    m_pid = -m_pid; // reaped: keep the number for pid(), never signal it again
    m_result.seconds = double(now_ns() - m_start_ns) / 1e9;
    return true;
}

bool ChildProcess::pump(int timeout_ms) {
    if (!m_result.started)
        return false;
    const long long deadline = now_ns() + (long long)timeout_ms * 1000000;
    char buf[65536];
    for (;;) {
        // Everything already written is read first, so what a process wrote before it
        // exited is never lost.
        for (auto [fd, sink] :
             {std::pair{&m_out, &m_result.out}, std::pair{&m_err, &m_result.err}}) {
            while (*fd >= 0) {
                const ssize_t n = ::read(*fd, buf, sizeof buf);
                if (n > 0) {
                    sink->append(buf, n);
                    continue;
                }
                if (n == 0) {
                    ::close(*fd);
                    *fd = -1;
                }
                break; // EAGAIN (or EINTR: next round)
            }
        }
        const bool eof_out = m_out < 0, eof_err = m_err < 0;
        if (m_in >= 0) {
            const ssize_t n =
                ::write(m_in, m_input.constData() + m_written, m_input.size() - m_written);
            if (n > 0)
                m_written += n;
            if ((n < 0 && errno != EAGAIN && errno != EINTR) || m_written >= m_input.size()) {
                ::close(m_in);
                m_in = -1;
            }
        }
        if (m_pid > 0 && reap(false)) {
            // Ended. A grandchild may hold the pipes open: take what is there and stop.
            for (auto [fd, sink] :
                 {std::pair{m_out, &m_result.out}, std::pair{m_err, &m_result.err}}) {
                ssize_t n;
                while (fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0)
                    sink->append(buf, n);
            }
            close_fds();
            m_result.finished = true;
            return false;
        }
        if (m_pid <= 0)
            return false;
        const long long left_ns = deadline - now_ns();
        if (left_ns <= 0)
            return true;
        pollfd fds[3];
        nfds_t count = 0;
        if (!eof_out)
            fds[count++] = {m_out, POLLIN, 0};
        if (!eof_err)
            fds[count++] = {m_err, POLLIN, 0};
        if (m_in >= 0)
            fds[count++] = {m_in, POLLOUT, 0};
        // Both pipes closed but the process runs on: poll its exit every 10 ms.
        const int wait_ms = count == 0 ? 10 : int(std::min<long long>(left_ns / 1000000 + 1, 50));
        if (count == 0)
            ::poll(nullptr, 0, wait_ms);
        else
            ::poll(fds, count, wait_ms);
    }
}

bool ChildProcess::wait(int timeout_ms) {
    const long long deadline = now_ns() + (long long)timeout_ms * 1000000;
    while (pump(int(std::max<long long>(0, (deadline - now_ns()) / 1000000)))) {
        if (now_ns() >= deadline)
            return false;
    }
    return m_result.finished;
}

void ChildProcess::kill() {
    if (m_pid > 0) {
        ::kill(m_pid, SIGKILL);
        reap(true);
    }
    close_fds();
}

ProcessResult run_process(const QString& program, const QStringList& args,
                          const ProcessOptions& options) {
    ChildProcess p(program, args, options);
    if (!p.started())
        return p.result();
    if (!p.wait(options.timeout_ms)) {
        p.kill();
        ProcessResult r = p.result();
        r.finished = false;
        r.code = -1;
        r.seconds = options.timeout_ms / 1000.0;
        return r;
    }
    return p.result();
}

ProcessResult run_cli(const QStringList& args, const QString& plugin_path, ProcessOptions options) {
    options.env.insert(QStringLiteral("SWITCHYARD_PLUGIN_PATH"), plugin_path);
    return run_process(QStringLiteral(SWITCHYARD_CLI_PATH), args, options);
}

} // namespace switchyard::test
