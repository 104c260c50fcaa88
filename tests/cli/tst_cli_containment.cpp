// SPDX-License-Identifier: MIT
// Contained workers, through switchyard-cli as a user runs it: every descendant of
// a profiling or inspection worker ends with its run, even one that called setsid() or
// double-forked, and even when the CLI is killed with SIGKILL; with each containment
// (SWITCHYARD_CONTAINMENT=pid-namespace and subreaper), and the report says which ran.
// The processes of a run are found by a marker in their environment, which every one of
// them inherits from the CLI.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QUuid>

#include "support/childprocess.h"
#include "support/eventually.h"

#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace {

const QString kSandbox = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/profiling-sandbox");
const QString kHookEscape = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins/hook_escape");
const QByteArray kMarkerVar = "SWITCHYARD_TEST_MARKER";

QString g_ceilings; // a report whose CPU ceilings the runs reuse (written by initTestCase)

QStringList profile_args(const QString& variant, const QString& timeout) {
    QStringList args = {"profile",         "--device", "cpu",       "--op",
                        "flow_match_step", "--sizes",  "1023",      "--variant",
                        variant,           "--jsonl",  "--timeout", timeout,
                        "--budget",        "0.02",     "--warmup",  "0.01"};
    if (!g_ceilings.isEmpty())
        args << "--ceilings-from" << g_ceilings;
    return args;
}

// Whether this machine lets us make a PID namespace the way the CLI does when asked for one
// (as root on its own, else inside a user namespace).
bool pid_namespace_available() {
    const pid_t pid = ::fork();
    if (pid == 0) {
        const bool ok = ::unshare(CLONE_NEWPID) == 0 ||
                        (::geteuid() != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWPID) == 0);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

// /proc/PID/stat's state letter; 0 when the process is gone.
char proc_state(const QString& pid) {
    QFile f("/proc/" + pid + "/stat");
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray s = f.readAll();
    const int close = s.lastIndexOf(')');
    return close < 0 || close + 2 >= s.size() ? 0 : s[close + 2];
}

// The live processes (zombies aside) whose environment holds `marker`, as "PID (comm)".
QStringList marked_processes(const QByteArray& marker) {
    const QByteArray entry = kMarkerVar + "=" + marker;
    QStringList found;
    for (const auto& name : QDir("/proc").entryList(QDir::Dirs)) {
        bool numeric = false;
        name.toLongLong(&numeric);
        if (!numeric)
            continue;
        QFile env("/proc/" + name + "/environ");
        if (!env.open(QIODevice::ReadOnly))
            continue;
        if (!env.readAll().split('\0').contains(entry))
            continue;
        const char state = proc_state(name);
        if (state == 0 || state == 'Z' || state == 'X')
            continue;
        QFile comm("/proc/" + name + "/comm");
        const QString what = comm.open(QIODevice::ReadOnly) ? comm.readAll().trimmed() : "?";
        found << name + " (" + what + ", state " + QChar(state) + ")";
    }
    return found;
}

using switchyard::test::eventually;

QByteArray new_marker() {
    return QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
}

switchyard::test::ProcessOptions options_for(const QString& containment, const QByteArray& marker,
                                             const QString& plugin_path, int timeout_ms) {
    switchyard::test::ProcessOptions o;
    o.env = {{"SWITCHYARD_PLUGIN_PATH", plugin_path},
             {QString::fromLatin1(kMarkerVar), QString::fromLatin1(marker)}};
    if (!containment.isEmpty())
        o.env.insert("SWITCHYARD_CONTAINMENT", containment);
    o.timeout_ms = timeout_ms;
    return o;
}

// The "fixture escapee=PID" lines of the sandbox kernels.
QList<qint64> escapees(const QByteArray& err) {
    static const QRegularExpression re("fixture escapee=(\\d+)");
    QList<qint64> pids;
    auto it = re.globalMatch(QString::fromUtf8(err));
    while (it.hasNext())
        pids << it.next().captured(1).toLongLong();
    return pids;
}

// Whether user `uid` could make a PID namespace inside a user namespace of its own.
bool user_pid_namespace_available(uid_t uid) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        const bool ok = ::setgroups(0, nullptr) == 0 && ::setresgid(uid, uid, uid) == 0 &&
                        ::setresuid(uid, uid, uid) == 0 &&
                        ::unshare(CLONE_NEWUSER | CLONE_NEWPID) == 0;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

QString find_program(const QString& name) {
    for (const auto& dir : {"/usr/bin", "/bin", "/usr/sbin", "/sbin"})
        if (QFileInfo(QString(dir) + "/" + name).isExecutable())
            return QString(dir) + "/" + name;
    return {};
}

// The context event of a --jsonl stream.
QJsonObject context_of(const QByteArray& out) {
    for (const auto& line : out.split('\n')) {
        const auto doc = QJsonDocument::fromJson(line).object();
        if (doc.value("event").toString() == "context")
            return doc.value("context").toObject();
    }
    return {};
}

QJsonObject row_of(const QByteArray& out, const QString& variant) {
    for (const auto& line : out.split('\n')) {
        const auto doc = QJsonDocument::fromJson(line).object();
        if (doc.value("event").toString() == "row" &&
            doc.value("row").toObject().value("variant").toString() == variant)
            return doc.value("row").toObject();
    }
    return {};
}

} // namespace

