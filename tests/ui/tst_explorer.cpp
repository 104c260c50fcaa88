// SPDX-License-Identifier: MIT
// The explorer: every model and proxy under QAbstractItemModelTester, the tree's filters
// table-driven through the proxy, and the main window driven with the fixture plugins.
#include "mainwindow.h"
#include "models/backendtreemodel.h"
#include "models/dependencymodel.h"
#include "models/hardwaremodel.h"
#include "models/kernelmatrixmodel.h"
#include "models/problemmodel.h"
#include "models/tone.h"
#include "support/findchild.h"
#include "views/backendtreeview.h"
#include "views/kernelmatrixview.h"
#include "views/panels.h"

#include <switchyard/hardware/hardware.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/runtime/runtime.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeView>

using namespace switchyard;
using switchyard::test::child;
using switchyard::ui::BackendTreeModel;

namespace {

BackendInfo backend(const std::string& name, std::vector<std::string> tags, bool available,
                    BackendSource source = BackendSource::Plugin) {
    BackendInfo b;
    b.name = name;
    b.tags = std::move(tags);
    b.source = source;
    if (!available) {
        b.state = BackendState::Unavailable;
        b.cause = BackendCause::OptionalDependencyMissing;
        b.error = "missing libcuda.so.1";
        b.dependencies.push_back(
            {{"libcuda.so.1", DependencyKind::Library, "Install the NVIDIA driver"},
             false,
             "",
             ""});
    }
    return b;
}

ui::CatalogPtr syntheticCatalog() {
    auto c = std::make_shared<ui::CatalogSnapshot>();
    c->backends = {backend("cpu", {}, true, BackendSource::Builtin),
                   backend("cuda", {"gpu"}, false), backend("debugger", {"debug"}, true),
                   backend("nightly", {"experimental", "gpu"}, true)};
    c->kernels = {{{"gemm", "cpu", "generic", "reference"}, true, true, "builtin", "cpu", 0},
                  {{"gemm", "cuda", "sm_90", "default"}, false, false, "plugin", "cuda", 1024},
                  {{"rms_norm", "cpu", "generic", "reference"}, true, true, "builtin", "cpu", 0}};
    c->components = {{{"vae", "cpu", "default"}, true, true, "builtin", "cpu", 0}};
    DoctorProblem p;
    p.subject = "cuda";
    p.problem = "missing libcuda.so.1";
    p.fix = "Install the NVIDIA driver";
    p.cause = BackendCause::OptionalDependencyMissing;
    c->doctor.problems = {p};
    return c;
}

QStringList visibleBackends(QAbstractItemModel* proxy) {
    QStringList names;
    for (int g = 0; g < proxy->rowCount(); ++g) {
        const auto group = proxy->index(g, 0);
        for (int i = 0; i < proxy->rowCount(group); ++i)
            names << proxy->index(i, 0, group).data().toString();
    }
    names.removeDuplicates();
    names.sort();
    return names;
}

bool treeContains(QAbstractItemModel* model, const QModelIndex& parent, int column,
                  const QString& needle) {
    for (int r = 0; r < model->rowCount(parent); ++r) {
        const auto i = model->index(r, 0, parent);
        if (model->index(r, column, parent).data().toString().contains(needle) ||
            treeContains(model, i, column, needle))
            return true;
    }
    return false;
}

const QString kPlugins = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");

// A registry over the fixture plugins plus two registered backends: an experimental one
// and a pretend CUDA backend (gemm on sm_80 unavailable, on sm_75 available).
struct Fixture {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    BackendRegistry registry{kernels, components, builtin_backends};
    DeviceRegistry devices;
    PluginSearchPath path;

    Fixture() {
        std::vector<std::string> dirs;
        for (const char* c :
             {"good", "missing_dep", "unavailable", "contract99", "library_missing", "min_core"})
            dirs.push_back((kPlugins + "/" + QLatin1String(c)).toStdString());
        path = PluginSearchPath::from_dirs(dirs);
        registry.set_plugin_discovery(path.discovery());
        BackendSpec exp;
        exp.name = "nightly";
        exp.description = "an experimental backend";
        registry.register_experimental_backend(exp);
        BackendSpec cuda;
        cuda.name = "pretend-cuda";
        cuda.register_cells = [](CellRegistrar& r) {
            CellRegistrar::KernelSpec sm80;
            sm80.op = "gemm";
            sm80.device = "cuda";
            sm80.arch = "sm_80";
            sm80.fn = [](const KernelArgs&) {};
            sm80.available = [] { return false; };
            sm80.workspace_bytes = 4096;
            r.add_kernel(sm80);
            CellRegistrar::KernelSpec sm75 = sm80;
            sm75.arch = "sm_75";
            sm75.available = {};
            r.add_kernel(sm75);
        };
        registry.register_backend(cuda);
    }
};

} // namespace

