// SPDX-License-Identifier: MIT
// The backend model under QAbstractItemModelTester, and the main window driven with QTest.
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/ui/backendmodel.h>
#include <switchyard/ui/mainwindow.h>

#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>

using namespace switchyard;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void modelIsConsistent() {
        ui::BackendModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        BackendInfo ok;
        ok.name = "cpu";
        ok.description = "built in";
        BackendInfo broken;
        broken.name = "cuda";
        broken.source = BackendSource::Plugin;
        broken.state = BackendState::Unavailable;
        broken.error = "backend 'cuda' is missing optional dependencies: libcuda.so.1";
        model.setResults({ok, broken});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(ui::BackendModel::ColumnCount));
        QCOMPARE(model.index(1, ui::BackendModel::StateColumn).data().toString(),
                 QStringLiteral("unavailable"));
        QCOMPARE(model.index(1, ui::BackendModel::DescriptionColumn).data().toString(),
                 QString::fromStdString(broken.error));
        // A multi-line reason shows its first line in the table, all of it in the tooltip.
        broken.error = "first line\n  - second line";
        model.setResults({ok, broken});
        QCOMPARE(model.index(1, ui::BackendModel::DescriptionColumn).data().toString(),
                 QStringLiteral("first line …"));
        QCOMPARE(model.index(1, 0).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("first line\n  - second line"));
        QCOMPARE(model.index(1, 0).data(Qt::ToolTipRole).toString(),
                 QString::fromStdString(broken.error));
        QCOMPARE(model.index(0, 0).data(ui::BackendModel::AvailableRole).toBool(), true);
        QCOMPARE(model.index(1, 0).data(ui::BackendModel::AvailableRole).toBool(), false);
        model.setResults({});
        QCOMPARE(model.rowCount(), 0);
    }

    void windowListsAndFiltersBackends() {
        KernelRegistry kernels("kernels", {"op", "device", "arch", "variant"});
        ComponentRegistry components("components", {"kind", "device", "variant"});
        BackendRegistry registry(kernels, components, builtin_backends);
        BackendSpec extra;
        extra.name = "extra";
        extra.description = "an extra backend";
        registry.register_backend(extra);

        ui::MainWindow window(registry);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* view = window.backendView();
        QTRY_COMPARE(view->model()->rowCount(), 2);
        // The first row is selected and its details are shown, selectable.
        QTRY_VERIFY(window.detailsView()->toPlainText().startsWith(
            QStringLiteral("cpu  (builtin, loaded)")));
        QVERIFY(window.detailsView()->toPlainText().contains(
            QStringLiteral("(gemm, cpu, generic, reference)")));

        auto* filter = window.findChild<QLineEdit*>();
        QVERIFY(filter);
        QTest::keyClicks(filter, QStringLiteral("extr"));
        QCOMPARE(view->model()->rowCount(), 1);
        view->setCurrentIndex(view->model()->index(0, 0));
        QVERIFY(window.detailsView()->toPlainText().startsWith(
            QStringLiteral("extra  (registered, loaded)")));
        filter->clear();
        QCOMPARE(view->model()->rowCount(), 2);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
