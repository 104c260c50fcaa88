// SPDX-License-Identifier: MIT
// The fleet table: a folder of synthetic reports (several runs per row, so the
// verdicts are real) read off the GUI thread into the Fleet tab; its columns and lines;
// every cell's verdict equal to MultiComparison's (the CLI's); the outlier machine's cells
// marked; a broken file listed with its error; another baseline, other verdicts; the side
// panel's context and fingerprint differences; Copy as text; a folder dropped on the window;
// the Tuning page (the tuning per machine class, the regret map's table and text, Write
// tunings through the loader).
#include "controllers/fleetloader.h"
#include "mainwindow.h"
#include "models/comparemodel.h"
#include "models/regretmapmodel.h"
#include "support/builtinwindow.h"
#include "support/findchild.h"
#include "views/fleetview.h"

#include "support/syntheticfleet.h"
#include "support/tuningreports.h"

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/report/compare.h>
#include <switchyard/runtime/runtime.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QUrl>

#include <filesystem>

using namespace switchyard;
using switchyard::test::child;
using namespace switchyard::ui;

namespace {

constexpr int kMachines = 4;
constexpr int kRows = 8;
constexpr int kOutlier = 2; // 1.6x slower than the others, another CPU

test::FleetSpec spec() {
    test::FleetSpec s;
    s.machines = kMachines;
    s.rows = kRows;
    s.runNoise = 0.003; // identical machines: SAME, well inside the 2 % threshold
    s.factors = {1.0, 1.0, 1.6, 1.0};
    return s;
}

using Window = switchyard::test::BuiltinWindow;

// The reports as the CLI's `compare FOLDER` reads them (its files, in its order).
std::vector<Report> loadLikeTheCli(const QString& folder, std::vector<std::string>& names) {
    std::vector<Report> out;
    names.clear();
    for (const auto& p : FleetLoader::reportFiles(folder.toStdString())) {
        try {
            out.push_back(Report::load(p));
            names.push_back(p);
        } catch (const ReportError&) {
        }
    }
    return out;
}

void checkVerdicts(const MultiCompareModel& model, const MultiComparison& expected) {
    QCOMPARE(model.rowCount(), int(expected.lines().size()));
    for (int l = 0; l < model.rowCount(); ++l) {
        const auto& line = expected.lines()[std::size_t(l)];
        for (int r = 0; r < model.reportCount(); ++r) {
            const auto& cell = line.cells[std::size_t(r)];
            const QString want =
                cell.judged ? QString::fromLatin1(to_string(cell.result.verdict)) : QString();
            const QModelIndex i = model.index(l, MultiCompareModel::columnOf(r));
            QCOMPARE(model.verdictAt(l, r), want);
            QCOMPARE(i.data(MultiCompareModel::VerdictRole).toString(), want);
            QCOMPARE(i.data(MultiCompareModel::OutlierRole).toBool(), cell.outlier);
        }
    }
}

} // namespace

