// SPDX-License-Identifier: MIT
// Plugin code a hostile author wrote, run through switchyard-cli as a user would:
// workers never outlive their run (a kernel that closes its fds and hangs, one that forks a
// grandchild holding the pipes, a controller killed mid-run), settings of any size reach
// the worker.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include "support/childprocess.h"
#include "support/eventually.h"

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <thread>

namespace {

// code -1: did not finish in time (or died by a signal)
switchyard::test::ProcessResult run_cli(const QStringList& args, const QString& plugin_path,
                                        int timeout_ms) {
    return switchyard::test::run_cli(args, plugin_path, {.timeout_ms = timeout_ms});
}

const QString kSandbox = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/profiling-sandbox");
const QString kPlugins = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");

// A report whose CPU ceilings every run below reuses (--ceilings-from), written by
// initTestCase(): what these runs check does not depend on the ceilings, and measuring them
// again in every run is most of a run's time under a sanitizer.
QString g_ceilings;

QStringList profile_args(const QString& variant, const QString& timeout) {
    QStringList args = {"profile",         "--device", "cpu",       "--op",
                        "flow_match_step", "--sizes",  "1023",      "--variant",
                        variant,           "--jsonl",  "--timeout", timeout,
                        "--budget",        "0.02",     "--warmup",  "0.01"};
    if (!g_ceilings.isEmpty())
        args << "--ceilings-from" << g_ceilings;
    return args;
}

// The finished rows of a --jsonl stream, by variant.
QMap<QString, QJsonObject> rows_of(const QByteArray& out) {
    QMap<QString, QJsonObject> rows;
    for (const auto& line : out.split('\n')) {
        const auto doc = QJsonDocument::fromJson(line);
        if (doc.object().value("event").toString() == "row") {
            const auto row = doc.object().value("row").toObject();
            rows[row.value("variant").toString()] = row;
        }
    }
    return rows;
}

// /proc/PID/stat: the state letter and the process group; false when the process is gone.
bool proc_stat(pid_t pid, char& state, pid_t& pgrp) {
    QFile f(QString("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray s = f.readAll();
    const int close = s.lastIndexOf(')');
    if (close < 0)
        return false;
    const auto fields = s.mid(close + 2).split(' ');
    if (fields.size() < 3)
        return false;
    state = fields[0].isEmpty() ? '?' : fields[0][0];
    pgrp = pid_t(fields[2].toLongLong());
    return true;
}

bool alive(pid_t pid) {
    char state = 0;
    pid_t pgrp = 0;
    return proc_stat(pid, state, pgrp) && state != 'Z' && state != 'X';
}

// Live processes (not zombies) in process group `pgrp`.
QList<pid_t> group_members(pid_t pgrp) {
    QList<pid_t> members;
    for (const auto& entry : QDir("/proc").entryList(QDir::Dirs)) {
        bool ok = false;
        const pid_t pid = pid_t(entry.toLongLong(&ok));
        char state = 0;
        pid_t g = 0;
        if (ok && proc_stat(pid, state, g) && g == pgrp && state != 'Z' && state != 'X')
            members.push_back(pid);
    }
    return members;
}

using switchyard::test::eventually;

// "fixture pids worker=W grandchild=G group=P" from the kernel (forwarded by the CLI on
// stderr), as /proc names them.
bool fixture_pids(const QByteArray& err, pid_t& worker, pid_t& grandchild, pid_t& group) {
    static const QRegularExpression re("fixture pids worker=(\\d+) grandchild=(\\d+) group=(\\d+)");
    const auto m = re.match(QString::fromUtf8(err));
    if (!m.hasMatch())
        return false;
    worker = pid_t(m.captured(1).toLongLong());
    grandchild = pid_t(m.captured(2).toLongLong());
    group = pid_t(m.captured(3).toLongLong());
    return true;
}

} // namespace

class TestCliSandbox : public QObject {
    Q_OBJECT

    double m_baseline = -1;
    QTemporaryDir m_dir;

    // How long the same run takes with a well-behaved kernel (the CPU's probes and the
    // worker's start included): the runs below are judged against it, so a slow machine or
    // a sanitizer build (which slows the probes several times) does not fail them.
    double baselineSeconds() {
        if (m_baseline < 0) {
            const auto r = run_cli(profile_args("reference", "10"), kSandbox, 180000);
            m_baseline = r.code == 0 ? r.seconds : 0;
        }
        return m_baseline;
    }

private slots:
    void initTestCase() {
        if (!QFile::exists(kSandbox + "/sandbox.plugin.json"))
            QSKIP("the sandbox fixture plugin is not built");
        QVERIFY(m_dir.isValid());
        const QString path = m_dir.filePath("ceilings.json");
        const auto r = run_cli(profile_args("reference", "10") << "-o" << path, kSandbox, 300000);
        QVERIFY2(r.code == 0, r.err.constData());
        g_ceilings = path;
    }

    // Before: the kernel closed the pipes, the controller blocked in waitpid() forever.
    void kernelClosingItsFdsThenHangingTimesOut() {
        const double base = baselineSeconds();
        QVERIFY2(base > 0, "the well-behaved run failed");
        const auto r = run_cli(profile_args("closefds", "2"), kSandbox, int(1000 * (base + 60)));
        QVERIFY2(r.code != -1, "the CLI did not finish within 60 s of the well-behaved run");
        QCOMPARE(r.code, 1);
        const auto rows = rows_of(r.out);
        QCOMPARE(rows.value("closefds").value("status").toString(), QString("timed_out"));
        QVERIFY(rows.value("closefds").value("reason").toString().contains("no progress for 2 s"));
        // The 2 s row timeout, then a fresh worker for nothing: well within 20 s of it.
        QVERIFY2(r.seconds < base + 20,
                 qPrintable(QString("%1 s against %2 s").arg(r.seconds).arg(base)));
    }

    // Before: the run waited ~60 s for the grandchild's copy of the pipes to close, and the
    // grandchild lived on.
    void grandchildHoldingThePipesDoesNotDelayTheRun() {
        const double base = baselineSeconds();
        QVERIFY2(base > 0, "the well-behaved run failed");
        const auto r = run_cli(profile_args("grandchild", "10"), kSandbox, int(1000 * (base + 50)));
        QVERIFY2(r.code != -1, "the CLI did not finish within 50 s of the well-behaved run");
        QCOMPARE(r.code, 0);
        QCOMPARE(rows_of(r.out).value("grandchild").value("status").toString(), QString("ok"));
        // Before: about 60 s more than the well-behaved run.
        QVERIFY2(r.seconds < base + 15,
                 qPrintable(QString("%1 s against %2 s").arg(r.seconds).arg(base)));
        pid_t worker = 0, grandchild = 0, group = 0;
        QVERIFY2(fixture_pids(r.err, worker, grandchild, group), r.err.constData());
        QVERIFY2(eventually([&] { return !alive(grandchild); }, 3000), "the grandchild lives on");
        QVERIFY(!alive(worker));
        QVERIFY(eventually([&] { return group_members(group).isEmpty(); }, 3000));
    }

    void controllerKilledMidRunLeavesNoProcess_data() {
        QTest::addColumn<int>("sig");
        QTest::newRow("SIGKILL") << int(SIGKILL);
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGINT") << int(SIGINT);
    }
    // Before: the worker (and its grandchild) lived on with PPID 1 after the CLI died.
    void controllerKilledMidRunLeavesNoProcess() {
        QFETCH(int, sig);
        switchyard::test::ChildProcess p(QStringLiteral(SWITCHYARD_CLI_PATH),
                                         profile_args("grandchild_hang", "120"),
                                         {.env = {{"SWITCHYARD_PLUGIN_PATH", kSandbox}}});
        QVERIFY2(p.started(), p.err().constData());
        pid_t worker = 0, grandchild = 0, group = 0;
        QElapsedTimer t;
        t.start();
        while (!fixture_pids(p.err(), worker, grandchild, group) && t.elapsed() < 60000)
            p.pump(100);
        QVERIFY2(worker > 0, p.err().constData());
        QVERIFY(alive(worker));
        QVERIFY(alive(grandchild));
        ::kill(p.pid(), sig);
        QVERIFY(p.wait(10000));
        QCOMPARE(p.result().signal, sig); // it died of the signal
        QVERIFY2(eventually([&] { return !alive(worker) && !alive(grandchild); }, 5000),
                 "a process of the run lives on");
        QVERIFY2(eventually([&] { return group_members(group).isEmpty(); }, 5000),
                 "the worker's process group is not empty");
    }

    // Parity sees what a kernel must not do. Before: past2 and modify_input passed, past64
    // died of glibc's "corrupted size vs. prev_size".
    void parityCatchesWritesOutsideTheOutput_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("says");
        QTest::newRow("2 floats past") << "past2"
                                       << "wrote 2 elements past `out`";
        QTest::newRow("64 floats past") << "past64"
                                        << "wrote 64 elements past `out`";
        QTest::newRow("const input") << "modify_input"
                                     << "modified input `x`";
    }
    void parityCatchesWritesOutsideTheOutput() {
        QFETCH(QString, variant);
        QFETCH(QString, says);
        const auto r = run_cli(profile_args(variant, "10"), kSandbox, 60000);
        QCOMPARE(r.code, 1);
        const auto row = rows_of(r.out).value(variant);
        QCOMPARE(row.value("status").toString(), QString("fail"));
        const auto parity = row.value("parity").toObject();
        QCOMPARE(parity.value("verdict").toString(), QString("FAIL"));
        QVERIFY2(parity.value("first_failure").toString().startsWith(says),
                 qPrintable(parity.value("first_failure").toString()));
        QVERIFY(parity.value("violations").toArray().contains(parity.value("first_failure")));
        QVERIFY2(row.value("reason").toString().contains(says), r.out.constData());
    }

    // Inspecting a plugin never runs its code in the CLI's process.
    void hostilePluginsAreFailedWithTheirCause_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("causes"); // accepted causes
        QTest::addColumn<QString>("says");
        // Before: `show` exited 0 and printed nothing.
        QTest::newRow("exit(0)") << "hook_exit"
                                 << "fixture-hook-exit" << QStringList{"hook_exited"}
                                 << "register hook called exit(0)";
        // Before: `show` died of SIGABRT.
        QTest::newRow("abort()") << "hook_abort"
                                 << "fixture-hook-abort" << QStringList{"hook_crashed"}
                                 << "SIGABRT";
        // Before: `show` never returned.
        QTest::newRow("never returns") << "hook_hang"
                                       << "fixture-hook-hang" << QStringList{"hook_timed_out"}
                                       << "register hook did not return within 2 s";
        // Before: `show` died of SIGBUS inside dlopen; then the worker did (hook_crashed); now
        // the file is judged cut off from its headers and never opened.
        QTest::newRow("truncated library")
            << "truncated"
            << "fixture-truncated" << QStringList{"library_truncated"} << "is cut off: its ";
    }
    void hostilePluginsAreFailedWithTheirCause() {
        QFETCH(QString, dir);
        QFETCH(QString, name);
        QFETCH(QStringList, causes);
        QFETCH(QString, says);
        const QString path = kPlugins + "/" + dir;
        QVERIFY2(QDir(path).exists(), qPrintable(path));

        // --load-timeout 2: the hanging hook is given up on after 2 s (default 10 s).
        const auto text = run_cli({"show", name, "--load-timeout", "2"}, path, 60000);
        QVERIFY2(text.code != -1, "show did not finish (or died of a signal)");
        QCOMPARE(text.code, 1);
        QVERIFY2(text.out.contains(says.toUtf8()), text.out.constData());

        const auto json = run_cli({"show", name, "--json", "--load-timeout", "2"}, path, 60000);
        QCOMPARE(json.code, 1);
        const auto doc = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(doc.value("state").toString(), QString("failed"));
        QVERIFY2(causes.contains(doc.value("cause").toString()), json.out.constData());
        QVERIFY2(doc.value("error").toString().contains(says), json.out.constData());

        // Every other command goes on.
        const auto list = run_cli({"list", "--all", "--include-unavailable"}, path, 60000);
        QCOMPARE(list.code, 0);
        QVERIFY(list.out.contains(name.toUtf8()));
        const auto matrix = run_cli({"matrix", "--json"}, path, 60000);
        QCOMPARE(matrix.code, 0);
        QVERIFY(matrix.out.contains(name.toUtf8()));
        // The default chain ends at a built-in cell: the plugin is not loaded, nothing fails.
        const auto resolve =
            run_cli({"resolve", "gemm", "--json", "--load-timeout", "2"}, path, 60000);
        QVERIFY2(resolve.code == 0, resolve.err.constData());
        QCOMPARE(QJsonDocument::fromJson(resolve.out).object().value("failed_backends").toArray(),
                 QJsonArray());
        // A chain that reaches its cell (its variant: the fixture's folder name) loads it in
        // the worker, lazily: it is Failed with its cause and the CPU still resolves gemm.
        const auto reached = run_cli(
            {"resolve", "gemm", "--variant", dir, "--json", "--load-timeout", "2"}, path, 60000);
        QVERIFY2(reached.code == 0, reached.err.constData());
        const auto r = QJsonDocument::fromJson(reached.out).object();
        QCOMPARE(r.value("winner").toObject().value("variant").toString(), QString("reference"));
        const auto failed = r.value("failed_backends").toArray();
        if (causes.contains("library_truncated")) {
            // Failed before any load (its headers read): no worker tried it, and its rung says
            // why.
            QCOMPARE(failed.size(), 0);
            bool said = false;
            for (const auto& rung : r.value("rungs").toArray())
                said = said || (rung.toObject().value("backend").toString() == name &&
                                rung.toObject().value("why_not").toString().contains(says));
            QVERIFY2(said, reached.out.constData());
            return;
        }
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed[0].toObject().value("backend").toString(), name);
        QVERIFY(causes.contains(failed[0].toObject().value("cause").toString()));
    }

    // `hardware` and `doctor` list the devices of device-backend plugins by loading them in
    // an inspection worker (before: in their own process, so a hook that exits made
    // `hardware` exit 0 with no output, an abort killed it, a hang hung it). A backend that
    // ends the worker is Failed with its cause, and the well-behaved one is still listed.
    void deviceBackendsAreListedInAWorker_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("cause");
        QTest::addColumn<QString>("says");
        QTest::newRow("register hook calls exit(0)") << "device_hook_exit"
                                                     << "fixture-device-hook-exit"
                                                     << "hook_exited"
                                                     << "register hook called exit(0)";
        QTest::newRow("enumerate() aborts") << "device_enum_abort"
                                            << "fixture-device-enum-abort"
                                            << "hook_crashed"
                                            << "listing its fx_enum_abort devices";
        QTest::newRow("prepare() never returns")
            << "device_probe_hang"
            << "fixture-device-probe-hang"
            << "hook_timed_out"
            << "measuring the ceilings of fx_probe_hang:0 did not return within 3 s";
    }
    void deviceBackendsAreListedInAWorker() {
        QFETCH(QString, dir);
        QFETCH(QString, name);
        QFETCH(QString, cause);
        QFETCH(QString, says);
        const QString path = kPlugins + "/" + dir + ":" + kPlugins + "/device_good";
        // 300 s: `hardware` measures the CPU's ceilings too, which took past 120 s beside
        // tst_profiler under ctest -j2 on a 2-vCPU guest (about 30 s alone).
        const auto hw = run_cli({"hardware", "--json", "--probe-timeout", "3"}, path, 300000);
        QVERIFY2(hw.code == 0, hw.err.constData());
        QVERIFY2(hw.err.contains(name.toUtf8()) && hw.err.contains(says.toUtf8()),
                 hw.err.constData());
        const auto doc = QJsonDocument::fromJson(hw.out).object();
        QStringList ids;
        QJsonObject good;
        for (const auto& d : doc.value("devices").toArray()) {
            ids << d.toObject().value("id").toString();
            if (ids.back() == "fx_good:0")
                good = d.toObject();
        }
        QVERIFY2(ids.contains("cpu") && ids.contains("fx_good:0"), qPrintable(ids.join(',')));
        QCOMPARE(good.value("name").toString(), QString("Fixture GPU good"));
        // Probed in the worker: the ceiling its prepare() measured came back as data.
        const auto ceilings = good.value("ceilings").toArray();
        QCOMPARE(ceilings.size(), 1);
        QCOMPARE(ceilings[0].toObject().value("id").toString(), QString("device.copy"));

        const auto doctor = run_cli({"doctor", "--json", "--probe-timeout", "3"}, path, 120000);
        QVERIFY2(doctor.code != -1, doctor.err.constData()); // finished, no signal, no hang
        if (cause != "hook_timed_out")                       // a failed backend is an error: exit 1
            QCOMPARE(doctor.code, 1);
        const auto d = QJsonDocument::fromJson(doctor.out).object();
        QMap<QString, QJsonObject> backends;
        for (const auto& b : d.value("backends").toArray())
            backends[b.toObject().value("name").toString()] = b.toObject();
        QVERIFY(backends.contains(name) && backends.contains("fixture-device-good"));
        QCOMPARE(backends["fixture-device-good"].value("state").toString(), QString("loaded"));
        if (cause != "hook_timed_out") { // without --probe, prepare() is never called
            QCOMPARE(backends[name].value("state").toString(), QString("failed"));
            QCOMPARE(backends[name].value("cause").toString(), cause);
        }
        QStringList devices;
        for (const auto& dev : d.value("devices").toArray())
            devices << dev.toObject().value("id").toString();
        QVERIFY2(devices.contains("fx_good:0"), qPrintable(devices.join(',')));
        if (cause == "hook_timed_out") {
            const auto probed =
                run_cli({"doctor", "--json", "--probe", "--probe-timeout", "3"}, path, 120000);
            const auto p = QJsonDocument::fromJson(probed.out).object();
            bool seen = false;
            for (const auto& b : p.value("backends").toArray())
                if (b.toObject().value("name").toString() == name) {
                    seen = true;
                    QCOMPARE(b.toObject().value("cause").toString(), cause);
                }
            QVERIFY2(seen, probed.out.left(2000).constData());
        }
    }

    // Before: argv is limited to 128 KiB a string; 30,000 sizes made the worker "exec failed".
    void thirtyThousandSizesReachTheWorker() {
        // 30 options of 1,000 sizes each (a single argv string is limited to 128 KiB for
        // the CLI too); the worker gets them all as one settings object.
        QStringList args = {"profile",         "--device",  "cpu", "--op",
                            "flow_match_step", "--timeout", "5"};
        for (int chunk = 0; chunk < 30; ++chunk) {
            QStringList sizes;
            for (int i = 0; i < 1000; ++i)
                sizes << QString::number(1000 + chunk * 1000 + i);
            if (chunk == 29)
                sizes.back() = "bogus"; // so the run stops at planning: a usage error naming it
            args << "--sizes" << sizes.join(',');
        }
        const auto r = run_cli(args, QString(), 120000);
        QVERIFY2(!r.err.contains("exec failed"), r.err.left(2000).constData());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("bogus"), r.err.left(2000).constData());
    }
};

QTEST_GUILESS_MAIN(TestCliSandbox)
#include "tst_cli_sandbox.moc"
