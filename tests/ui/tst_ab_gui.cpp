// SPDX-License-Identifier: MIT
// The Compare tab's "A/B in one run": two plugin folders run in paired turns through the core's
// AbController, live progress, the verdicts in a model that QAbstractItemModelTester checks.
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QProgressBar>
#include <QPushButton>
#include <QTableView>

#include "controllers/abruncontroller.h"
#include "models/abmodel.h"
#include "support/findchild.h"
#include "views/abview.h"
#include "views/compareview.h"

using namespace switchyard;
using namespace switchyard::ui;
using switchyard::test::child;

namespace {
const QString kBuildA = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/ab-a");
}

class TestAbGui : public QObject {
    Q_OBJECT

private slots:
    void modelOfRows() {
        AbModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        AbRow row;
        row.a.spec.op = row.b.spec.op = "flow_match_step";
        row.a.spec.size = row.b.spec.size = "4096";
        row.a.spec.arch = row.b.spec.arch = "generic";
        row.a.spec.variant = "abwork";
        row.b.spec.variant = "abwork";
        row.log_ratios = {0.05, 0.04, 0.05, 0.06, 0.05, 0.05};
        row.result = judge_paired(std::vector<std::vector<double>>{row.log_ratios}).front();
        model.addRow(row);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.verdictAt(0), QStringLiteral("SLOWER"));
        QCOMPARE(model.index(0, AbModel::CellColumn).data().toString(),
                 QStringLiteral("generic/abwork"));
        AbReport report;
        report.rows = {row, row};
        report.judge();
        model.setReport(report);
        QCOMPARE(model.rowCount(), 2);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    // The same folder on both sides, run from the tab: rows come in, none is FASTER or SLOWER.
    void runFromTheCompareTab() {
        if (!QFile::exists(kBuildA + "/libswitchyard-fixture-ab.so"))
            QSKIP("the A/B fixture plugin is not built");
        CompareView compare;
        auto* view = compare.abView();
        QVERIFY(view);
        AbRunController controller;
        controller.setWorkerExecutable(QStringLiteral(SWITCHYARD_CLI_PATH));
        controller.setCeilingCache(std::nullopt);
        view->setController(&controller);
        QAbstractItemModelTester tester(view->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        view->setSides(kBuildA, kBuildA);
        view->setSelection("flow_match_step", "4096", "generic/abwork");
        view->setBudget(0.1);
        view->setPairs(6);
        bool done = false, cancelled = true;
        connect(&controller, &AbRunController::finished, this, [&](const AbReport&, bool c) {
            done = true;
            cancelled = c;
        });
        QVERIFY(view->run());
        QCOMPARE(child<QPushButton>(view, "abRunButton")->text(), QStringLiteral("Cancel"));
        // Each worker measures the CPU ceilings first (no cache here): a minute when loaded.
        QTRY_VERIFY_WITH_TIMEOUT(done, 240000);
        QVERIFY(!cancelled);
        QCOMPARE(view->model()->rowCount(), 2); // the fixture's cell and the reference
        for (int r = 0; r < view->model()->rowCount(); ++r) {
            const auto v = view->model()->verdictAt(r);
            QVERIFY2(v != "FASTER" && v != "SLOWER", qPrintable(v));
        }
        QVERIFY2(view->status().contains("same,"), qPrintable(view->status()));
        auto* progress = child<QProgressBar>(view, "abProgress");
        QCOMPARE(progress->value(), progress->maximum());
        // To look at it: SWITCHYARD_TEST_SHOTS=DIR saves the tab as it ended.
        if (const auto dir = qEnvironmentVariable("SWITCHYARD_TEST_SHOTS"); !dir.isEmpty()) {
            compare.resize(1200, 720);
            compare.showPane(CompareView::AbPane);
            QVERIFY(compare.grab().save(dir + "/ab-in-one-run.png"));
        }
    }
};

QTEST_MAIN(TestAbGui)
#include "tst_ab_gui.moc"