class TestFleetGui : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_folder;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        m_folder = m_dir.filePath(QStringLiteral("fleet"));
        QVERIFY(QDir().mkpath(m_folder));
        test::writeFleet(m_folder.toStdString(), spec());
        // A broken report, a file the rule leaves out, and a folder named like a report.
        QFile broken(m_folder + QStringLiteral("/report-node-99.json"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"format\": \"switchyard.report\", \"rows\": [");
        broken.close();
        QFile other(m_folder + QStringLiteral("/notes.json"));
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write("{}");
        other.close();
        QVERIFY(QDir().mkpath(m_folder + QStringLiteral("/report-dir.json")));
    }

    // The files of `compare FOLDER`, sorted; the broken one listed with its error.
    void loaderReadsTheCliFiles() {
        const auto files = FleetLoader::reportFiles(m_folder.toStdString());
        QCOMPARE(files.size(), std::size_t(kMachines + 1));
        QVERIFY(std::is_sorted(files.begin(), files.end()));
        FleetLoader loader;
        QSignalSpy spy(&loader, &FleetLoader::fleetAvailable);
        loader.open(m_folder);
        QVERIFY(loader.isBusy());
        QVERIFY(spy.wait(20000));
        QVERIFY(!loader.isBusy());
        const auto fleet = spy.at(0).at(0).value<FleetPtr>();
        QVERIFY(fleet);
        QVERIFY(fleet->error.isEmpty());
        QCOMPARE(int(fleet->reports.size()), kMachines);
        QCOMPARE(fleet->hosts, QStringList({QStringLiteral("node-00"), QStringLiteral("node-01"),
                                            QStringLiteral("node-02"), QStringLiteral("node-03")}));
        QCOMPARE(fleet->files.front(), QStringLiteral("report-node-00.json"));
        QCOMPARE(int(fleet->issues.size()), 1);
        QCOMPARE(fleet->issues[0].file, QStringLiteral("report-node-99.json"));
        QVERIFY(fleet->issues[0].fatal);
        QVERIFY2(!fleet->issues[0].error.isEmpty(), "the error is kept");
        // A folder that does not exist: an error, not a crash.
        const Fleet none = FleetLoader::load(m_dir.filePath(QStringLiteral("missing")));
        QVERIFY(!none.error.isEmpty());
        QVERIFY(none.reports.empty());
    }

    // Columns, lines, the CLI's verdicts in every cell, the outlier, the baseline.
    void fleetTable() {
        FleetView view;
        QAbstractItemModelTester tester(view.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        Fleet fleet = FleetLoader::load(m_folder);
        QSignalSpy shown(&view, &FleetView::fleetShown);
        view.setFleet(fleet);
        QCOMPARE(shown.count(), 1);
        auto* model = view.model();
        QCOMPARE(model->reportCount(), kMachines);
        QCOMPARE(model->columnCount(), MultiCompareModel::FixedColumnCount + kMachines);
        QCOMPARE(model->rowCount(), kRows);
        QCOMPARE(model->headerData(MultiCompareModel::columnOf(0), Qt::Horizontal).toString(),
                 QStringLiteral("node-00 (baseline)"));
        QCOMPARE(model->headerData(MultiCompareModel::columnOf(1), Qt::Horizontal).toString(),
                 QStringLiteral("node-01"));
        QVERIFY(model->headerData(MultiCompareModel::columnOf(1), Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("report-node-01.json")));
        // The broken file is listed, with its error.
        QVERIFY(!child<QPlainTextEdit>(&view, "fleetIssues")->isHidden());
        QVERIFY(child<QPlainTextEdit>(&view, "fleetIssues")
                    ->toPlainText()
                    .contains(QStringLiteral("report-node-99.json")));
        QVERIFY(child<QLabel>(&view, "fleetTitle")
                    ->text()
                    .contains(QStringLiteral("could not be read")));

        std::vector<std::string> names;
        const auto reports = loadLikeTheCli(m_folder, names);
        // A fleet's comparison judges its machines (the environment): judge_environment.
        CompareOptions fleetOptions;
        fleetOptions.judge_environment = true;
        const auto expected = MultiComparison::of(reports, names, fleetOptions, 0);
        checkVerdicts(*model, expected);
        // Real verdicts: the outlier machine is SLOWER everywhere, the others SAME.
        for (int l = 0; l < kRows; ++l) {
            QCOMPARE(model->verdictAt(l, kOutlier), QStringLiteral("SLOWER"));
            QVERIFY2(model->verdictAt(l, 1) == QStringLiteral("SAME"),
                     qPrintable(model->index(l, MultiCompareModel::columnOf(1))
                                    .data(Qt::ToolTipRole)
                                    .toString()));
            const QModelIndex o = model->index(l, MultiCompareModel::columnOf(kOutlier));
            QVERIFY(o.data(MultiCompareModel::OutlierRole).toBool());
            QVERIFY(o.data(Qt::FontRole).value<QFont>().bold());
            QVERIFY(o.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Outlier")));
            QVERIFY(!model->index(l, MultiCompareModel::columnOf(1))
                         .data(MultiCompareModel::OutlierRole)
                         .toBool());
        }
        QVERIFY(child<QLabel>(&view, "fleetSummary")
                    ->text()
                    .contains(QStringLiteral("%1 SLOWER").arg(kRows)));
        QVERIFY(child<QLabel>(&view, "fleetSummary")
                    ->text()
                    .contains(QString::fromStdString(fleetOptions.describe()).toHtmlEscaped()));
        // The side panel: the outlier's context and its fingerprint differences.
        view.showMachine(kOutlier);
        const QString details = child<QTextBrowser>(&view, "fleetDetails")->toPlainText();
        QVERIFY2(details.contains(QStringLiteral("Slow CPU 3000")), qPrintable(details));
        QVERIFY(details.contains(QStringLiteral("Not the same machine")));
        QVERIFY(details.contains(QStringLiteral("machine.cpu.microcode")));
        QVERIFY(details.contains(QStringLiteral("SapphireRapids")));
        view.showMachine(1);
        QVERIFY(child<QTextBrowser>(&view, "fleetDetails")
                    ->toPlainText()
                    .contains(QStringLiteral("fingerprints match")));
        // Copy as text: the core's text, naming the files as the CLI names them.
        std::vector<std::string> files;
        for (const auto& n : names)
            files.push_back(std::filesystem::path(n).filename().string());
        view.copyAsText();
        QCOMPARE(
            QApplication::clipboard()->text(),
            QString::fromStdString(MultiComparison::of(reports, files, fleetOptions, 0).to_text()));

        // Another baseline (the combo box): every verdict follows.
        QCOMPARE(child<QComboBox>(&view, "baselineBox")->count(), kMachines);
        child<QComboBox>(&view, "baselineBox")->setCurrentIndex(kOutlier);
        emit child<QComboBox>(&view, "baselineBox")->activated(kOutlier);
        QCOMPARE(model->baseline(), kOutlier);
        QCOMPARE(shown.count(), 2);
        QCOMPARE(
            model->headerData(MultiCompareModel::columnOf(kOutlier), Qt::Horizontal).toString(),
            QStringLiteral("node-02 (baseline)"));
        checkVerdicts(*model, MultiComparison::of(reports, names, fleetOptions, kOutlier));
        for (int l = 0; l < kRows; ++l) {
            QCOMPARE(model->verdictAt(l, 0), QStringLiteral("FASTER"));
            QCOMPARE(model->verdictAt(l, kOutlier), QString());
            // Outliers do not depend on the baseline.
            QVERIFY(model->index(l, MultiCompareModel::columnOf(kOutlier))
                        .data(MultiCompareModel::OutlierRole)
                        .toBool());
        }
        QVERIFY(child<QLabel>(&view, "fleetSummary")->text().contains(QStringLiteral("node-02")));
        // The sort proxy sorts a machine's column by its medians.
        child<QTableView>(&view, "fleetTable")
            ->sortByColumn(MultiCompareModel::columnOf(1), Qt::DescendingOrder);
        const double first = view.proxy()
                                 ->index(0, MultiCompareModel::columnOf(1))
                                 .data(MultiCompareModel::SortRole)
                                 .toDouble();
        const double last = view.proxy()
                                ->index(kRows - 1, MultiCompareModel::columnOf(1))
                                .data(MultiCompareModel::SortRole)
                                .toDouble();
        QVERIFY(first > last);
    }

    // A folder with one readable report: listed, no table, no crash.
    void tooFewReports() {
        QTemporaryDir dir;
        auto s = spec();
        s.machines = 1;
        test::writeFleet(dir.path().toStdString(), s);
        FleetView view;
        Fleet fleet = FleetLoader::load(dir.path());
        view.setFleet(fleet);
        QCOMPARE(view.model()->rowCount(), 0);
        QVERIFY(!child<QPlainTextEdit>(&view, "fleetIssues")->isHidden());
        QVERIFY(child<QPlainTextEdit>(&view, "fleetIssues")
                    ->toPlainText()
                    .contains(QStringLiteral("two or more")));
        QVERIFY(view.comparisonText().isEmpty());
    }

    // The Tuning page: the core's fleet tuning of the folder's reports, the regret map as a
    // table (sortable) and as the CLI's text, Write tunings through the loader (off the GUI
    // thread), a folder it cannot write, and a fleet with nothing to tune.
    void tuningPage() {
        using switchyard::testing::plain_report;
        using switchyard::testing::tuning_report;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string f = dir.path().toStdString();
        const std::string a = "0123456789abcdef";
        tuning_report(a, {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 1.0e-3}}, "x86-64-v3/threaded", "abc",
                      "n1")
            .save(f + "/report-n1-9_0.json");
        tuning_report(a, {{4, 2.7e-3, 1.5e-3}, {8, 2.7e-3, 2.7e-3}}, "x86-64-v3/threaded", "abc",
                      "n2")
            .save(f + "/report-n2-9_1.json");
        FleetLoader loader;
        FleetView view;
        view.setLoader(&loader);
        QAbstractItemModelTester tester(view.regretModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        Fleet fleet = FleetLoader::load(dir.path());
        QCOMPARE(fleet.tuning.classes.size(), std::size_t(1));
        const switchyard::fleet::FleetTuning expected = fleet.tuning; // setFleet takes it
        view.setFleet(fleet);
        view.showPage(FleetView::TuningPage);
        QCOMPARE(child<QTabWidget>(&view, "fleetPages")->currentIndex(),
                 int(FleetView::TuningPage));

        const auto* model = view.regretModel();
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(model->columnCount(), int(RegretMapModel::ColumnCount));
        auto cell = [&](int row, int column) {
            return model->index(row, column).data().toString();
        };
        QCOMPARE(cell(0, RegretMapModel::MachineColumn), QString::fromStdString(a));
        QCOMPARE(cell(0, RegretMapModel::SizeColumn), QStringLiteral("4x1024"));
        QCOMPARE(cell(0, RegretMapModel::PickColumn), QStringLiteral("x86-64-v4/default"));
        QCOMPARE(cell(0, RegretMapModel::FasterColumn), QStringLiteral("x86-64-v3/threaded"));
        QCOMPARE(cell(0, RegretMapModel::MinSpeedupColumn), QStringLiteral("1.80x"));
        QCOMPARE(cell(0, RegretMapModel::MedianSpeedupColumn), QStringLiteral("2.25x"));
        QCOMPARE(cell(0, RegretMapModel::NodesColumn), QStringLiteral("2 of 2"));
        QCOMPARE(cell(0, RegretMapModel::TunedColumn), QStringLiteral("x86-64-v3/threaded"));
        // 8x1024: only task 0 regretted the pick, so the tuning keeps it there.
        QCOMPARE(cell(1, RegretMapModel::SizeColumn), QStringLiteral("8x1024"));
        QCOMPARE(cell(1, RegretMapModel::NodesColumn), QStringLiteral("1 of 2"));
        QCOMPARE(cell(1, RegretMapModel::TunedColumn), QStringLiteral("-"));
        QCOMPARE(model->index(1, 0).data(RegretMapModel::NodesRole).toStringList(),
                 QStringList{QStringLiteral("task 0 (n1)")});
        QVERIFY(model->index(1, RegretMapModel::NodesColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("1 of the class's 2")));
        // Sorted by the smallest speedup, largest first: 8x1024 (2.70x) leads.
        view.regretProxy()->sort(RegretMapModel::MinSpeedupColumn, Qt::DescendingOrder);
        QCOMPARE(view.regretProxy()->index(0, RegretMapModel::SizeColumn).data().toString(),
                 QStringLiteral("8x1024"));
        const QString summary = child<QPlainTextEdit>(&view, "tuningSummary")->toPlainText();
        QVERIFY2(summary.contains(QStringLiteral("2 nodes (task 0 (n1), task 1 (n2)), 1 entry "
                                                 "agreed (not written)")),
                 qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("rms_norm 8x1024 on cpu: x86-64-v3/threaded beats "
                                                 "x86-64-v4/default on task 0 (n1) cpu; not on "
                                                 "task 1 (n2) cpu")),
                 qPrintable(summary));

        // Copy as text: the CLI's text, from the button.
        QApplication::clipboard()->clear();
        QTest::mouseClick(child<QPushButton>(&view, "regretCopy"), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(),
                 QString::fromStdString(expected.regret_map_text()));
        QCOMPARE(view.regretMapText(), QString::fromStdString(expected.regret_map_text()));

        // Write tunings: one file for the class, in FOLDER/tuning.
        auto* folder = child<QLineEdit>(&view, "tuningDir");
        QCOMPARE(folder->text(), dir.path() + QStringLiteral("/tuning"));
        auto* write = child<QPushButton>(&view, "tuningWrite");
        QVERIFY(write->isEnabled());
        QSignalSpy written(&view, &FleetView::tuningsWritten);
        QTest::mouseClick(write, Qt::LeftButton);
        QVERIFY(written.wait(20000));
        QCOMPARE(written.at(0).at(0).toBool(), true);
        const std::string file = f + "/tuning/" + a + ".tuning";
        QCOMPARE(view.tuning().classes[0].file, file);
        const auto back = Tuning::load(file);
        QCOMPARE(back.machine_id, a);
        QCOMPARE(back.entries.size(), std::size_t(1));
        QCOMPARE(back.entries[0].sizes, (std::vector<std::string>{"4x1024"}));
        QVERIFY(child<QPlainTextEdit>(&view, "tuningSummary")
                    ->toPlainText()
                    .contains(QString::fromStdString("written to " + file)));
        QVERIFY(child<QLabel>(&view, "tuningStatus")
                    ->text()
                    .contains(QStringLiteral("Wrote 1 tuning file")));
        QVERIFY(write->isEnabled());
        // A folder it cannot make: the error, on the page.
        folder->setText(QStringLiteral("/proc/no/such/tuning"));
        QTest::mouseClick(write, Qt::LeftButton);
        QVERIFY(written.wait(20000));
        QCOMPARE(written.at(1).at(0).toBool(), false);
        QVERIFY2(child<QLabel>(&view, "tuningStatus")
                     ->text()
                     .contains(QStringLiteral("Cannot write the tunings")),
                 qPrintable(child<QLabel>(&view, "tuningStatus")->text()));

        // Reports without dispatch findings: nothing to write, and what to run instead.
        QTemporaryDir plainDir;
        plain_report(a, "n1").save(plainDir.path().toStdString() + "/report-n1-3_0.json");
        plain_report(a, "n2").save(plainDir.path().toStdString() + "/report-n2-3_1.json");
        Fleet plain = FleetLoader::load(plainDir.path());
        view.setFleet(plain);
        QCOMPARE(model->rowCount(), 0);
        QVERIFY(!write->isEnabled());
        const QString none = child<QPlainTextEdit>(&view, "tuningSummary")->toPlainText();
        QVERIFY2(none.contains(QStringLiteral("nothing to tune")) &&
                     none.contains(QStringLiteral("--all-variants")),
                 qPrintable(none));
    }

    // The window: a folder dropped on it opens in the Fleet tab, off the GUI thread.
    void dropFolderOnWindow() {
        Window w;
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(m_folder)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(&w.window, &enter);
        QVERIFY(enter.isAccepted());
        QSignalSpy shown(child<ui::FleetView>(&w.window, "fleetView"), &FleetView::fleetShown);
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w.window, &drop);
        QCOMPARE(child<QTabWidget>(&w.window, "mainTabs")->currentIndex(),
                 int(MainWindow::FleetTab));
        QVERIFY(shown.wait(20000));
        QCOMPARE(child<ui::FleetView>(&w.window, "fleetView")->model()->reportCount(), kMachines);
        QCOMPARE(child<ui::FleetView>(&w.window, "fleetView")->model()->rowCount(), kRows);
        QVERIFY(child<QLabel>(child<ui::FleetView>(&w.window, "fleetView"), "fleetTitle")
                    ->text()
                    .contains(QStringLiteral("could not be read")));
        QVERIFY(child<QPlainTextEdit>(child<ui::FleetView>(&w.window, "fleetView"), "fleetIssues")
                    ->toPlainText()
                    .contains(QStringLiteral("report-node-99.json")));
    }
};

QTEST_MAIN(TestFleetGui)
#include "tst_fleet_gui.moc"
