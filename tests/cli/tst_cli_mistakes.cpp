// SPDX-License-Identifier: MIT
// A newcomer's mistakes, one row each: every one exits 2 before anything is measured or
// written, with a message that names the input and, for a name, the close valid ones. "Before
// anything is measured": stdout stays empty (profile prints its rows at the end), no report
// or batch script is written, and the ceilings cache the run was given stays empty (a run
// records the CPU's ceilings there once it has measured them).
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "support/childprocess.h"

using switchyard::test::ProcessOptions;
using switchyard::test::ProcessResult;

class TstCliMistakes : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString path(const QString& name) const { return m_dir.path() + "/" + name; }

    // The files the runs may leave behind: none of them may appear.
    QStringList leftBehind() const {
        QStringList found;
        for (const auto& name : {"r.json", "out/r.json", "fleet/fleet.sbatch", "fleet/fleet.json"})
            if (QFile::exists(path(name)))
                found << name;
        for (const auto& f : QDir(path("ceilings")).entryList(QDir::Files | QDir::NoDotAndDotDot))
            found << "ceilings/" + f;
        return found;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir().mkpath(path("ceilings")));
        QVERIFY(QDir().mkpath(path("fleet")));
        QFile notAReport(path("notareport.json"));
        QVERIFY(notAReport.open(QIODevice::WriteOnly));
        notAReport.write("{\"format\": \"something else\"}\n");
    }

    void mistakes_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("says"); // each must appear on stderr
        const QString fleetDir = path("fleet");
        const QStringList fleet{"fleet", "submit", "--dry-run", "--folder", fleetDir, "--"};
        const QString nosuch = path("nosuch.json");
        // Commands and options: a suggestion wherever a name is typed.
        QTest::newRow("subcommand")
            << QStringList{"lst"} << QStringList{"unknown command 'lst'", "did you mean 'list'"};
        QTest::newRow("fleet subcommand")
            << QStringList{"fleet", "sbumit"}
            << QStringList{"unknown command 'sbumit'", "did you mean 'submit'"};
        QTest::newRow("profile option")
            << QStringList{"profile", "--jsno"}
            << QStringList{"unknown option '--jsno'", "did you mean '--json'"};
        QTest::newRow("doctor option") << QStringList{"doctor", "--markdwn"}
                                       << QStringList{"unknown option '--markdwn'", "'--markdown'"};
        QTest::newRow("matrix option")
            << QStringList{"matrix", "--jsn"} << QStringList{"unknown option '--jsn'", "'--json'"};
        QTest::newRow("global option value")
            << QStringList{"--max-isa", "x86-64-v5", "list"}
            << QStringList{"--max-isa 'x86-64-v5' is not an ISA level", "'x86-64-v4'"};
        QTest::newRow("pin cpu") << QStringList{"--pin-cpu", "abc", "profile"}
                                 << QStringList{"--pin-cpu", "abc"};
        // Registry names.
        QTest::newRow("show backend")
            << QStringList{"show", "cpuu"} << QStringList{"cpuu", "'cpu'"};
        QTest::newRow("resolve op")
            << QStringList{"resolve", "gemmm"} << QStringList{"unknown op 'gemmm'", "'gemm'"};
        QTest::newRow("resolve arch") << QStringList{"resolve", "gemm", "--target", "cuda:sm90"}
                                      << QStringList{"sm90", "sm_90"};
        QTest::newRow("resolve variant")
            << QStringList{"resolve", "gemm", "--variant", "refrence"}
            << QStringList{"unknown variant 'refrence'", "did you mean 'reference'"};
        // Profile: names, sizes and values, all before a worker starts.
        QTest::newRow("profile op") << QStringList{"profile", "--op", "gemmm"}
                                    << QStringList{"unknown op 'gemmm'", "did you mean 'gemm'"};
        QTest::newRow("profile device")
            << QStringList{"profile", "--device", "cdua"}
            << QStringList{"unknown device 'cdua'", "did you mean 'cuda'"};
        QTest::newRow("profile device number") << QStringList{"profile", "--device", "opencl:x"}
                                               << QStringList{"'opencl:x'", "device number"};
        QTest::newRow("profile cells")
            << QStringList{"profile", "--op", "gemm", "--cells", "generic/refrence"}
            << QStringList{"--cells", "'generic/refrence'", "'generic/reference'"};
        QTest::newRow("profile variant")
            << QStringList{"profile", "--op", "gemm", "--variant", "refrence"}
            << QStringList{"--variant", "unknown variant 'refrence'", "'reference'"};
        QTest::newRow("thousands separator")
            << QStringList{"profile", "--op", "rms_norm", "--sizes", "1,024"}
            << QStringList{"'1,024'", "thousands separator"};
        QTest::newRow("trailing x") << QStringList{"profile", "--op", "gemm", "--sizes", "4096x"}
                                    << QStringList{"'4096x'", "nothing after the last 'x'"};
        QTest::newRow("letter O for zero")
            << QStringList{"profile", "--op", "gemm", "--sizes", "4O96"} << QStringList{"'4O96'"};
        QTest::newRow("size for an op not in the run")
            << QStringList{"profile", "--op", "rms_norm", "--sizes", "gemm:64"}
            << QStringList{"'gemm:64'", "not in this run"};
        QTest::newRow("size for an unknown op") << QStringList{"profile", "--sizes", "gemmm:64"}
                                                << QStringList{"unknown op 'gemmm'", "'gemm'"};
        QTest::newRow("output folder missing")
            << QStringList{"profile", "--op", "rms_norm", "-o", path("out/r.json")}
            << QStringList{"out/r.json", "nothing was measured"};
        QTest::newRow("output is a folder")
            << QStringList{"profile", "--op", "rms_norm", "-o", m_dir.path()}
            << QStringList{"-o:", "a folder"};
        QTest::newRow("budget") << QStringList{"profile", "--budget", "-1"}
                                << QStringList{"--budget", "'-1'"};
        QTest::newRow("timeout") << QStringList{"profile", "--timeout", "nan"}
                                 << QStringList{"--timeout", "'nan'"};
        QTest::newRow("repeat") << QStringList{"profile", "--repeat", "0"}
                                << QStringList{"--repeat", "'0'"};
        QTest::newRow("json and csv")
            << QStringList{"profile", "--json", "--csv"} << QStringList{"--json", "--csv"};
        QTest::newRow("ceilings from nothing") << QStringList{"profile", "--ceilings-from", nosuch}
                                               << QStringList{"--ceilings-from", "nosuch.json"};
        // Reports.
        QTest::newRow("compare missing report")
            << QStringList{"compare", nosuch, path("notareport.json")}
            << QStringList{"nosuch.json"};
        QTest::newRow("tune from missing report")
            << QStringList{"tune", "--from", nosuch} << QStringList{"--from", "nosuch.json"};
        // fleet submit: the settings after -- by profile's own parser, names included.
        QTest::newRow("fleet op") << fleet + QStringList{"--op", "gemmm"}
                                  << QStringList{"unknown op 'gemmm'", "'gemm'"};
        QTest::newRow("fleet sizes")
            << fleet + QStringList{"--op", "gemm", "--sizes", "4O96"} << QStringList{"'4O96'"};
        QTest::newRow("fleet device") << fleet + QStringList{"--device", "cdua"}
                                      << QStringList{"unknown device 'cdua'", "'cuda'"};
        QTest::newRow("fleet option")
            << fleet + QStringList{"--jsno"} << QStringList{"unknown option '--jsno'", "'--json'"};
        QTest::newRow("fleet variant")
            << fleet + QStringList{"--op", "gemm", "--variant", "refrence"}
            << QStringList{"unknown variant 'refrence'", "'reference'"};
    }

    void mistakes() {
        QFETCH(QStringList, args);
        QFETCH(QStringList, says);
        ProcessOptions options;
        options.env["SWITCHYARD_CEILINGS_CACHE"] = path("ceilings");
        options.timeout_ms = 120000;
        const ProcessResult r = switchyard::test::run_cli(args, {}, options);
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(r.finished, "still running: it went on to measure");
        QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(err)));
        for (const auto& s : says)
            QVERIFY2(err.contains(s), qPrintable("'" + s + "' not in: " + err));
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        QVERIFY2(leftBehind().isEmpty(), qPrintable(leftBehind().join(", ")));
    }

    // A device kind that is known but not here: why, and what is here instead (the plan,
    // in the worker, before any row; the devices of every device backend are listed).
    void unavailableDeviceSaysWhy() {
        ProcessOptions options;
        options.env["SWITCHYARD_CEILINGS_CACHE"] = path("ceilings");
        options.timeout_ms = 180000;
        // A kind no backend here provides: a build without CUDA, or CUDA without its backend.
        const ProcessResult hw =
            switchyard::test::run_cli({"hardware", "--json", "--no-probe"}, {}, options);
        QCOMPARE(hw.code, 0);
        if (hw.out.contains("\"cuda:"))
            QSKIP("this machine has a CUDA device: the kind is available here");
        const ProcessResult r = switchyard::test::run_cli(
            {"profile", "--device", "cuda", "--op", "rms_norm"}, {}, options);
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(r.code == 2, qPrintable(err));
        QVERIFY2(err.contains("device 'cuda' is not available here"), qPrintable(err));
        QVERIFY2(err.contains("devices here: cpu"), qPrintable(err));
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        QVERIFY2(leftBehind().isEmpty(), qPrintable(leftBehind().join(", ")));
    }

    // The GUI's flags: a bad op, backend, device or report is said on stderr, its action is
    // not taken (a misspelt --profile op never starts the default run), and it exits 2.
    void guiFlags_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("says");
        QTest::newRow("profile op")
            << QStringList{"--profile", "rms_nrom"}
            << QStringList{"unknown op 'rms_nrom'", "'rms_norm'", "nothing was run"};
        QTest::newRow("profile device")
            << QStringList{"--profile", "rms_norm", "--profile-devices", "cdua"}
            << QStringList{"unknown device 'cdua'", "'cuda'"};
        QTest::newRow("profile sizes")
            << QStringList{"--profile", "rms_norm", "--sizes", "1,024"} << QStringList{"'1,024'"};
        QTest::newRow("open report") << QStringList{"--open-report", path("nosuch.json")}
                                     << QStringList{"--open-report", "nosuch.json"};
        QTest::newRow("compare") << QStringList{"--compare",
                                                path("nosuch.json") + "," + path("notareport.json")}
                                 << QStringList{"--compare", "nosuch.json"};
        QTest::newRow("select") << QStringList{"--select", "cpuu"}
                                << QStringList{"unknown backend 'cpuu'", "'cpu'"};
        QTest::newRow("op") << QStringList{"--op", "gemmm"}
                            << QStringList{"unknown op 'gemmm'", "'gemm'"};
        QTest::newRow("target") << QStringList{"--target", "cuda:sm90"}
                                << QStringList{"--target", "sm90"};
    }
    void guiFlags() {
#ifndef SWITCHYARD_GUI_PATH
        QSKIP("the GUI is not built");
#else
        QFETCH(QStringList, args);
        QFETCH(QStringList, says);
        const QString shots = path("shots");
        QDir(shots).removeRecursively();
        ProcessOptions options;
        options.env["SWITCHYARD_CEILINGS_CACHE"] = path("ceilings");
        options.env["QT_QPA_PLATFORM"] = "offscreen";
        options.env["XDG_CONFIG_HOME"] = path("config");
        options.timeout_ms = 120000;
        const ProcessResult r = switchyard::test::run_process(
            SWITCHYARD_GUI_PATH, args + QStringList{"--screenshot", shots}, options);
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(r.finished, "still running");
        QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(err)));
        for (const auto& s : says)
            QVERIFY2(err.contains(s), qPrintable("'" + s + "' not in: " + err));
        QVERIFY2(leftBehind().isEmpty(), qPrintable(leftBehind().join(", ")));
#endif
    }
};

QTEST_GUILESS_MAIN(TstCliMistakes)
#include "tst_cli_mistakes.moc"
