// SPDX-License-Identifier: MIT
// The profiler screen: the results and compare models under
// QAbstractItemModelTester, a real profile against the misbehaving fixture kernels (wrong,
// crashing, hanging) and Cancel, two saved reports compared, the CSV of the filtered table,
// and saves that fail without destroying the previous file (the plots: tst_plots).
#include "controllers/profilecontroller.h"
#include "mainwindow.h"
#include "models/comparemodel.h"
#include "models/kernelmatrixmodel.h"
#include "models/resultscontext.h"
#include "models/resultsmodel.h"
#include "support/builtinwindow.h"
#include "support/findchild.h"
#include "support/profilerows.h"
#include "views/compareview.h"
#include "views/kernelmatrixview.h"
#include "views/profileview.h"

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/tuning/calibration.h>
#include <switchyard/tuning/tuning.h>

#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QUrl>

#include <csignal>
#include <set>
#include <sys/resource.h>

using namespace switchyard;
using switchyard::test::ceilingJson;
using switchyard::test::child;
using switchyard::test::makeRow;
using namespace switchyard::ui;

namespace {

const QString kProfilingFixtures = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/profiling");

// A context as Profiler::context() writes it, with one CPU device and its ceilings.
RunContext contextWith(nlohmann::json ceilings, const std::string& host = "bench-a") {
    return RunContext::from_json(
        {{"switchyard", {{"version", "0.1.0"}, {"git_hash", "abc"}}},
         {"host", {{"hostname", host}, {"os", "Linux"}}},
         {"cpu", {{"brand", "Test CPU 9000"}, {"physical_cores", 8}, {"logical_cpus", 16}}},
         {"devices", nlohmann::json::array({{{"id", "cpu"},
                                             {"kind", "cpu"},
                                             {"name", "Test CPU 9000"},
                                             {"arch", "x86-64-v3"},
                                             {"peak_bandwidth_gbs", 40.0},
                                             {"peak_gflops", 900.0},
                                             {"ceilings", std::move(ceilings)}}})},
         {"warnings", nlohmann::json::array()}});
}

nlohmann::json threeCeilings() {
    return nlohmann::json::array({ceilingJson("l3.triad.all", "bandwidth", "L3", 200),
                                  ceilingJson("dram.triad.all", "bandwidth", "DRAM", 50),
                                  ceilingJson("fma.fp32.all", "compute", "", 1000),
                                  ceilingJson("theoretical.fma.fp32", "compute", "", 1600, false)});
}

// A known report: rms_norm at two sizes, the reference and an AVX2 variant (4x faster).
Report knownReport() {
    Report rep;
    rep.context = contextWith(threeCeilings());
    rep.rows.push_back(makeRow("rms_norm", 1024, "generic", "reference", 4e-6));
    rep.rows.push_back(makeRow("rms_norm", 1024, "x86-64-v3", "avx2", 1e-6));
    rep.rows.push_back(makeRow("rms_norm", 1 << 20, "generic", "reference", 4e-3));
    rep.rows.push_back(makeRow("rms_norm", 1 << 20, "x86-64-v3", "avx2", 1e-3));
    rep.rows[3].ceiling_id = "dram.triad.all";
    rep.rows[3].level = "DRAM";
    rep.rows[3].ceiling_value = 50;
    rep.rows[3].ceiling_fraction = 0.78;
    rep.rows[3].intensity = 0.25;
    for (std::size_t i = 0; i < rep.rows.size(); ++i)
        rep.rows[i].spec.index = std::int64_t(i);
    return rep;
}

// Makes files larger than `bytes` impossible to write in this process (EFBIG), even for
// root: the way to make a save fail half-way on any machine.
struct FileSizeLimit {
    rlimit old{};
    explicit FileSizeLimit(rlim_t bytes) {
        std::signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &old);
        rlimit lim = old;
        lim.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &lim);
    }
    ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &old); }
};

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

using Window = switchyard::test::BuiltinWindow;

} // namespace