class TestCliContainment : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    bool m_pidns = false;

    void addContainments() {
        QTest::addColumn<QString>("containment");
        QTest::newRow("pid-namespace") << "pid-namespace";
        QTest::newRow("subreaper") << "subreaper";
    }
    bool skipUnavailable(const QString& containment) {
        return containment == "pid-namespace" && !m_pidns;
    }

private slots:
    void initTestCase() {
        if (!QFile::exists(kSandbox + "/sandbox.plugin.json"))
            QSKIP("the sandbox fixture plugin is not built");
        if (!QDir("/proc/self").exists())
            QSKIP("no /proc: the processes of a run cannot be found");
        QVERIFY(m_dir.isValid());
        // Readable by the unprivileged user of unprivilegedUser() (the reused ceilings).
        QFile::setPermissions(m_dir.path(), QFile::permissions(m_dir.path()) | QFile::ReadOther |
                                                QFile::ExeOther);
        m_pidns = pid_namespace_available();
        if (!m_pidns)
            qWarning("no PID namespace can be made here: its cases are skipped");
        const QString path = m_dir.filePath("ceilings.json");
        const auto r = switchyard::test::run_cli(profile_args("reference", "10") << "-o" << path,
                                                 kSandbox, {.timeout_ms = 300000});
        QVERIFY2(r.code == 0, r.err.constData());
        g_ceilings = path;
    }

    // Before: the setsid() child of `setsid` and the orphaned grandchild of `double_fork`
    // lived on (parent 1, a session of their own) after `profile` returned.
    void profileLeavesNoDescendant_data() {
        QTest::addColumn<QString>("containment");
        QTest::addColumn<QString>("variant");
        for (const char* c : {"pid-namespace", "subreaper"})
            for (const char* v : {"setsid", "double_fork"})
                QTest::addRow("%s, %s", c, v) << c << v;
    }
    void profileLeavesNoDescendant() {
        QFETCH(QString, containment);
        QFETCH(QString, variant);
        if (skipUnavailable(containment))
            QSKIP("no PID namespace can be made here");
        const QByteArray marker = new_marker();
        const QString report = m_dir.filePath("report-" + variant + "-" + containment + ".json");
        const auto r = switchyard::test::run_process(
            QStringLiteral(SWITCHYARD_CLI_PATH), profile_args(variant, "10") << "-o" << report,
            options_for(containment, marker, kSandbox, 120000));
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(row_of(r.out, variant).value("status").toString(), QString("ok"));
        QVERIFY2(!escapees(r.err).isEmpty(), r.err.constData()); // the kernel did fork
        // Gone when `profile` returns, not some time later.
        const auto left = marked_processes(marker);
        QVERIFY2(left.isEmpty(), qPrintable("alive after the run: " + left.join(", ")));

        QFile f(report);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto context = QJsonDocument::fromJson(f.readAll()).object().value("context");
        QCOMPARE(context.toObject().value("containment").toString(), containment);
    }

    // An inspection worker (`show` loads the plugin in one) is contained the same way.
    void inspectionLeavesNoDescendant_data() { addContainments(); }
    void inspectionLeavesNoDescendant() {
        QFETCH(QString, containment);
        if (skipUnavailable(containment))
            QSKIP("no PID namespace can be made here");
        if (!QDir(kHookEscape).exists())
            QSKIP("the hook_escape fixture plugin is not built");
        const QByteArray marker = new_marker();
        const auto r = switchyard::test::run_process(
            QStringLiteral(SWITCHYARD_CLI_PATH), {"show", "fixture-hook-escape", "--json"},
            options_for(containment, marker, kHookEscape, 60000));
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        QCOMPARE(QJsonDocument::fromJson(r.out).object().value("state").toString(),
                 QString("loaded"));
        const auto left = marked_processes(marker);
        QVERIFY2(left.isEmpty(), qPrintable("alive after `show`: " + left.join(", ")));
    }

    // Before: a CLI killed with SIGKILL left the worker's setsid() child behind (the guardian
    // killed the worker's process group, which that child had left).
    void cliKilledLeavesNoDescendant_data() { addContainments(); }
    void cliKilledLeavesNoDescendant() {
        QFETCH(QString, containment);
        if (skipUnavailable(containment))
            QSKIP("no PID namespace can be made here");
        const QByteArray marker = new_marker();
        const auto o = options_for(containment, marker, kSandbox, 120000);
        switchyard::test::ChildProcess p(QStringLiteral(SWITCHYARD_CLI_PATH),
                                         profile_args("setsid_hang", "120"), o);
        QVERIFY2(p.started(), p.err().constData());
        QElapsedTimer t;
        t.start();
        while (escapees(p.err()).isEmpty() && t.elapsed() < 60000)
            p.pump(100);
        const auto pids = escapees(p.err());
        QVERIFY2(!pids.isEmpty(), p.err().constData());
        const QString escapee = QString::number(pids.front());
        QVERIFY2(proc_state(escapee) != 0, "the escapee is not running"); // it did start
        QVERIFY(!marked_processes(marker).isEmpty());
        ::kill(p.pid(), SIGKILL);
        QVERIFY(p.wait(10000));
        QCOMPARE(p.result().signal, SIGKILL);
        QStringList left;
        QVERIFY2(eventually(
                     [&] {
                         left = marked_processes(marker);
                         return left.isEmpty();
                     },
                     5000),
                 qPrintable("alive 5 s after the CLI was killed: " + left.join(", ")));
    }

    // Unset, the best containment this machine offers runs, and the report says which.
    void autoSaysWhichRan() {
        const QByteArray marker = new_marker();
        const QString report = m_dir.filePath("report-auto.json");
        const auto r = switchyard::test::run_process(
            QStringLiteral(SWITCHYARD_CLI_PATH), profile_args("setsid", "10") << "-o" << report,
            options_for(QString(), marker, kSandbox, 120000));
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(marked_processes(marker).isEmpty());
        QFile f(report);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto context =
            QJsonDocument::fromJson(f.readAll()).object().value("context").toObject();
        // auto takes a PID namespace only where one is made without a user namespace, and
        // not where the NVIDIA driver is loaded (CUDA fails in one: workerprocess.cpp).
        const bool pidns = m_pidns && ::geteuid() == 0 && !QFileInfo("/proc/driver/nvidia").isDir();
        QCOMPARE(context.value("containment").toString(),
                 QString(pidns ? "pid-namespace" : "subreaper"));
    }

    // Run by an unprivileged user (we are root: through setpriv, as nobody): asked for, a
    // PID namespace comes inside a user namespace; `auto` takes the subreaper there (see
    // WorkerProcess); the descendants end with the run either way.
    void unprivilegedUser_data() {
        QTest::addColumn<QString>("containment");
        QTest::addColumn<QString>("ran");
        QTest::newRow("pid-namespace") << "pid-namespace"
                                       << "pid-namespace";
        QTest::newRow("subreaper") << "subreaper"
                                   << "subreaper";
        QTest::newRow("auto") << ""
                              << "subreaper";
    }
    void unprivilegedUser() {
        QFETCH(QString, containment);
        QFETCH(QString, ran);
        if (::geteuid() != 0)
            QSKIP("not root: the cases above already ran unprivileged");
        const QString setpriv = find_program("setpriv");
        if (setpriv.isEmpty())
            QSKIP("setpriv (util-linux) is not installed");
        const uid_t nobody = 65534;
        if (ran == "pid-namespace" && !user_pid_namespace_available(nobody))
            QSKIP("unprivileged user namespaces are not available here");
        const QByteArray marker = new_marker();
        auto o = options_for(containment, marker, kSandbox, 120000);
        o.env.insert("HOME", "/tmp");
        const auto r =
            switchyard::test::run_process(setpriv,
                                          QStringList{"--reuid", "65534", "--regid", "65534",
                                                      "--clear-groups", SWITCHYARD_CLI_PATH}
                                              << profile_args("double_fork", "10"),
                                          o);
        if (r.code == 127 || r.err.contains("Permission denied"))
            QSKIP(qPrintable("the CLI cannot run as nobody here: " + r.err.left(300)));
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(row_of(r.out, "double_fork").value("status").toString(), QString("ok"));
        QVERIFY2(!escapees(r.err).isEmpty(), r.err.constData());
        const auto left = marked_processes(marker);
        QVERIFY2(left.isEmpty(), qPrintable("alive after the run: " + left.join(", ")));
        QCOMPARE(context_of(r.out).value("containment").toString(), ran);
    }

    // A value that names no containment is an error that says what to set, not a crash.
    void unknownContainmentIsAClearError() {
        const auto r = switchyard::test::run_process(
            QStringLiteral(SWITCHYARD_CLI_PATH), {"show", "fixture-hook-escape", "--json"},
            options_for("sandbox", new_marker(), kHookEscape, 60000));
        QVERIFY2(r.code == 1 && r.signal == 0, (r.out + r.err).constData());
        QVERIFY2((r.out + r.err).contains("SWITCHYARD_CONTAINMENT is 'sandbox': expected auto"),
                 (r.out + r.err).constData());
    }
};

QTEST_GUILESS_MAIN(TestCliContainment)
#include "tst_cli_containment.moc"
