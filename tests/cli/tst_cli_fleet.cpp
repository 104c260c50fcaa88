// SPDX-License-Identifier: MIT
// switchyard-cli fleet submit/status/collect without a cluster: the batch script of
// --dry-run, the usage errors, and the command sequence against stand-ins for sbatch,
// scontrol, squeue and sacct (shell scripts in PATH answering with outputs recorded on Slurm
// 22.05). tests/fleet/tst_fleet_slurm.sh runs the same commands on a real cluster.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "support/childprocess.h"
#include "support/tuningreports.h"

using switchyard::test::ProcessOptions;
using switchyard::test::ProcessResult;

namespace {

void write_file(const QString& path, const QByteArray& text, bool executable = false) {
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(text);
    f.close();
    if (executable)
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup |
                         QFile::ExeGroup);
}

// A stand-in Slurm command: logs its argv to $FAKE_SLURM_LOG, prints `out`, exits `code`.
QByteArray fake(const QByteArray& name, const QByteArray& out, int code = 0,
                const QByteArray& err = {}) {
    return "#!/bin/sh\necho \"" + name + " $*\" >> \"$FAKE_SLURM_LOG\"\nprintf '%b' '" + out +
           "'\nprintf '%b' '" + err + "' >&2\nexit " + QByteArray::number(code) + "\n";
}

} // namespace

class TstCliFleet : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    ProcessResult cli(const QStringList& args, const QString& bin = {}) {
        ProcessOptions o;
        o.timeout_ms = 60000;
        if (!bin.isEmpty()) {
            o.env["PATH"] = bin + ":/usr/bin:/bin";
            o.env["FAKE_SLURM_LOG"] = bin + "/calls.log";
        }
        return switchyard::test::run_cli(args, {}, o);
    }
    QString fake_bin(const QString& name) {
        const QString bin = m_dir.path() + "/" + name;
        QDir().mkpath(bin);
        return bin;
    }
    QStringList calls(const QString& bin) {
        QFile f(bin + "/calls.log");
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    }

