// SPDX-License-Identifier: MIT
// The fleet table: a folder of synthetic reports (several runs per row, so the
// verdicts are real) read off the GUI thread into the Fleet tab; its columns and lines;
// every cell's verdict equal to MultiComparison's (the CLI's); the outlier machine's cells
// marked; a broken file listed with its error; another baseline, other verdicts; the side
// panel's context and fingerprint differences; Copy as text; a folder dropped on the window.
#include "controllers/fleetloader.h"
#include "mainwindow.h"
#include "models/comparemodel.h"
#include "support/builtinwindow.h"
#include "support/findchild.h"
#include "views/fleetview.h"

#include "support/syntheticfleet.h"

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
#include <QMimeData>
#include <QPlainTextEdit>
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
        const auto expected = MultiComparison::of(reports, names, {}, 0);
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
                    .contains(QString::fromStdString(CompareOptions{}.describe()).toHtmlEscaped()));
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
        QCOMPARE(QApplication::clipboard()->text(),
                 QString::fromStdString(MultiComparison::of(reports, files, {}, 0).to_text()));

        // Another baseline (the combo box): every verdict follows.
        QCOMPARE(child<QComboBox>(&view, "baselineBox")->count(), kMachines);
        child<QComboBox>(&view, "baselineBox")->setCurrentIndex(kOutlier);
        emit child<QComboBox>(&view, "baselineBox")->activated(kOutlier);
        QCOMPARE(model->baseline(), kOutlier);
        QCOMPARE(shown.count(), 2);
        QCOMPARE(
            model->headerData(MultiCompareModel::columnOf(kOutlier), Qt::Horizontal).toString(),
            QStringLiteral("node-02 (baseline)"));
        checkVerdicts(*model, MultiComparison::of(reports, names, {}, kOutlier));
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
