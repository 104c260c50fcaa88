// SPDX-License-Identifier: MIT
#pragma once
// Runs a program from a test (the CLI, python3, ldd) and collects what it wrote, with a
// deadline. The test suites' one way to start a process: fork() + execve() with pipes and
// poll(), no QProcess. clang's ThreadSanitizer runtime aborts in ForkAfter when Qt's
// QProcess clones (forkfd), and the sanitizer presets run these suites; fork() is
// intercepted and works there, as it does for the core's own workers.

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

#include <sys/types.h>

namespace switchyard::test {

/// How a process run ended, and what it wrote.
struct ProcessResult {
    bool started = false;  // false: fork or exec failed (`out` is empty, `err` says why)
    bool finished = false; // false: still running at the deadline, and killed
    int code = -1;         // its exit status; -1 unless it exited on its own in time
    int signal = 0;        // the signal that ended it, or 0
    QByteArray out, err;
    double seconds = 0; // from start to its end (or to the deadline)
};

/// What to start, beyond program and arguments.
struct ProcessOptions {
    QMap<QString, QString> env; // set (or, with an empty value, set to "") over the test's
    QByteArray input;           // written to its stdin, which is then closed (/dev/null if unset)
    bool has_input = false;
    // A profile or `hardware` run measures the CPU's and PoCL's ceilings first: ~55 s on a
    // quiet 2-core machine, past 120 s with two builds beside it.
    int timeout_ms = 300000;
};

/// A started process. Reads its stdout and stderr as they arrive; the destructor kills and
/// reaps it if it is still running.
class ChildProcess {
public:
    ChildProcess(const QString& program, const QStringList& args, const ProcessOptions& options);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    bool started() const { return m_result.started; }
    pid_t pid() const { return m_pid; }
    /// Reads what arrives within `timeout_ms` (or until the process has ended). Returns
    /// false once the process has ended.
    bool pump(int timeout_ms);
    /// Reads until the process ends or `timeout_ms` passes; true when it ended.
    bool wait(int timeout_ms);
    /// SIGKILL, then reaps it.
    void kill();
    /// Everything written to stderr / stdout so far.
    const QByteArray& err() const { return m_result.err; }
    const QByteArray& out() const { return m_result.out; }
    /// The result so far (complete once wait() returned true).
    const ProcessResult& result() const { return m_result; }

private:
    bool reap(bool block);
    void close_fds();

    ProcessResult m_result;
    pid_t m_pid = -1;
    int m_out = -1, m_err = -1, m_in = -1;
    QByteArray m_input;
    qsizetype m_written = 0;
    long long m_start_ns = 0;
};

/// Starts `program`, waits for it up to `options.timeout_ms` (then kills it) and returns
/// how it ended.
ProcessResult run_process(const QString& program, const QStringList& args,
                          const ProcessOptions& options = {});

/// switchyard-cli (the build's) with SWITCHYARD_PLUGIN_PATH set to `plugin_path` (empty:
/// only the plugins beside the CLI).
ProcessResult run_cli(const QStringList& args, const QString& plugin_path = {},
                      ProcessOptions options = {});

} // namespace switchyard::test