private slots:
    void dry_run() {
        const QString folder = m_dir.path() + "/dry";
        const auto r =
            cli({"fleet", "submit", "--folder", folder, "--nodelist", "n[1-2]", "--throttle", "1",
                 "--dry-run", "--", "--op", "rms_norm", "--sizes", "2x1024", "--budget", "0.05"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString out = QString::fromUtf8(r.out);
        for (const QString& line :
             QStringList{"#SBATCH --array=0-1%1", "#SBATCH --output=" + folder + "/logs/%A_%a.log",
                         "exec '" + QString(SWITCHYARD_CLI_PATH) +
                             "' profile '--op' 'rms_norm' '--sizes' '2x1024' '--budget' '0.05' -o "
                             "\"$report\"",
                         "# scontrol update JobId=<job>_0 NodeList=n1",
                         "# scontrol update JobId=<job>_1 NodeList=n2", "# scontrol release <job>"})
            QVERIFY2(out.contains(line), qPrintable(line + "\n" + out));
        QVERIFY2(!QFile::exists(folder), "--dry-run created the folder");
    }

    void usage_errors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString f = m_dir.path() + "/u";
        QTest::newRow("bad profile option")
            << QStringList{"--folder", f, "--", "--op", "rms_norm", "--bogus"} << "--bogus";
        QTest::newRow("bad profile value")
            << QStringList{"--folder", f, "--", "--budget", "-1"} << "--budget";
        QTest::newRow("output in settings")
            << QStringList{"--folder", f, "--", "-o", "x.json"} << "leave it out";
        QTest::newRow("two lists")
            << QStringList{"--folder", f, "--nodelist", "a,b", "--gres", "gpu:1,gpu:2"}
            << "both list several values";
        QTest::newRow("folder with blank") << QStringList{"--folder", f + " x"} << "blank";
        QTest::newRow("no folder") << QStringList{"--tasks", "2"} << "--folder";
        QTest::newRow("tasks zero") << QStringList{"--folder", f, "--tasks", "0"} << "--tasks";
    }
    void usage_errors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto r = cli(QStringList{"fleet", "submit", "--dry-run"} + args);
        QCOMPARE(r.code, 2);
        QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    }

    void submit_status_collect_with_stand_ins() {
        const QString bin = fake_bin("slurm1");
        write_file(bin + "/sbatch", fake("sbatch", "77\\n"), true);
        write_file(bin + "/scontrol",
                   "#!/bin/sh\necho \"scontrol $*\" >> \"$FAKE_SLURM_LOG\"\n"
                   "[ \"$1\" = --oneliner ] && { echo 'JobId=78 ArrayJobId=77 ArrayTaskId=0 "
                   "JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 NodeList=a'; }\nexit 0\n",
                   true);
        // Task 1 pending behind the throttle: not finished.
        write_file(bin + "/squeue", fake("squeue", "77_[1%1]|PENDING|JobArrayTaskLimit|\\n"), true);
        write_file(bin + "/sacct", fake("sacct", "", 1, "Slurm accounting storage is disabled\\n"),
                   true);
        const QString folder = m_dir.path() + "/run";
        auto r = cli(
            {"fleet", "submit", "--folder", folder, "--nodelist", "a,b", "--", "--op", "rms_norm"},
            bin);
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(QString::fromUtf8(r.out).contains("Submitted job 77"));
        const QStringList expected = {"sbatch --parsable --hold " + folder + "/fleet.sbatch",
                                      "scontrol update JobId=77_0 NodeList=a",
                                      "scontrol update JobId=77_1 NodeList=b",
                                      "scontrol release 77"};
        QCOMPARE(calls(bin), expected);
        QVERIFY(QFile::exists(folder + "/fleet.json"));
        QVERIFY(QFile::exists(folder + "/fleet.sbatch"));

        r = cli({"fleet", "status", "--folder", folder, "--json"}, bin);
        QVERIFY2(r.code == 0, r.err.constData());
        const auto st = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(st["finished"].toBool(), false);
        const auto tasks = st["tasks"].toArray();
        QCOMPARE(tasks.size(), 2);
        QCOMPARE(tasks[0].toObject()["state"].toString(), QString("FAILED"));
        QCOMPARE(tasks[0].toObject()["exit_code"].toString(), QString("2:0"));
        QCOMPARE(tasks[1].toObject()["reason"].toString(), QString("JobArrayTaskLimit"));

        r = cli({"fleet", "status", "--folder", folder, "--wait", "--timeout", "0.5", "--interval",
                 "0.2"},
                bin);
        QCOMPARE(r.code, 3);
        QVERIFY2(QString::fromUtf8(r.err).contains("not finished"), r.err.constData());

        // Task 0's report is missing, its log says why (with a terminal escape in it).
        QDir().mkpath(folder + "/logs");
        write_file(folder + "/logs/77_0.log", "start\nfatal: \x1b[31mno device\x1b[0m\n");
        r = cli({"fleet", "collect", "--folder", folder}, bin);
        QCOMPARE(r.code, 3);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("missing: no report file"), qPrintable(out));
        QVERIFY2(out.contains("exit 2:0"), qPrintable(out));
        QVERIFY2(out.contains("| fatal: \\x1b[31mno device\\x1b[0m"), qPrintable(out));
        QVERIFY2(!r.out.contains('\x1b'), "a raw escape reached the terminal");
        QVERIFY2(out.contains("0 of 2 reports collected"), qPrintable(out));
    }

    void collect_without_slurm() {
        // A fleet whose Slurm is gone: collect still lists the reports on disk.
        const QString bin = fake_bin("slurm2");
        write_file(bin + "/sbatch", fake("sbatch", "5\\n"), true);
        const QString folder = m_dir.path() + "/gone";
        auto r = cli(
            {"fleet", "submit", "--folder", folder, "--tasks", "1", "--", "--op", "rms_norm"}, bin);
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(calls(bin), QStringList{"sbatch --parsable " + folder + "/fleet.sbatch"});
        QFile::remove(bin + "/sbatch"); // no Slurm command left in PATH
        // The smallest report the reader accepts.
        write_file(folder + "/report-n1-5_0.json",
                   R"({"format":"switchyard.report","format_version":3,"context":{},"rows":[]})");
        r = cli({"fleet", "collect", "--folder", folder, "--json"}, bin);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        const auto c = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(c["missing"].toInt(), 0);
        QCOMPARE(c["reports"].toArray().at(0).toString(), folder + "/report-n1-5_0.json");
        QVERIFY(c["notes"].toArray().at(0).toString().contains("Slurm could not be asked"));
        r = cli({"fleet", "status", "--folder", folder}, bin);
        QCOMPARE(r.code, 1);
        QVERIFY2(QString::fromUtf8(r.err).contains("squeue"), r.err.constData());
    }

    // --tune and --regret-map on a fleet whose reports were written here (two nodes of one
    // machine class that agree, one node of another class run without --all-variants).
    void collect_tune_with_stand_ins() {
        using switchyard::testing::plain_report;
        using switchyard::testing::tuning_report;
        const QString bin = fake_bin("slurm3");
        write_file(bin + "/sbatch", fake("sbatch", "9\\n"), true);
        const QString folder = m_dir.path() + "/tune";
        auto r = cli({"fleet", "submit", "--folder", folder, "--tasks", "3", "--", "--op",
                      "rms_norm", "--all-variants", "--repeat", "2"},
                     bin);
        QVERIFY2(r.code == 0, r.err.constData());
        QFile script(folder + "/fleet.sbatch");
        QVERIFY(script.open(QIODevice::ReadOnly));
        QVERIFY(script.readAll().contains("'--all-variants' '--repeat' '2'"));
        QFile::remove(bin + "/sbatch"); // Slurm is gone: collect reads the folder alone
        const std::string f = folder.toStdString();
        const std::string a = "0123456789abcdef", b = "fedcba9876543210";
        tuning_report(a, {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 1.0e-3}}, "x86-64-v3/threaded", "abc",
                      "n1")
            .save(f + "/report-n1-9_0.json");
        tuning_report(a, {{4, 2.7e-3, 1.5e-3}, {8, 2.7e-3, 2.7e-3}}, "x86-64-v3/threaded", "abc",
                      "n2")
            .save(f + "/report-n2-9_1.json");
        plain_report(b, "n3").save(f + "/report-n3-9_2.json");

        r = cli({"fleet", "collect", "--folder", folder, "--tune"}, bin);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        const QString out = QString::fromUtf8(r.out);
        const QString tuning = folder + "/tuning/" + QString::fromStdString(a) + ".tuning";
        for (const QString& line : QStringList{
                 "3 of 3 reports collected",
                 "machine class 0123456789abcdef (Test CPU 0123456789abcdef): 2 nodes (task 0 "
                 "(n1), task 1 (n2)), 1 entry agreed, written to " +
                     tuning,
                 "  rms_norm on cpu, 4x1024: x86-64-v3/threaded instead of x86-64-v4/default "
                 "(1.80x at least",
                 "note: rms_norm 8x1024 on cpu: x86-64-v3/threaded beats x86-64-v4/default on "
                 "task 0 (n1) cpu; not on task 1 (n2) cpu",
                 "machine class fedcba9876543210: no node with dispatch findings; left out, "
                 "without dispatch findings: task 2 (n3); nothing to tune",
                 "note: task 2 (n3): its report has no dispatch findings", "Regret map:",
                 "0123456789abcdef  rms_norm  cpu     4x1024  x86-64-v4/default  "
                 "x86-64-v3/threaded  1.80x  2.25x   2 of 2  x86-64-v3/threaded",
                 "0123456789abcdef  rms_norm  cpu     8x1024  x86-64-v4/default  "
                 "x86-64-v3/threaded  2.70x  2.70x   1 of 2  -"})
            QVERIFY2(out.contains(line), qPrintable(line + "\n---\n" + out));
        QVERIFY(QFile::exists(tuning));
        QVERIFY(!QFile::exists(folder + "/tuning/" + QString::fromStdString(b) + ".tuning"));
        QFile written(tuning);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const auto t = QJsonDocument::fromJson(written.readAll()).object();
        QCOMPARE(t["format"].toString(), QString("switchyard.tuning"));
        QCOMPARE(t["machine_id"].toString(), QString::fromStdString(a));
        QCOMPARE(t["entries"].toArray().size(), 1);

        // -o DIR and --json: the collection with the fleet's tuning in it.
        const QString dir = m_dir.path() + "/tunings";
        r = cli({"fleet", "collect", "--folder", folder, "--tune", "-o", dir, "--json"}, bin);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        const auto j = QJsonDocument::fromJson(r.out).object();
        const auto ft = j["fleet_tuning"].toObject();
        QCOMPARE(ft["format"].toString(), QString("switchyard.fleet-tuning"));
        const auto classes = ft["classes"].toArray();
        QCOMPARE(classes.size(), 2);
        QCOMPARE(classes[0].toObject()["file"].toString(),
                 dir + "/" + QString::fromStdString(a) + ".tuning");
        QCOMPARE(classes[1].toObject()["without_findings"].toArray().at(0).toString(),
                 QString("task 2 (n3)"));
        const auto map = ft["regret_map"].toArray();
        QCOMPARE(map.size(), 2);
        QCOMPARE(map[1].toObject()["agree"].toInt(), 1);
        QCOMPARE(map[1].toObject()["class_nodes"].toInt(), 2);
        QVERIFY(QFile::exists(dir + "/" + QString::fromStdString(a) + ".tuning"));

        // --regret-map alone writes nothing; -o needs --tune; --paths goes with neither.
        QDir(folder + "/tuning").removeRecursively();
        r = cli({"fleet", "collect", "--folder", folder, "--regret-map"}, bin);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        QVERIFY(QString::fromUtf8(r.out).contains("1 entry agreed (not written)"));
        QVERIFY(QString::fromUtf8(r.out).contains("2 of 2"));
        QVERIFY(!QFile::exists(folder + "/tuning"));
        for (const QStringList& bad :
             {QStringList{"--regret-map", "-o", dir}, QStringList{"--tune", "--paths"},
              QStringList{"--regret-map", "--paths"}}) {
            r = cli(QStringList{"fleet", "collect", "--folder", folder} + bad, bin);
            QVERIFY2(r.code == 2, qPrintable(bad.join(' ') + ": " + QString::number(r.code)));
        }

        // No report with dispatch findings: an error saying what to run.
        QFile::remove(folder + "/report-n1-9_0.json");
        QFile::remove(folder + "/report-n2-9_1.json");
        r = cli({"fleet", "collect", "--folder", folder, "--tune"}, bin);
        QCOMPARE(r.code, 1);
        QVERIFY2(QString::fromUtf8(r.err).contains("nothing to tune or map") &&
                     QString::fromUtf8(r.err).contains("--all-variants --repeat 3"),
                 r.err.constData());
    }

    void not_a_fleet_folder() {
        const auto r = cli({"fleet", "collect", "--folder", m_dir.path()});
        QCOMPARE(r.code, 1);
        QVERIFY2(QString::fromUtf8(r.err).contains("fleet.json"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TstCliFleet)
#include "tst_cli_fleet.moc"