class TestProfilerGui : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void resultsModelAndProxy() {
        ResultsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ResultsFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester proxyTester(
            &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto rep = knownReport();
        model.setRows(rep.rows);
        QCOMPARE(model.rowCount(), 4);
        ProfileRow crashed = makeRow("flow_match_step", 1023, "generic", "crash", 0);
        crashed.status = RowStatus::Crashed;
        crashed.reason = "worker died: signal 11 (SIGSEGV: Segmentation fault)";
        model.addRow(crashed);
        ProfileRow hung = crashed;
        hung.spec.variant = "hang";
        hung.status = RowStatus::TimedOut;
        hung.reason = "no progress for 2 s";
        model.addRow(hung);
        ProfileRow wrong = makeRow("flow_match_step", 1023, "generic", "wrong", 1e-6);
        wrong.status = RowStatus::Fail;
        wrong.parity.pass = false;
        wrong.parity.max_abs_error = 2.5;
        wrong.warnings = {"noisy: 12% relative stddev"};
        model.addRow(wrong);
        QCOMPARE(model.rowCount(), 7);
        auto cell = [&](int row, int col) { return model.index(row, col).data().toString(); };
        QCOMPARE(cell(4, ResultsModel::StatusColumn), QStringLiteral("crashed (SIGSEGV)"));
        QCOMPARE(cell(5, ResultsModel::StatusColumn), QStringLiteral("timed out"));
        QVERIFY(cell(6, ResultsModel::StatusColumn).startsWith("FAIL"));
        QVERIFY(cell(6, ResultsModel::ParityColumn).startsWith("FAIL (abs 2.5"));
        QVERIFY(cell(0, ResultsModel::ParityColumn).startsWith("PASS"));
        QCOMPARE(cell(3, ResultsModel::CeilingColumn), QStringLiteral("78% DRAM"));
        QCOMPARE(cell(3, ResultsModel::VariantColumn), QStringLiteral("x86-64-v3/avx2"));
        QCOMPARE(cell(4, ResultsModel::MedianColumn), QStringLiteral("-"));
        QVERIFY(model.index(6, 0).data(Qt::ToolTipRole).toString().contains("noisy"));

        // The memory beside a DRAM row: its ceiling cell's tooltip says what the probe got
        // and how close the row came; a busy memory tints the cell.
        {
            ResultsModel memory;
            ProfileRow busy = rep.rows[3]; // 78 % of dram.triad.all (50 GB/s)
            busy.gbps = 39;
            busy.memory = {busy.ceiling_id, 30.0, 8};
            ProfileRow quiet = busy;
            quiet.memory.median_gbs = 45.0;
            memory.setRows({busy, quiet, rep.rows[3]});
            auto tip = [&](int row) {
                return memory.index(row, ResultsModel::CeilingColumn)
                    .data(Qt::ToolTipRole)
                    .toString();
            };
            QVERIFY2(tip(0).contains("the dram.triad.all probe moved 30.0 GB/s, 60 % of the "
                                     "ceiling (50.0), busy") &&
                         tip(0).contains("the row moved 130 % of that"),
                     qPrintable(tip(0)));
            QVERIFY2(tip(1).contains("90 % of the ceiling (50.0); the row moved 87 %"),
                     qPrintable(tip(1)));
            QVERIFY(!tip(2).contains("memory beside"));
            auto tinted = [&](int row) {
                return memory.index(row, ResultsModel::CeilingColumn)
                    .data(Qt::BackgroundRole)
                    .isValid();
            };
            QVERIFY(tinted(0));
            QVERIFY(!tinted(1) && !tinted(2));
            QVERIFY(rowSummary(busy).contains("memory beside the row"));
        }

        // A 1-thread row held on a CPU says which in its ceiling and clock tooltips and its
        // summary; an unpinned one says nothing of a CPU.
        {
            ResultsModel pinned;
            ProfileRow on3 = rep.rows[3];
            on3.pinned_cpu = 3;
            pinned.setRows({on3, rep.rows[3]});
            auto tip = [&](int row, int col) {
                return pinned.index(row, col).data(Qt::ToolTipRole).toString();
            };
            for (const int col : {int(ResultsModel::CeilingColumn), int(ResultsModel::ClockColumn)})
                QVERIFY2(tip(0, col).contains("ran on CPU 3, held there as the 1-thread ceilings "
                                              "were"),
                         qPrintable(tip(0, col)));
            QVERIFY(!tip(1, ResultsModel::CeilingColumn).contains("ran on CPU"));
            QVERIFY(rowSummary(on3).contains("ran on CPU 3"));
            QVERIFY(!rowSummary(rep.rows[3]).contains("ran on CPU"));
        }

        // Filtering by text and "problems only"; sorting sizes as numbers.
        proxy.setFilterFixedString("crashed");
        QCOMPARE(proxy.rowCount(), 1);
        proxy.setFilterFixedString(QString());
        proxy.setProblemsOnly(true);
        QCOMPARE(proxy.rowCount(), 3);
        QCOMPARE(proxy.visibleRows().size(), std::size_t(3));
        proxy.setProblemsOnly(false);
        proxy.sort(ResultsModel::SizeColumn, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, ResultsModel::SizeColumn).data().toString(),
                 QStringLiteral("1048576"));
        proxy.sort(ResultsModel::MedianColumn, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, ResultsModel::MedianColumn).data().toString(), QStringLiteral("-"));

        const QString csv = modelToCsv(&proxy);
        QCOMPARE(csv.count(QLatin1Char('\n')), 8); // header + 7 rows
        QVERIFY(csv.startsWith("op,size,device,backend,arch/variant,median"));
        QVERIFY(csv.contains("\"FAIL (abs 2.5, rel 2e-06)\""));
        model.clear();
        QCOMPARE(proxy.rowCount(), 0);
    }

    void compareModels() {
        Report a = knownReport(), b = knownReport();
        // B: the large AVX2 row twice as fast, the small one twice as slow, the references
        // unchanged; plus a row only in each.
        b.rows[3] = makeRow("rms_norm", 1 << 20, "x86-64-v3", "avx2", 0.5e-3);
        b.rows[1] = makeRow("rms_norm", 1024, "x86-64-v3", "avx2", 2e-6);
        a.rows.push_back(makeRow("gemm", 64, "generic", "reference", 1e-4));
        b.rows.push_back(makeRow("gemm", 128, "generic", "reference", 1e-3));
        CompareModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setReports(a, b);
        QCOMPARE(model.pairCount(), 4);
        QCOMPARE(model.rowCount(), 6);
        QMap<QString, QString> verdicts;
        for (int r = 0; r < model.rowCount(); ++r)
            verdicts[model.index(r, CompareModel::SizeColumn).data().toString() + "/" +
                     model.index(r, CompareModel::VariantColumn).data().toString()] =
                model.verdictAt(r);
        QCOMPARE(verdicts.value("1048576/x86-64-v3/avx2"), QStringLiteral("FASTER"));
        QCOMPARE(verdicts.value("1024/x86-64-v3/avx2"), QStringLiteral("SLOWER"));
        QCOMPARE(verdicts.value("1024/generic/reference"), QStringLiteral("SAME"));
        QCOMPARE(verdicts.value("64/generic/reference"), QStringLiteral("only in A"));
        QCOMPARE(verdicts.value("128/generic/reference"), QStringLiteral("only in B"));
        int faster = -1;
        for (int r = 0; r < model.rowCount(); ++r)
            if (model.verdictAt(r) == "FASTER")
                faster = r;
        QCOMPARE(model.index(faster, CompareModel::RatioColumn).data().toString(),
                 QStringLiteral("0.500×"));
        QVERIFY(model.index(faster, CompareModel::PValueColumn)
                    .data(CompareModel::SortRole)
                    .toDouble() < 0.05);
        QVERIFY(
            model.index(faster, CompareModel::VerdictColumn).data(Qt::BackgroundRole).isValid());

        // N reports as columns.
        Report c = knownReport();
        c.rows.resize(2);
        MultiCompareModel multi;
        QAbstractItemModelTester multiTester(
            &multi, QAbstractItemModelTester::FailureReportingMode::QtTest);
        multi.setReports({a, b, c}, {"a.json", "b.json", "c.json"});
        QCOMPARE(multi.reportCount(), 3);
        QCOMPARE(multi.columnCount(), MultiCompareModel::FixedColumnCount + 3);
        QCOMPARE(multi.rowCount(), 6); // the union of kernel cells and sizes
        QCOMPARE(
            multi.headerData(MultiCompareModel::FixedColumnCount + 2, Qt::Horizontal).toString(),
            QStringLiteral("c.json"));
        int big = -1;
        for (int r = 0; r < multi.rowCount(); ++r)
            if (multi.index(r, MultiCompareModel::SizeColumn).data().toString() == "1048576" &&
                multi.index(r, MultiCompareModel::VariantColumn).data().toString().contains("avx2"))
                big = r;
        QVERIFY(big >= 0);
        QCOMPARE(multi.verdictAt(big, 1), QStringLiteral("FASTER"));
        QCOMPARE(multi.verdictAt(big, 2), QString()); // c has no such row
        QCOMPARE(multi.index(big, MultiCompareModel::FixedColumnCount + 2).data().toString(),
                 QStringLiteral("—"));
        QVERIFY(multi.index(big, MultiCompareModel::FixedColumnCount + 1)
                    .data()
                    .toString()
                    .contains("(0.50×)"));
    }

    void ceilingsFromContext() {
        const auto ceilings = ceilingsOf(contextWith(threeCeilings()));
        QCOMPARE(ceilings.size(), std::size_t(4));
        QCOMPARE(ceilings[0].label(), QStringLiteral("cpu L3 200 GB/s (l3.triad.all)"));
        QVERIFY(ceilings[3].label().contains("theoretical"));
        // An older report without ceilings: the device's peak figures stand in.
        const auto peaks = ceilingsOf(contextWith(nlohmann::json::array()));
        QCOMPARE(peaks.size(), std::size_t(2));
        QCOMPARE(peaks[0].kind, QStringLiteral("bandwidth"));
        QCOMPARE(peaks[0].value, 40.0);
        QCOMPARE(peaks[1].kind, QStringLiteral("compute"));
        // Differences between two machines' ceilings.
        auto other = threeCeilings();
        other[1]["value"] = 80;
        // (the core's ceiling_differences, which the compare tab shows)
        const auto diffs = ceiling_differences(contextWith(threeCeilings()), contextWith(other));
        QCOMPARE(diffs.size(), std::size_t(1));
        QVERIFY(diffs[0].find("dram.triad.all") != std::string::npos);
        QVERIFY(ceiling_differences(contextWith(threeCeilings()), contextWith(threeCeilings()))
                    .empty());
        QVERIFY(contextHtml(contextWith(threeCeilings())).contains("Test CPU 9000"));
    }

    void csvOfTheFilteredTable() {
        ProfileController controller;
        ProfileView view(&controller);
        view.setReport(knownReport(), "known.json");
        child<QLineEdit>(&view, "resultsFilter")->setText("avx2");
        QCOMPARE(view.proxy()->rowCount(), 2);
        child<QLineEdit>(&view, "resultsFilter")->clear();
        // CSV of the table.
        const QString csv = m_dir.filePath("table.csv");
        QCOMPARE(view.exportCsv(csv), QString());
        QCOMPARE(readAll(csv).count('\n'), 5);
    }

    void settingsFromThePanel() {
        ProfileController controller;
        ProfileView view(&controller);
        view.setChoices({"rms_norm"}, {"cpu"}, true);
        child<QLineEdit>(&view, "sizesEdit")->setText("1024, 3x1023");
        child<QDoubleSpinBox>(&view, "budgetBox")->setValue(0.05);
        child<QDoubleSpinBox>(&view, "noiseBox")->setValue(1.0);
        child<QCheckBox>(&view, "coldCacheBox")->setChecked(true);
        auto* repeat = view.findChild<QSpinBox*>(QStringLiteral("repeat"));
        QVERIFY(repeat);
        QCOMPARE(view.settings().repeat, 1);
        repeat->setValue(5);
        const auto s = view.settings();
        QCOMPARE(s.repeat, 5);
        QCOMPARE(s.ops, std::vector<std::string>{"rms_norm"});
        QCOMPARE(s.devices, std::vector<std::string>{"cpu"});
        QVERIFY(s.all_variants);
        QVERIFY(s.cold);
        QCOMPARE(s.time_budget_s, 0.05);
        QCOMPARE(s.max_noise, 0.01);
        QCOMPARE(s.sizes.at("*"), (std::vector<std::string>{"1024", "3x1023"}));
        // A bad size is named before any worker starts.
        child<QLineEdit>(&view, "sizesEdit")->setText("12x");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, view.settings());
        QVERIFY(!view.run());
        QVERIFY(child<QPlainTextEdit>(&view, "profileLog")->toPlainText().contains("12x"));
        QVERIFY(!view.isRunning());
        // The core's one grammar (as --sizes): a misspelt op gets the close one, and a size
        // larger than this machine's memory is refused here, not in a worker.
        child<QLineEdit>(&view, "sizesEdit")->setText("rms_nrom:1024");
        try {
            (void)view.settings();
            QFAIL("accepted an unknown op");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(std::string(e.what()).find("did you mean 'rms_norm'") != std::string::npos,
                     e.what());
        }
        child<QLineEdit>(&view, "sizesEdit")->setText("4000000000x4000000000");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, view.settings());
    }

    void profileFixtureKernels() {
        if (!QFile::exists(kProfilingFixtures + "/profiling.plugin.json"))
            QSKIP("the profiling fixture plugin is not built");
        ProfileController controller;
        ProfileView view(&controller);
        view.controller()->setWorkerExecutable(QStringLiteral(SWITCHYARD_CLI_PATH));
        view.controller()->setWorkerEnvironment(
            {{"SWITCHYARD_PLUGIN_PATH", kProfilingFixtures.toStdString()}});
        view.show();
        view.setChoices({"flow_match_step"}, {"cpu"}, true);
        child<QLineEdit>(&view, "sizesEdit")->setText("1023");
        child<QDoubleSpinBox>(&view, "budgetBox")->setValue(0.02);
        // The hang costs this long. 2 s was too little for a healthy row on a loaded 2-core
        // machine running two suites at once (a fresh worker's first row timed out), and
        // once 5 s was (x86-64-v3/threaded, beside tst_profiler under ctest -j2).
        child<QDoubleSpinBox>(&view, "timeoutBox")->setValue(8);
        QSignalSpy inserted(view.model(), &QAbstractItemModel::rowsInserted);
        QSignalSpy finished(&view, &ProfileView::runFinished);
        QVERIFY(view.run());
        QVERIFY(view.isRunning());
        QVERIFY(!child<QPushButton>(&view, "runButton")->isEnabled());
        QVERIFY(child<QPushButton>(&view, "cancelButton")->isEnabled());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.at(0).at(0).toBool(), false); // not cancelled
        QMap<QString, int> byVariant;
        for (int r = 0; r < view.model()->rowCount(); ++r)
            byVariant[QString::fromStdString(view.model()->row(r).spec.variant)] = r;
        // Rows streamed in one by one as they finished.
        QCOMPARE(inserted.count(), view.model()->rowCount());
        auto status = [&](const char* v) {
            return view.model()
                ->index(byVariant.value(v, -1), ResultsModel::StatusColumn)
                .data()
                .toString();
        };
        auto parity = [&](const char* v) {
            return view.model()
                ->index(byVariant.value(v, -1), ResultsModel::ParityColumn)
                .data()
                .toString();
        };
        QVERIFY(byVariant.contains("crash") && byVariant.contains("hang") &&
                byVariant.contains("wrong") && byVariant.contains("reference"));
        QCOMPARE(status("crash"), QStringLiteral("crashed (SIGSEGV)"));
        QCOMPARE(status("hang"), QStringLiteral("timed out"));
        QVERIFY(status("wrong").startsWith("FAIL"));
        QVERIFY(parity("wrong").startsWith("FAIL"));
        // The run went on after the crash and the hang: the built-in rows passed.
        for (const char* v : {"reference", "default", "threaded"})
            if (byVariant.contains(v)) {
                QVERIFY2(status(v).startsWith("ok"),
                         qPrintable(
                             QString::fromLatin1(v) + ": " + status(v) + " (" +
                             QString::fromStdString(view.model()->row(byVariant.value(v)).reason) +
                             ")"));
                QVERIFY2(parity(v).startsWith("PASS"),
                         qPrintable(QString::fromLatin1(v) + ": " + parity(v)));
            }
        // The plots drew the streamed rows: one time series per measured variant.
        QTRY_VERIFY(child<QCustomPlot>(&view, "plots.time")->graphCount() >= 2);
        QCOMPARE(child<QProgressBar>(&view, "runProgress")->value(), view.model()->rowCount());
        QCOMPARE(child<QProgressBar>(&view, "runProgress")->maximum(), view.model()->rowCount());
        const QString log = child<QPlainTextEdit>(&view, "profileLog")->toPlainText();
        QVERIFY(log.contains("crashed (SIGSEGV)"));
        QVERIFY(log.contains("timed out"));
        QVERIFY(!view.isRunning());
        QVERIFY(child<QPushButton>(&view, "runButton")->isEnabled());
        // The report to save carries the context.
        const Report rep = view.report();
        QCOMPARE(int(rep.rows.size()), view.model()->rowCount());
        QVERIFY(!rep.context.devices.empty());
        QVERIFY(!child<QTextBrowser>(&view, "runContext")->toPlainText().isEmpty());
    }

    void cancelStopsTheRun() {
        if (!QFile::exists(kProfilingFixtures + "/profiling.plugin.json"))
            QSKIP("the profiling fixture plugin is not built");
        ProfileController controller;
        ProfileView view(&controller);
        view.controller()->setWorkerExecutable(QStringLiteral(SWITCHYARD_CLI_PATH));
        view.controller()->setWorkerEnvironment(
            {{"SWITCHYARD_PLUGIN_PATH", kProfilingFixtures.toStdString()}});
        // Every variant, long budgets and the hang's long timeout: minutes if not cancelled.
        view.setChoices({"flow_match_step"}, {"cpu"}, true);
        child<QLineEdit>(&view, "sizesEdit")->setText("1023, 4095");
        child<QDoubleSpinBox>(&view, "budgetBox")->setValue(3);
        child<QDoubleSpinBox>(&view, "noiseBox")->setValue(0);
        child<QDoubleSpinBox>(&view, "timeoutBox")->setValue(60);
        // One stretch a row: the rows of a sliced run arrive with its last pass.
        child<QSpinBox>(&view, "slicesBox")->setValue(1);
        QSignalSpy finished(&view, &ProfileView::runFinished);
        // Before the first row the progress bar names the preparation step under way.
        QStringList shown;
        QTimer poll;
        connect(&poll, &QTimer::timeout, &view, [&] {
            const QString f = child<QProgressBar>(&view, "runProgress")->format();
            if (shown.isEmpty() || shown.back() != f)
                shown << f;
        });
        poll.start(10);
        QVERIFY(view.run());
        // The worker measures the ceilings first: ~30 s on a quiet 2-core machine, 90 s loaded.
        QTRY_VERIFY_WITH_TIMEOUT(view.model()->rowCount() >= 1, 240000);
        poll.stop();
        QVERIFY2(!shown.filter(QRegularExpression("^preparing: CPU ceilings, ")).isEmpty(),
                 qPrintable(shown.join('\n')));
        const int kept = view.model()->rowCount();
        QElapsedTimer clock;
        clock.start();
        child<QPushButton>(&view, "cancelButton")->click();
        QVERIFY(finished.wait(5000));
        const auto ms = clock.elapsed();
        qInfo("cancel took %lld ms", qlonglong(ms));
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QVERIFY(!view.isRunning());
        QVERIFY(view.model()->rowCount() >= kept); // finished rows are kept
        QVERIFY(view.model()->rowCount() < child<QProgressBar>(&view, "runProgress")->maximum());
        QVERIFY(child<QPlainTextEdit>(&view, "profileLog")->toPlainText().contains("Cancelled"));
    }

    void compareTwoSavedReports() {
        Report a = knownReport(), b = knownReport();
        a.context.fingerprint.machine_id = "5f0c1e2a9b3d4c7e";
        b.rows[3] = makeRow("rms_norm", 1 << 20, "x86-64-v3", "avx2", 0.5e-3);
        auto other = threeCeilings();
        other[1]["value"] = 80; // B's machine has faster DRAM
        b.context = contextWith(other, "bench-b");
        const QString pa = m_dir.filePath("a.json"), pb = m_dir.filePath("b.json");
        a.save(pa.toStdString());
        b.save(pb.toStdString());
        Window w;
        QCOMPARE(w.window.compareReports({pa, pb}), QString());
        QCOMPARE(child<QTabWidget>(&w.window, "mainTabs")->currentIndex(),
                 int(MainWindow::CompareTab));
        auto* model = child<ui::CompareView>(&w.window, "compareView")->pairModel();
        QCOMPARE(model->pairCount(), 4);
        QStringList verdicts;
        for (int r = 0; r < model->rowCount(); ++r)
            verdicts << model->verdictAt(r);
        QCOMPARE(verdicts.count("FASTER"), 1);
        QCOMPARE(verdicts.count("SAME"), 3);
        QVERIFY(!child<QLabel>(child<ui::CompareView>(&w.window, "compareView"), "compareWarning")
                     ->isHidden());
        QVERIFY(child<QLabel>(child<ui::CompareView>(&w.window, "compareView"), "compareWarning")
                    ->text()
                    .contains("dram.triad.all"));
        QVERIFY(child<QLabel>(child<ui::CompareView>(&w.window, "compareView"), "compareSummary")
                    ->text()
                    .contains("bench-b"));
        QCOMPARE(child<ui::CompareView>(&w.window, "compareView")->multiModel()->reportCount(), 2);
        // The verdict rule, and that this machine has no calibration yet (and how to make one).
        const auto* rule =
            child<QLabel>(child<ui::CompareView>(&w.window, "compareView"), "compareRule");
        QVERIFY2(rule->text().contains("false-discovery rate") &&
                     rule->text().contains("compare --calibrate"),
                 qPrintable(rule->text()));
        // A calibration kept for the reports' machine is shown beside the rule.
        qputenv("XDG_DATA_HOME", m_dir.filePath("xdg-calibration").toLocal8Bit());
        {
            Calibration c;
            c.machine_id = a.context.fingerprint.machine_id;
            c.date = "2026-12-06T09:00:00Z";
            c.reports = 3;
            c.report_pairs = 3;
            c.overall.judged = 72;
            c.save(default_calibration_file(c.machine_id));
        }
        QCOMPARE(w.window.compareReports({pa, pb}), QString());
        QVERIFY2(
            rule->text().contains("Measured on this machine (compare --calibrate, 2026-12-06)") &&
                rule->text().contains("0 of 72 rows of identical code"),
            qPrintable(rule->text()));
        qunsetenv("XDG_DATA_HOME");
        // A report that cannot be read is named with the reason.
        const QString bad = m_dir.filePath("bad.json");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"switchyard.report\", \"rows\": [");
        f.close();
        const QString error = w.window.compareReports({pa, bad});
        QVERIFY(error.contains("bad.json"));
        QVERIFY(w.window.statusText().contains("bad.json"));
        QVERIFY(w.window.recentReports().contains(QFileInfo(pa).absoluteFilePath()));
    }

    void dropOpensAndCompares() {
        const QString pa = m_dir.filePath("drop-a.json"), pb = m_dir.filePath("drop-b.json");
        knownReport().save(pa.toStdString());
        knownReport().save(pb.toStdString());
        Window w;
        auto drop = [&](const QStringList& paths) {
            QMimeData mime;
            QList<QUrl> urls;
            for (const auto& p : paths)
                urls << QUrl::fromLocalFile(p);
            mime.setUrls(urls);
            QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                                  Qt::NoModifier);
            QApplication::sendEvent(&w.window, &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent event(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                             Qt::NoModifier);
            QApplication::sendEvent(&w.window, &event);
            QVERIFY(event.isAccepted());
        };
        drop({pa}); // one file: opened in the profiler
        QCOMPARE(child<QTabWidget>(&w.window, "mainTabs")->currentIndex(),
                 int(MainWindow::ProfilerTab));
        QCOMPARE(child<ui::ProfileView>(&w.window, "profileView")->model()->rowCount(), 4);
        drop({pa, pb}); // several: compared
        QCOMPARE(child<QTabWidget>(&w.window, "mainTabs")->currentIndex(),
                 int(MainWindow::CompareTab));
        QCOMPARE(child<ui::CompareView>(&w.window, "compareView")->pairModel()->pairCount(), 4);
    }

    void openReportShowsItsMachine() {
        const QString path = m_dir.filePath("other-machine.json");
        knownReport().save(path.toStdString());
        Window w;
        QCOMPARE(w.window.openReport(path), QString());
        auto* view = child<ui::ProfileView>(&w.window, "profileView");
        QCOMPARE(view->model()->rowCount(), 4);
        const QString ctx = child<QTextBrowser>(view, "runContext")->toPlainText();
        for (const char* s :
             {"Test CPU 9000", "bench-a", "l3.triad.all", "dram.triad.all", "0.1.0"})
            QVERIFY2(ctx.contains(s), s);
        QCOMPARE(w.window.recentReports().value(0), QFileInfo(path).absoluteFilePath());
        QVERIFY(!w.window.openReport(m_dir.filePath("missing.json")).isEmpty());
    }

    void failedSaveKeepsThePreviousFile() {
        const QString source = m_dir.filePath("source.json");
        knownReport().save(source.toStdString());
        Window w;
        QCOMPARE(w.window.openReport(source), QString());
        const QString target = m_dir.filePath("saved.json");
        QCOMPARE(w.window.saveReport(target), QString()); // a good save
        const QByteArray before = readAll(target);
        QCOMPARE(Report::load(target.toStdString()).rows.size(), std::size_t(4));
        // Now every write stops at 64 bytes: the save fails half-way.
        QString error;
        {
            FileSizeLimit limit(64);
            error = w.window.saveReport(target);
        }
        QVERIFY(!error.isEmpty());
        QVERIFY(error.contains("saved.json"));
        QVERIFY(w.window.statusText().contains("Could not save"));
        QCOMPARE(readAll(target), before); // the previous file, byte for byte
        int files = 0;                     // no temporary left behind
        for (const auto& name : QDir(m_dir.path()).entryList(QDir::Files | QDir::Hidden))
            files += name.contains("saved.json");
        QCOMPARE(files, 1);
    }

    void settingsAreWrittenAtomically() {
        // QSettings with atomic sync required writes a temporary file and renames it over
        // the old one (QSaveFile without direct-write fallback): a failed write leaves the
        // previous settings whole.
        QTemporaryDir dir;
        const QString file = dir.filePath("test.ini");
        {
            QSettings s(file, QSettings::IniFormat);
            s.setAtomicSyncRequired(true);
            s.setValue("reports/recent", QStringList{"/a.json", "/b.json"});
            s.sync();
            QCOMPARE(s.status(), QSettings::NoError);
        }
        const QByteArray before = readAll(file);
        QVERIFY(before.contains("a.json"));
        {
            FileSizeLimit limit(before.size() + 16);
            QSettings s(file, QSettings::IniFormat);
            s.setAtomicSyncRequired(true);
            s.setValue("big", QString(4096, QLatin1Char('x')));
            s.sync();
            QCOMPARE(s.status(), QSettings::AccessError);
        }
        QCOMPARE(readAll(file), before);
        QSettings again(file, QSettings::IniFormat);
        QCOMPARE(again.value("reports/recent").toStringList(), (QStringList{"/a.json", "/b.json"}));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }

    // Profile ▸ Tune dispatch: a run of every variant (3 runs a row, the chain's own picks),
    // then the tuning it supports in the user's folder and its summary; Follow tuning files
    // is what the panel's runs ask for; a tuned row is marked in the table.
    void tuneDispatchWritesTheTuning() {
        ResultsModel marks;
        ProfileRow tuned;
        tuned.spec.op = "flow_match_step";
        tuned.spec.arch = "generic";
        tuned.spec.variant = "tunable";
        tuned.spec.tuned_from = "x86-64-v2/tunable";
        marks.addRow(tuned);
        const auto cell = marks.index(0, ResultsModel::VariantColumn);
        QCOMPARE(cell.data().toString(), QStringLiteral("generic/tunable (tuned)"));
        QVERIFY(cell.data(Qt::ToolTipRole).toString().contains("picks x86-64-v2/tunable"));

        const QString xdg = m_dir.filePath("tune-xdg");
        qputenv("XDG_DATA_HOME", xdg.toLocal8Bit());
        Window w;
        w.window.show();
        auto* view = child<ui::ProfileView>(&w.window, "profileView");
        view->controller()->setWorkerExecutable(QStringLiteral(SWITCHYARD_CLI_PATH));
        view->controller()->setWorkerEnvironment(
            {{"SWITCHYARD_PLUGIN_PATH", ""},
             {"XDG_DATA_HOME", xdg.toStdString()},
             {"SWITCHYARD_CEILINGS_CACHE", m_dir.filePath("tune-ceilings").toStdString()}});
        view->setChoices({"rms_norm"}, {"cpu"}, false);
        child<QLineEdit>(view, "sizesEdit")->setText("64x1024");
        child<QDoubleSpinBox>(view, "budgetBox")->setValue(0.02);
        auto* follow = child<QAction>(&w.window, "followTuningAction");
        QVERIFY(follow->isChecked());
        QVERIFY(view->settings().use_tuning);
        follow->trigger();
        QVERIFY(!view->settings().use_tuning);
        QVERIFY(!QSettings().value(QLatin1String(ui::kFollowTuningKey)).toBool());
        follow->trigger();
        QVERIFY(view->settings().use_tuning);

        QSignalSpy written(&w.window, &MainWindow::tuningWritten);
        child<QAction>(&w.window, "tuneDispatchAction")->trigger();
        QVERIFY(view->isRunning());
        QVERIFY(written.wait(300000));
        const QString summary = written.at(0).at(0).toString();
        const QDir folder(xdg + "/switchyard/tuning");
        const auto files = folder.entryList({QStringLiteral("*.tuning")});
        QVERIFY2(files.size() == 1, qPrintable(summary));
        const auto tuning = Tuning::load(folder.filePath(files[0]).toStdString());
        QVERIFY2(summary.startsWith(QString::number(tuning.entries.size()) + " tuned entr") &&
                     summary.contains(folder.filePath(files[0])),
                 qPrintable(summary));
        QCOMPARE(folder.entryList({QStringLiteral("*.report.json")}).size(), 1);
        const auto settings = view->report().context.settings;
        QVERIFY(settings.all_variants);
        QCOMPARE(settings.repeat, std::int64_t(3));
        QVERIFY(!settings.use_tuning);
        QCOMPARE(w.window.tuningSummary(), summary);
        QTRY_VERIFY(child<QMessageBox>(&w.window, "tuningSummaryBox")->isVisible());
        // The catalog is read again with the new file (off the GUI thread): every entry
        // applies here, and the kernel matrix marks each one's chosen cell ⚙.
        QTRY_VERIFY_WITH_TIMEOUT(w.window.catalog() &&
                                     w.window.catalog()->tunings.size() == tuning.entries.size(),
                                 60000);
        for (const auto& standing : w.window.catalog()->tunings)
            QVERIFY2(standing.applies, standing.ignored.empty() ? "" : standing.ignored[0].c_str());
        const auto* matrix = child<ui::KernelMatrixView>(&w.window, "matrixView")->model();
        std::size_t marked = 0;
        for (int r = 0; r < matrix->rowCount(); ++r)
            for (int c = 0; c < matrix->columnCount(); ++c)
                marked += matrix->index(r, c).data().toString().contains(QStringLiteral("⚙"));
        std::set<std::string> chosen; // two ranges may choose one cell
        for (const auto& e : tuning.entries)
            chosen.insert(e.op + " " + e.chosen.cell);
        QCOMPARE(marked, chosen.size());
        qunsetenv("XDG_DATA_HOME");
    }

    void matrixContextMenuPrefillsTheRun() {
        Window w;
        w.window.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.window.catalog() != nullptr, 30000);
        auto* matrix = child<ui::KernelMatrixView>(&w.window, "matrixView");
        int row = -1;
        for (int r = 0; r < 64 && row < 0; ++r)
            if (matrix->model()->opAt(r) == "rms_norm")
                row = r;
        QVERIFY(row >= 0);
        int column = -1;
        for (int c = 0; c < matrix->model()->columnCount() && column < 0; ++c)
            if (matrix->model()
                    ->index(row, c)
                    .data(KernelMatrixModel::KeyRole)
                    .toString()
                    .contains(", cpu, "))
                column = c;
        QVERIFY(column >= 0);
        std::unique_ptr<QMenu> menu(matrix->profileMenu(row, column));
        QCOMPARE(menu->actions().size(), 4);
        QVERIFY(menu->actions()[1]->text().contains("all variants"));
        menu->actions()[1]->trigger();
        QCOMPARE(child<QTabWidget>(&w.window, "mainTabs")->currentIndex(),
                 int(MainWindow::ProfilerTab));
        const auto s = child<ui::ProfileView>(&w.window, "profileView")->settings();
        QCOMPARE(s.ops, std::vector<std::string>{"rms_norm"});
        QCOMPARE(s.devices, std::vector<std::string>{"cpu"});
        QVERIFY(s.all_variants);
        // An op's header: every device.
        std::unique_ptr<QMenu> header(matrix->profileMenu(row, -1));
        QCOMPARE(header->actions().size(), 2);
        header->actions()[0]->trigger();
        QVERIFY(child<ui::ProfileView>(&w.window, "profileView")->settings().devices.empty());
        QVERIFY(!child<ui::ProfileView>(&w.window, "profileView")->settings().all_variants);
    }
};

QTEST_MAIN(TestProfilerGui)
#include "tst_profiler_gui.moc"