class TestExplorer : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // settings go to a test folder
        QSettings().clear();
        // The inspection worker the controller loads plugins in (not beside tests/bin).
        qputenv("SWITCHYARD_CLI", SWITCHYARD_CLI_PATH);
    }

    void backendTreeModel() {
        BackendTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ui::BackendFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester proxyTester(
            &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setResults(syntheticCatalog());
        QCOMPARE(model.rowCount(), 2); // Built-in, Plugins
        QCOMPARE(model.tags(), (QStringList{"debug", "experimental", "gpu"}));
        model.setGrouping(BackendTreeModel::Grouping::ByTag);
        QCOMPARE(model.rowCount(), 4); // (untagged), debug, experimental, gpu
        // The tooltip says why and what to do: the cause table's summary and fix, once each.
        const auto cuda =
            proxy.match(proxy.index(0, 0), Qt::DisplayRole, "cuda", 1, Qt::MatchRecursive);
        QCOMPARE(cuda.size(), 1);
        const QString tip = cuda[0].data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("missing libcuda.so.1<br>Fix: libcuda.so.1: Install "
                                             "the NVIDIA driver")),
                 qPrintable(tip));
        QCOMPARE(tip.count(QStringLiteral("Install")), 1);
        QVERIFY(!cuda[0].data(Qt::DecorationRole).value<QIcon>().isNull());
        model.setResults(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void filters_data() {
        QTest::addColumn<QStringList>("excluded");
        QTest::addColumn<bool>("showUnavailable");
        QTest::addColumn<QString>("search");
        QTest::addColumn<QStringList>("visible");
        QTest::newRow("defaults") << QStringList{"debug", "experimental"} << true << QString()
                                  << QStringList{"cpu", "cuda"};
        QTest::newRow("experimental on")
            << QStringList{"debug"} << true << QString() << QStringList{"cpu", "cuda", "nightly"};
        QTest::newRow("all tags") << QStringList{} << true << QString()
                                  << QStringList{"cpu", "cuda", "debugger", "nightly"};
        QTest::newRow("hide unavailable")
            << QStringList{} << false << QString() << QStringList{"cpu", "debugger", "nightly"};
        QTest::newRow("gpu off") << QStringList{"gpu"} << true << QString()
                                 << QStringList{"cpu", "debugger"};
        QTest::newRow("search name") << QStringList{} << true << "NIGHT" << QStringList{"nightly"};
        QTest::newRow("search kernel") << QStringList{} << true << "rms_norm" << QStringList{"cpu"};
        QTest::newRow("search cause")
            << QStringList{} << true << "optional_dependency" << QStringList{"cuda"};
        QTest::newRow("search hidden tag")
            << QStringList{"experimental"} << true << "nightly" << QStringList{};
    }
    void filters() {
        QFETCH(QStringList, excluded);
        QFETCH(bool, showUnavailable);
        QFETCH(QString, search);
        QFETCH(QStringList, visible);
        for (auto grouping :
             {BackendTreeModel::Grouping::BySource, BackendTreeModel::Grouping::ByTag}) {
            BackendTreeModel model;
            model.setGrouping(grouping);
            model.setResults(syntheticCatalog());
            ui::BackendFilterProxy proxy;
            QAbstractItemModelTester tester(&proxy,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
            proxy.setSourceModel(&model);
            proxy.setExcludedTags(QSet<QString>(excluded.begin(), excluded.end()));
            proxy.setShowUnavailable(showUnavailable);
            proxy.setSearchText(search);
            QCOMPARE(visibleBackends(&proxy), visible);
        }
    }

    void matrixAndChainModels() {
        ui::KernelMatrixModel matrix;
        QAbstractItemModelTester tester(&matrix,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        matrix.setResults(syntheticCatalog());
        QCOMPARE(matrix.rowCount(), 2);    // gemm, rms_norm
        QCOMPARE(matrix.columnCount(), 2); // cpu first, then cuda
        QCOMPARE(matrix.headerData(0, Qt::Horizontal).toString(),
                 QStringLiteral("cpu\ngeneric\nreference"));
        const int cudaCol = matrix.columnOf("cuda", "sm_90", "default");
        QCOMPARE(matrix.index(0, cudaCol).data(ui::KernelMatrixModel::CellStateRole).toInt(),
                 int(ui::KernelMatrixModel::Unavailable));
        const QString tip = matrix.index(0, cudaCol).data(Qt::ToolTipRole).toString();
        QVERIFY(tip.contains("workspace_bytes: 1024"));
        QVERIFY(tip.contains("missing libcuda.so.1"));
        QCOMPARE(matrix.index(1, cudaCol).data(ui::KernelMatrixModel::CellStateRole).toInt(),
                 int(ui::KernelMatrixModel::Empty));
        ui::ChainModel chain;
        QAbstractItemModelTester chainTester(
            &chain, QAbstractItemModelTester::FailureReportingMode::QtTest);
        Resolution r;
        r.op = "gemm";
        r.rungs = {{TupleKey{"gemm", "cuda", "sm_90", "default"}, true, false, "cuda", "missing"},
                   {TupleKey{"gemm", "cpu", "generic", "reference"}, true, true, "cpu", ""}};
        r.winner = 1;
        chain.setResolution(r);
        QCOMPARE(chain.rowCount(), 2);
        QVERIFY(chain.index(1, 0).data(ui::ChainModel::WinnerRole).toBool());
        auto res = std::make_shared<ui::TargetResolution>();
        res->target = "cuda:sm_90";
        res->resolutions = {r};
        matrix.setResolution(res);
        matrix.setSelectedOp("gemm");
        QCOMPARE(matrix.index(0, cudaCol).data(ui::KernelMatrixModel::RungRole).toInt(), 1);
        QVERIFY(matrix.index(0, 0).data(ui::KernelMatrixModel::WinnerRole).toBool());
        // A profile run's dispatch regret flags the cell dispatch picked; "ok" flags nothing.
        DispatchFinding regret;
        regret.verdict = DispatchVerdict::Regret;
        regret.op = "gemm";
        regret.size = "1024x1024x1024";
        regret.device = "cpu";
        regret.resolved = "generic/reference";
        regret.fastest = "x86-64-v3/threaded";
        regret.fastest_backend = "cpu";
        regret.speedup = 2.7;
        DispatchFinding fine = regret;
        fine.verdict = DispatchVerdict::Ok;
        fine.op = "rms_norm";
        matrix.setDispatch({regret, fine});
        QVERIFY(matrix.index(0, 0).data(Qt::DisplayRole).toString().contains(QStringLiteral("⚑")));
        QVERIFY(matrix.index(0, 0)
                    .data(ui::KernelMatrixModel::RegretRole)
                    .toString()
                    .contains("x86-64-v3/threaded (cpu) is 2.70x faster here"));
        QVERIFY(
            matrix.index(0, 0).data(Qt::ToolTipRole).toString().contains("found a faster cell"));
        QVERIFY(matrix.index(1, 0).data(ui::KernelMatrixModel::RegretRole).toString().isEmpty());
        matrix.setDispatch({});
        QVERIFY(!matrix.index(0, 0).data(Qt::DisplayRole).toString().contains(QStringLiteral("⚑")));
        // A tuning entry that applies here marks the cell it chooses (⚙) and says so in both
        // cells' tooltips; one that does not apply marks nothing.
        TuningStanding tuned;
        tuned.entry.op = "gemm";
        tuned.entry.device = "cuda";
        tuned.entry.sizes = {"1024x1024x1024", "2048x2048x2048"};
        tuned.entry.chosen.cell = "sm_90/default";
        tuned.entry.overrides.cell = "generic/reference";
        tuned.entry.date = "2026-12-06T07:00:00Z";
        tuned.file = "this.tuning";
        tuned.applies = true;
        TuningStanding foreign = tuned;
        foreign.entry.op = "rms_norm";
        foreign.applies = false;
        matrix.setTunings({tuned, foreign});
        QVERIFY(matrix.index(0, cudaCol)
                    .data(Qt::DisplayRole)
                    .toString()
                    .contains(QStringLiteral("⚙")));
        QVERIFY2(
            matrix.index(0, cudaCol)
                .data(ui::KernelMatrixModel::TunedRole)
                .toString()
                .contains("chosen for 1024x1024x1024 to 2048x2048x2048 instead of "
                          "generic/reference (this.tuning, 2026-12-06)"),
            qPrintable(matrix.index(0, cudaCol).data(ui::KernelMatrixModel::TunedRole).toString()));
        QVERIFY(
            matrix.index(1, cudaCol).data(ui::KernelMatrixModel::TunedRole).toString().isEmpty());
        matrix.setTunings({});
        QVERIFY(!matrix.index(0, cudaCol)
                     .data(Qt::DisplayRole)
                     .toString()
                     .contains(QStringLiteral("⚙")));
        chain.setResolution(std::nullopt);
        matrix.setResults(nullptr);
        QCOMPARE(matrix.rowCount(), 0);
    }

    void otherModels() {
        const auto catalog = syntheticCatalog();
        ui::ProblemModel problems;
        QAbstractItemModelTester t1(&problems,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        problems.setResults(catalog->doctor.problems);
        QCOMPARE(problems.rowCount(), 1);
        QCOMPARE(problems.index(0, ui::ProblemModel::FixColumn).data().toString(),
                 QStringLiteral("Install the NVIDIA driver"));
        ui::DependencyModel deps;
        QAbstractItemModelTester t2(&deps, QAbstractItemModelTester::FailureReportingMode::QtTest);
        BackendInfo b = catalog->backends[1];
        ElfDependencyReport report;
        report.library = "/plugins/libcuda-backend.so";
        report.readable = true;
        report.dependencies = {
            {"libc.so.6", "/lib/libc.so.6", LibrarySearchSource::LdCache, report.library, 1, ""},
            {"libcuda.so.1", "", LibrarySearchSource::NotFound, report.library, 1,
             "/usr/lib:/lib"}};
        b.library_report = report;
        deps.setBackend(&b);
        QCOMPARE(deps.rowCount(), 2);
        QVERIFY(treeContains(&deps, {}, ui::DependencyModel::StatusColumn, "NOT FOUND"));
        // A version the static load simulation found missing: the library that fails and
        // the provider that lacks it are marked, with what it lacks and what it has.
        report.dependencies.pop_back();
        LoadProblem version;
        version.cause = BackendCause::SymbolVersionMissing;
        version.object = report.library;
        version.missing = "GLIBCXX_3.4.99 from libstdc++.so.6";
        version.provider = "/lib/libstdc++.so.6";
        version.provided = "GLIBCXX_3.4 … GLIBCXX_3.4.30";
        version.message = report.library + " needs GLIBCXX_3.4.99";
        report.dependencies.push_back({"libstdc++.so.6", "/lib/libstdc++.so.6",
                                       LibrarySearchSource::LdCache, report.library, 1, ""});
        report.load_problems = {version};
        b.library_report = report;
        deps.setBackend(&b);
        QVERIFY(treeContains(&deps, {}, ui::DependencyModel::StatusColumn, "FAILS TO LOAD"));
        QVERIFY(treeContains(&deps, {}, ui::DependencyModel::WhereColumn,
                             "needs GLIBCXX_3.4.99 from libstdc++.so.6"));
        QVERIFY(treeContains(&deps, {}, ui::DependencyModel::StatusColumn, "LACKS GLIBCXX_3.4.99"));
        QVERIFY(treeContains(&deps, {}, ui::DependencyModel::WhereColumn,
                             "provides GLIBCXX_3.4 … GLIBCXX_3.4.30"));
        // A library the loader refuses itself (another architecture): its dependencies are
        // not read, so none is shown missing; one reason.
        ElfDependencyReport foreign;
        foreign.library = report.library;
        foreign.readable = true;
        foreign.dependencies_read = false;
        LoadProblem arch;
        arch.cause = BackendCause::WrongArchitecture;
        arch.object = foreign.library;
        arch.missing = "aarch64 (ELF64)";
        arch.message = foreign.library + " is built for aarch64 (ELF64)";
        foreign.load_problems = {arch};
        b.library_report = foreign;
        deps.setBackend(&b);
        QVERIFY(treeContains(&deps, {}, ui::DependencyModel::StatusColumn, "FAILS TO LOAD"));
        QVERIFY(
            treeContains(&deps, {}, ui::DependencyModel::WhereColumn, "built for aarch64 (ELF64)"));
        QVERIFY(
            treeContains(&deps, {}, ui::DependencyModel::StatusColumn, "not read by the loader"));
        QVERIFY(!treeContains(&deps, {}, ui::DependencyModel::StatusColumn, "NOT FOUND"));
        deps.setBackend(nullptr);
        QCOMPARE(deps.rowCount(), 0);
        ui::HardwareModel hw;
        QAbstractItemModelTester t3(&hw, QAbstractItemModelTester::FailureReportingMode::QtTest);
        DoctorReport r;
        r.system.cpu = cpu_info();
        hw.setResults(r);
        QVERIFY(hw.rowCount() >= 3);
        QVERIFY(treeContains(&hw, {}, 0, "ISA levels"));
        QVERIFY(treeContains(&hw, {}, 1, "no device")); // no CUDA or OpenCL device here
        // Caches CPUID's legacy leaves gave, with an L3 taken for one CCD's: the tree says
        // where they came from and what was assumed.
        r.system.cpu.caches = {{1, "data", 48 << 10, 64, 12}, {3, "unified", 32 << 20, 64, 0}};
        r.system.cpu.cache_source = "CPUID leaves 0x80000005/0x80000006";
        r.system.cpu.cache_note = "CPUID reports a 508 MiB L3; taken as 32 MiB";
        hw.setResults(r);
        QVERIFY(treeContains(&hw, {}, 1, "2 level(s), from CPUID leaves 0x80000005/0x80000006"));
        QVERIFY(treeContains(&hw, {}, 1, "CPUID reports a 508 MiB L3; taken as 32 MiB"));
        const auto assumed = hw.match(hw.index(0, 1), Qt::DisplayRole,
                                      QStringLiteral("CPUID reports a 508 MiB L3; taken as 32 MiB"),
                                      1, Qt::MatchRecursive | Qt::MatchExactly);
        QCOMPARE(assumed.size(), 1);
        QCOMPARE(assumed.first().data(Qt::ToolTipRole).toString(),
                 QStringLiteral("CPUID reports a 508 MiB L3; taken as 32 MiB"));
        // The L3 of unknown ways says nothing of them.
        const auto l3 =
            QLocale::system().formattedDataSize(32 << 20, 1, QLocale::DataSizeTraditionalFormat);
        QVERIFY(treeContains(&hw, {}, 1, l3 + QStringLiteral(", 64-byte lines")));
        QVERIFY(!treeContains(&hw, {}, 1, "lines, 0-way"));
        r.system.cpu.caches.clear();
        r.system.cpu.cache_source.clear();
        r.system.cpu.cache_note.clear();
        hw.setResults(r);
        QVERIFY(treeContains(&hw, {}, 1, "none reported"));
    }

    void windowWithFixturePlugins() {
        Fixture f;
        ui::MainWindow window(f.registry, f.devices, f.path);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.catalog() != nullptr, 20000);
        auto* tree = child<ui::BackendTreeView>(&window, "backendTree");
        auto* proxy = tree->proxy();

        // The plugin whose library lacks a dependency: the panel names the missing soname.
        QVERIFY(tree->selectBackend("fixture-missing-dep"));
        auto* deps = child<ui::DependenciesPanel>(&window, "dependenciesPanel");
        QVERIFY(treeContains(deps->model(), {}, ui::DependencyModel::NameColumn,
                             "libswitchyard-nonexistent-dep.so.1"));
        QVERIFY(treeContains(deps->model(), {}, ui::DependencyModel::StatusColumn, "NOT FOUND"));
        QVERIFY(child<QPlainTextEdit>(deps, "dependencyProblem")
                    ->toPlainText()
                    .contains("libswitchyard-nonexistent-dep.so.1"));
        auto* caps = child<ui::CapabilitiesPanel>(&window, "capabilitiesPanel");
        QVERIFY(child<QLabel>(caps, "state")->text().contains("library_dependency_missing"));
        // One "why": the cause table's summary and fix, each once; the stored message one
        // click away ("Show details"), hidden until then.
        const QString why = child<QLabel>(caps, "why")->text();
        QVERIFY2(why.contains("its library needs libswitchyard-nonexistent-dep.so.1"),
                 qPrintable(why));
        QVERIFY(child<QLabel>(caps, "why")->isVisibleTo(caps));
        QVERIFY(child<QLabel>(caps, "fix")
                    ->text()
                    .contains("apt-file search libswitchyard-nonexistent-dep.so.1"));
        QCOMPARE(child<QLabel>(caps, "fix")->text().count("LD_LIBRARY_PATH"), 1);
        QVERIFY(!child<QLabel>(caps, "details")->isVisibleTo(caps));
        emit child<QLabel>(caps, "why")->linkActivated(QStringLiteral("#details"));
        QVERIFY(child<QLabel>(caps, "details")->isVisibleTo(caps));
        QVERIFY(child<QLabel>(caps, "details")->text().contains("cannot be loaded because"));
        // A healthy backend: nothing under "Why", no "Fix".
        QVERIFY(tree->selectBackend("cpu"));
        QVERIFY(!child<QLabel>(caps, "why")->isVisibleTo(caps));
        QVERIFY(!child<QLabel>(caps, "fix")->isVisibleTo(caps));
        QVERIFY(!child<QLabel>(caps, "details")->isVisibleTo(caps));
        QVERIFY(tree->selectBackend("fixture-missing-dep"));

        // Optional dependencies: missing, with what to install.
        QVERIFY(tree->selectBackend("fixture-unavailable"));
        QVERIFY(treeContains(deps->model(), {}, ui::DependencyModel::WhereColumn,
                             "Install switchyard-fixture-runtime"));
        QVERIFY(deps->installCommand().contains("export SWITCHYARD_FIXTURE_UNSET_VARIABLE=1"));

        // experimental is off by default; its chip brings the backend in.
        QVERIFY(!visibleBackends(proxy).contains("nightly"));
        auto* chip = tree->tagChip("experimental");
        QVERIFY(chip);
        QVERIFY(!chip->isChecked());
        chip->click();
        QVERIFY(visibleBackends(proxy).contains("nightly"));
        chip->click();
        QVERIFY(!visibleBackends(proxy).contains("nightly"));

        // Search (Ctrl+F focuses the box).
        window.activateWindow();
        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(child<QLineEdit>(tree, "backendSearch")->hasFocus());
        QTest::keyClicks(child<QLineEdit>(tree, "backendSearch"), "contract");
        QCOMPARE(visibleBackends(proxy), QStringList{"fixture-contract99"});
        child<QLineEdit>(tree, "backendSearch")->clear();

        // What-if target cuda:sm_90 for gemm: the chain, rung by rung.
        auto* matrix = child<ui::KernelMatrixView>(&window, "matrixView");
        matrix->setSelectedOp("gemm");
        matrix->setTarget("cuda:sm_90");
        auto* chain = matrix->chainModel();
        QTRY_VERIFY_WITH_TIMEOUT(chain->resolution() && chain->resolution()->target.arch == "sm_90",
                                 20000);
        QCOMPARE(chain->rowCount(), 7); // sm_90 sm_89 sm_86 sm_80 sm_75 generic, cpu reference
        QCOMPARE(chain->index(0, ui::ChainModel::KeyColumn).data().toString(),
                 QStringLiteral("(gemm, cuda, sm_90, default)"));
        QCOMPARE(chain->index(0, ui::ChainModel::DeclaredColumn).data().toString(),
                 QStringLiteral("not declared"));
        QCOMPARE(chain->index(3, ui::ChainModel::KeyColumn).data().toString(),
                 QStringLiteral("(gemm, cuda, sm_80, default)"));
        QCOMPARE(chain->index(3, ui::ChainModel::AvailableColumn).data().toString(),
                 QStringLiteral("unavailable"));
        QVERIFY(chain->index(4, 0).data(ui::ChainModel::WinnerRole).toBool());
        QCOMPARE(chain->index(4, ui::ChainModel::BackendColumn).data().toString(),
                 QStringLiteral("pretend-cuda"));
        auto* m = matrix->model();
        const int gemm = m->rowOfOp("gemm");
        // Rungs nobody declares still get their column, marked in order.
        QCOMPARE(m->index(gemm, m->columnOf("cuda", "sm_90", "default"))
                     .data(ui::KernelMatrixModel::RungRole)
                     .toInt(),
                 1);
        QCOMPARE(m->index(gemm, m->columnOf("cuda", "sm_80", "default"))
                     .data(ui::KernelMatrixModel::RungRole)
                     .toInt(),
                 4);
        QVERIFY(m->index(gemm, m->columnOf("cuda", "sm_75", "default"))
                    .data(ui::KernelMatrixModel::WinnerRole)
                    .toBool());
        QCOMPARE(m->index(gemm, m->columnOf("cpu", "generic", "reference"))
                     .data(ui::KernelMatrixModel::RungRole)
                     .toInt(),
                 7);

        // Problems: every broken fixture, with its cause.
        auto* problems = child<ui::ProblemsView>(&window, "problemsView")->model();
        const std::pair<QString, QString> expected[] = {
            {"fixture-missing-dep", "library_dependency_missing"},
            {"fixture-unavailable", "optional_dependency_missing"},
            {"fixture-contract99", "contract_too_new"},
            {"fixture-library-missing", "library_missing"},
            {"fixture-min-core", "core_too_old"},
        };
        for (const auto& [name, cause] : expected) {
            bool found = false;
            for (int r = 0; r < problems->rowCount(); ++r)
                found =
                    found ||
                    (problems->index(r, ui::ProblemModel::SubjectColumn).data().toString() ==
                         name &&
                     problems->index(r, ui::ProblemModel::CauseColumn).data().toString() == cause);
            QVERIFY2(found, qPrintable(name + " with cause " + cause));
        }
        QVERIFY(window.statusText().contains("problems"));

        // Screenshots for the README when asked (SWITCHYARD_SCREENSHOT_DIR).
        const QString shots = qEnvironmentVariable("SWITCHYARD_SCREENSHOT_DIR");
        if (!shots.isEmpty()) {
            window.resize(1500, 900);
            QVERIFY(tree->selectBackend("fixture-missing-dep"));
            QVERIFY(!window.saveScreenshots(shots, "fixtures").isEmpty());
        }
    }
    void colorsFollowThePalette() {
        const QPalette original = QApplication::palette();
        const QColor light = ui::toneColor(ui::Tone::Good, true);
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(0x20, 0x20, 0x20));
        dark.setColor(QPalette::Window, QColor(0x30, 0x30, 0x30));
        QApplication::setPalette(dark);
        const QColor darkGood = ui::toneColor(ui::Tone::Good, true);
        QApplication::setPalette(original);
        QVERIFY(darkGood.lightness() < light.lightness());
    }

    // 1,000 backends x 100 kernel cells: the figures go to the log (QBENCHMARK-free, so
    // the test stays one pass); the bounds only catch something pathological.
    void scale() {
        auto c = std::make_shared<ui::CatalogSnapshot>();
        for (int b = 0; b < 1000; ++b) {
            const std::string name = "gen" + std::to_string(b);
            c->backends.push_back(
                backend(name, {b % 10 == 0 ? "experimental" : "gen"}, b % 7 != 0));
            for (int k = 0; k < 100; ++k)
                c->kernels.push_back({{"op" + std::to_string(k % 50), k < 50 ? "cpu" : "cuda",
                                       "arch" + std::to_string(b % 20), name},
                                      true,
                                      false,
                                      "plugin",
                                      name,
                                      0});
        }
        QElapsedTimer t;
        t.start();
        BackendTreeModel model;
        ui::BackendFilterProxy proxy;
        proxy.setSourceModel(&model);
        model.setResults(c);
        QVERIFY(proxy.rowCount() > 0);
        const auto treeMs = t.restart();
        proxy.setSearchText("gen99");
        const auto keyMs = t.restart();
        ui::KernelMatrixModel matrix;
        matrix.setResults(c);
        const auto matrixMs = t.elapsed();
        qInfo("scale: tree of 1000 backends/100000 cells %lld ms, one search keystroke %lld ms, "
              "matrix of %d x %d %lld ms",
              treeMs, keyMs, matrix.rowCount(), matrix.columnCount(), matrixMs);
        QVERIFY(keyMs < 5000);
    }

    // A resolution that loads a plugin changes the registry: the tree shows the new state.
    // "fixture-late" (the good fixture's library) declares an op only it has, on the CPU,
    // so no device backend load touches it; resolving the matrix's target (every op) loads it.
    void treeFollowsLoadsByResolution() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QVERIFY(QFile::copy(kPlugins + "/good/libswitchyard-fixture-good.so",
                            tmp.filePath("libswitchyard-fixture-late.so")));
        QFile manifest(tmp.filePath("late.plugin.json"));
        QVERIFY(manifest.open(QIODevice::WriteOnly));
        manifest.write(R"({"schema": 1, "name": "fixture-late", "version": "1.0.0",
            "library": "libswitchyard-fixture-late.so",
            "kernels": [{"op": "late_op", "device": "cpu", "arch": "generic"}]})");
        manifest.close();
        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components, builtin_backends};
        DeviceRegistry devices;
        const auto path = PluginSearchPath::from_dirs({tmp.path().toStdString()});
        registry.set_plugin_discovery(path.discovery());
        ui::MainWindow window(registry, devices, path);
        child<ui::KernelMatrixView>(&window, "matrixView")->setTarget("cpu");
        QSignalSpy shown(&window, &ui::MainWindow::catalogShown);
        QVERIFY(shown.wait(20000));
        // The first catalog: discovered, not loaded -- unless the matrix's resolution (on the
        // same worker) already ran before the catalog was collected; then there is no later
        // load to follow and the rest only checks the tree agrees with the registry.
        const auto* first = window.catalog()->backend("fixture-late");
        QVERIFY(first);
        QVERIFY2(first->state == BackendState::Discovered || first->state == BackendState::Loaded,
                 std::string(to_string(first->state)).c_str());
        // The resolution of every op for "cpu" reaches (late_op, cpu, generic, default): the
        // plugin is loaded in the inspection worker, never in this process.
        auto* proxy = child<ui::BackendTreeView>(&window, "backendTree")->proxy();
        auto stateShown = [&] {
            const auto hits = proxy->match(proxy->index(0, 0), Qt::DisplayRole, "fixture-late", 1,
                                           Qt::MatchRecursive | Qt::MatchExactly);
            return hits.isEmpty()
                       ? QString()
                       : hits[0].siblingAtColumn(BackendTreeModel::StateColumn).data().toString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(stateShown(), QStringLiteral("loaded"), 20000);
        QCOMPARE(window.catalog()->backend("fixture-late")->state, BackendState::Loaded);
        QVERIFY(!registry.is_loaded("fixture-late"));
        // The chain came back from the worker (the library registers the good fixture's
        // cells, not late_op, so after its load nothing declares late_op any more).
        child<ui::KernelMatrixView>(&window, "matrixView")->setSelectedOp("late_op");
        auto* chain = child<ui::KernelMatrixView>(&window, "matrixView")->chainModel();
        QTRY_VERIFY_WITH_TIMEOUT(chain->resolution(), 20000);
        const auto late = chain->resolution();
        QCOMPARE(late->op, std::string("late_op"));
        QVERIFY(!late->winner);
        QVERIFY(window.statusText().contains(QStringLiteral("backends")));
        window.controller()->waitForIdle();
    }

    // Device backends are loaded, and their devices listed, in the inspection worker, never
    // in the GUI's process: a provider that aborts while listing its devices is
    // Failed with hook_crashed in the tree, and the well-behaved one's device is shown.
    void deviceBackendsAreListedInAWorker() {
        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components, builtin_backends};
        DeviceRegistry devices;
        const auto path =
            PluginSearchPath::from_dirs({(kPlugins + "/device_enum_abort").toStdString(),
                                         (kPlugins + "/device_good").toStdString()});
        registry.set_plugin_discovery(path.discovery());
        ui::MainWindow window(registry, devices, path);
        QSignalSpy shown(&window, &ui::MainWindow::catalogShown);
        QVERIFY(shown.wait(60000));
        const auto* bad = window.catalog()->backend("fixture-device-enum-abort");
        QVERIFY(bad);
        QCOMPARE(bad->state, BackendState::Failed);
        QCOMPARE(bad->cause, BackendCause::HookCrashed);
        QVERIFY2(bad->error.find("SIGABRT") != std::string::npos, bad->error.c_str());
        const auto* good = window.catalog()->backend("fixture-device-good");
        QVERIFY(good);
        QCOMPARE(good->state, BackendState::Loaded); // as the worker saw it
        QVERIFY(!registry.is_loaded("fixture-device-good"));
        QVERIFY(!registry.is_loaded("fixture-device-enum-abort"));
        QStringList ids;
        for (const auto& d : window.catalog()->doctor.devices)
            ids << QString::fromStdString(d.id);
        QVERIFY2(ids.contains("fx_good:0"), qPrintable(ids.join(',')));
        // Its cells were registered in the worker, not here: the capabilities panel says so
        // instead of calling every declared cell "NOT registered".
        auto* tree = child<ui::BackendTreeView>(&window, "backendTree");
        QVERIFY(tree->selectBackend("fixture-device-good"));
        const QString cells =
            child<QLabel>(child<ui::CapabilitiesPanel>(&window, "capabilitiesPanel"), "cells")
                ->text();
        QVERIFY2(cells.contains("ran in the inspection worker") &&
                     !cells.contains("NOT registered"),
                 qPrintable(cells));
        window.controller()->waitForIdle();
    }

    // The scale benchmark, run by tests/bench/scale.sh over 1,000 generated
    // plugins of 100 kernel cells each: cold start (registry, discovery, window, catalog on
    // the worker) to a painted window with the tree and the matrix populated, then one
    // search keystroke until the tree is painted again. Skipped in the default ctest run.
    void coldStartAtScale() {
        const QByteArray dir = qgetenv("SWITCHYARD_SCALE_PLUGIN_DIR");
        if (dir.isEmpty())
            QSKIP("set SWITCHYARD_SCALE_PLUGIN_DIR to a folder of generated manifests "
                  "(tests/bench/scale.sh does)");
        QElapsedTimer t;
        t.start();
        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components, builtin_backends};
        DeviceRegistry devices;
        const auto path = PluginSearchPath::from_dirs({dir.toStdString()});
        registry.set_plugin_discovery(path.discovery());
        ui::MainWindow window(registry, devices, path);
        window.resize(1280, 780);
        QSignalSpy shown(&window, &ui::MainWindow::catalogShown);
        window.show();
        QVERIFY(shown.wait(120000));
        const auto catalogMs = t.elapsed();
        window.grab(); // lays out and paints the populated window
        const auto startMs = t.elapsed();
        auto* proxy = child<ui::BackendTreeView>(&window, "backendTree")->proxy();
        QVERIFY(proxy->rowCount() > 0);
        QVERIFY(child<ui::KernelMatrixView>(&window, "matrixView")->model()->rowCount() > 0);
        QVERIFY(window.catalog()->kernels.size() >= 100000);
        t.restart();
        QTest::keyClick(
            child<QLineEdit>(child<ui::BackendTreeView>(&window, "backendTree"), "backendSearch"),
            '7');
        child<ui::BackendTreeView>(&window, "backendTree")->grab();
        const auto keyMs = t.elapsed();
        qInfo("scale: GUI cold start to a populated window %lld ms (catalog shown at %lld ms), "
              "one search keystroke %lld ms; %zu backends, %zu kernel cells, matrix %d x %d",
              startMs, catalogMs, keyMs, window.catalog()->backends.size(),
              window.catalog()->kernels.size(),
              child<ui::KernelMatrixView>(&window, "matrixView")->model()->rowCount(),
              child<ui::KernelMatrixView>(&window, "matrixView")->model()->columnCount());
        window.controller()->waitForIdle();
    }

    void settingsRoundTrip() {
        {
            Fixture f;
            ui::MainWindow window(f.registry, f.devices, f.path);
            window.show();
            QTRY_VERIFY_WITH_TIMEOUT(window.catalog() != nullptr, 20000);
            child<ui::KernelMatrixView>(&window, "matrixView")->setTarget("cuda:sm_80");
            child<ui::BackendTreeView>(&window, "backendTree")->tagChip("experimental")->click();
            child<QComboBox>(child<ui::BackendTreeView>(&window, "backendTree"), "groupingBox")
                ->setCurrentIndex(1);
            child<QTabWidget>(&window, "mainTabs")->setCurrentIndex(ui::MainWindow::MatrixTab);
            QVERIFY(window.close()); // writes the settings
            window.controller()->waitForIdle();
        }
        Fixture f;
        ui::MainWindow window(f.registry, f.devices, f.path);
        QTRY_VERIFY_WITH_TIMEOUT(window.catalog() != nullptr, 20000);
        QCOMPARE(child<ui::KernelMatrixView>(&window, "matrixView")->target(),
                 QStringLiteral("cuda:sm_80"));
        QVERIFY(!child<ui::BackendTreeView>(&window, "backendTree")
                     ->proxy()
                     ->excludedTags()
                     .contains("experimental"));
        QVERIFY(child<ui::BackendTreeView>(&window, "backendTree")
                    ->proxy()
                    ->excludedTags()
                    .contains("debug"));
        QCOMPARE(child<QComboBox>(child<ui::BackendTreeView>(&window, "backendTree"), "groupingBox")
                     ->currentIndex(),
                 1);
        QCOMPARE(child<QTabWidget>(&window, "mainTabs")->currentIndex(),
                 int(ui::MainWindow::MatrixTab));
        // View > CPU ISA level cap keeps the choice for the next start.
        auto* menu = window.findChild<QMenu*>(QStringLiteral("isaCapMenu"));
        QVERIFY(menu);
        QAction* v2 = nullptr;
        for (auto* a : menu->actions())
            if (a->data().toString() == "x86-64-v2")
                v2 = a;
        QVERIFY(v2);
        v2->trigger();
        QCOMPARE(QSettings().value(ui::kIsaCapKey).toString(), QStringLiteral("x86-64-v2"));
        bool said = false;
        for (const auto* l : window.findChildren<QLabel*>())
            said |= l->text().contains("takes effect when Switchyard starts again");
        QVERIFY(said);
        menu->actions().front()->trigger(); // None
        QVERIFY(!QSettings().contains(ui::kIsaCapKey));
        // View > CPU for 1-thread measurements: automatic, none, and each CPU this process may
        // run on; the choice is kept for the next start.
        auto* pins = window.findChild<QMenu*>(QStringLiteral("pinCpuMenu"));
        QVERIFY(pins);
        QStringList offered;
        for (auto* a : pins->actions())
            offered << a->data().toString();
        QStringList expected{QString(), QStringLiteral("off")};
        for (int c : process_cpu_ids())
            expected << QString::number(c);
        QCOMPARE(offered, expected);
        pins->actions().at(1)->trigger();
        QCOMPARE(QSettings().value(ui::kPinCpuKey).toString(), QStringLiteral("off"));
        pins->actions().last()->trigger();
        QCOMPARE(QSettings().value(ui::kPinCpuKey).toString(), expected.last());
        said = false;
        for (const auto* l : window.findChildren<QLabel*>())
            said |= l->text().startsWith("1-thread CPU " + expected.last() +
                                         ": takes effect when Switchyard starts again");
        QVERIFY(said);
        pins->actions().front()->trigger(); // automatic
        QVERIFY(!QSettings().contains(ui::kPinCpuKey));
        QSettings().clear();
    }
};

QTEST_MAIN(TestExplorer)
#include "tst_explorer.moc"
