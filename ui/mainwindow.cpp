// SPDX-License-Identifier: MIT
#include "mainwindow.h"

#include "models/backendtreemodel.h"
#include "models/qtstring.h"
#include "views/backendtreeview.h"
#include "views/kernelmatrixview.h"
#include "views/panels.h"
#include "views/viewsupport.h"

#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/sdk/version.h>

#include <algorithm>
#include <cstdlib>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QGuiApplication>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>

namespace switchyard::ui {

MainWindow::MainWindow(BackendRegistry& registry, DeviceRegistry& devices, PluginSearchPath path,
                       QWidget* parent)
    : QMainWindow(parent),
      m_controller(new CatalogController(registry, devices, std::move(path), this)),
      m_tree(new BackendTreeView), m_tabs(new QTabWidget), m_capabilities(new CapabilitiesPanel),
      m_dependencies(new DependenciesPanel), m_matrix(new KernelMatrixView),
      m_hardware(new HardwarePanel), m_problems(new ProblemsView), m_status(new QLabel),
      m_busy(new QLabel) {
    setWindowTitle(tr("Switchyard"));
    setObjectName(QStringLiteral("MainWindow"));
    identify(m_tabs, "mainTabs", tr("Panels"),
             tr("The selected backend's panels, the matrix, hardware, problems, profiler, "
                "comparison and fleet (Alt+1 … Alt+8)"));
    identify(m_status, "statusText", tr("Status"));
    auto* dock = new QDockWidget(tr("Backends"), this);
    dock->setObjectName(QStringLiteral("backendDock"));
    dock->setWidget(m_tree);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {400}, Qt::Horizontal);
    m_tabs->addTab(m_capabilities, tr("Capabilities"));
    m_tabs->addTab(m_dependencies, tr("Dependencies"));
    m_tabs->addTab(m_matrix, tr("Kernel matrix"));
    m_tabs->addTab(m_hardware, tr("Hardware"));
    m_tabs->addTab(m_problems, tr("Problems"));
    setupProfiler();
    setCentralWidget(m_tabs);
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_busy);
    m_status->setText(tr("Discovering backends…"));
    setupMenus();

    connect(m_tree, &BackendTreeView::backendSelected, this, &MainWindow::showBackend);
    connect(m_tree, &BackendTreeView::opSelected, m_matrix, &KernelMatrixView::setSelectedOp);
    connect(m_problems, &ProblemsView::subjectActivated, this, [this](const QString& subject) {
        if (m_tree->selectBackend(subject))
            m_tabs->setCurrentIndex(DependenciesTab);
    });
    connect(m_matrix, &KernelMatrixView::targetChanged, m_controller,
            &CatalogController::resolveTarget);
    connect(m_controller, &CatalogController::catalogAvailable, this, &MainWindow::showCatalog);
    connect(m_controller, &CatalogController::catalogFailed, this, [this](const QString& e) {
        m_status->setText(tr("Could not collect the catalog: %1").arg(e));
    });
    connect(m_controller, &CatalogController::targetResolved, m_matrix,
            &KernelMatrixView::setResolution);
    connect(m_controller, &CatalogController::targetFailed, m_matrix,
            &KernelMatrixView::setResolutionError);
    connect(m_controller, &CatalogController::busyChanged, this,
            [this](bool busy) { m_busy->setText(busy ? tr("Working…") : QString()); });

    // A first start fits the screen (a remembered geometry, restored below, wins).
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        resize(firstStartSize(screen->availableGeometry().size()));
    else
        resize(firstStartSize(QSize(1366, 728)));
    readSettings();
    m_controller->refresh();
}

MainWindow::~MainWindow() = default;

QSize MainWindow::firstStartSize(const QSize& available) {
    // Leave room for the window frame; never wider or taller than the area itself.
    const int w = std::min(1400, std::max(640, available.width() - 40));
    const int h = std::min(860, std::max(480, available.height() - 40));
    return {std::min(w, available.width()), std::min(h, available.height())};
}

bool MainWindow::selectBackend(const QString& name) {
    return m_tree->selectBackend(name);
}

void MainWindow::showOp(const QString& op) {
    m_matrix->setSelectedOp(op);
}

void MainWindow::setMatrixTarget(const QString& target) {
    m_matrix->setTarget(target);
}

void MainWindow::setupMenus() {
    auto* file = menuBar()->addMenu(tr("&File"));
    setupReportMenu(file);
    auto* rescan = file->addAction(tr("&Rescan plugins"), this, [this] {
        m_status->setText(tr("Rescanning…"));
        m_controller->refresh(true);
    });
    rescan->setShortcut(QKeySequence::Refresh); // F5
    auto* copyReport = file->addAction(tr("Copy &diagnostic report"), this, [this] {
        if (m_catalog)
            QApplication::clipboard()->setText(qs(m_catalog->doctorMarkdown));
    });
    copyReport->setShortcut(QKeySequence(tr("Ctrl+Shift+C")));
    file->addSeparator();
    auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    auto* edit = menuBar()->addMenu(tr("&Edit"));
    auto* find = edit->addAction(tr("&Find backend…"), m_tree, &BackendTreeView::focusSearch);
    find->setShortcut(QKeySequence::Find);

    auto* view = menuBar()->addMenu(tr("&View"));
    const QString names[] = {tr("&Capabilities"), tr("&Dependencies"), tr("Kernel &matrix"),
                             tr("&Hardware"), tr("&Problems")};
    for (int i = 0; i < 5; ++i) {
        auto* a = view->addAction(names[i], this, [this, i] { m_tabs->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + i)));
    }
    const QString more[] = {tr("P&rofiler"), tr("C&ompare"), tr("F&leet")};
    for (int i = 0; i < 3; ++i) {
        const int tab = ProfilerTab + i;
        auto* a = view->addAction(more[i], this, [this, tab] { m_tabs->setCurrentIndex(tab); });
        a->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + tab)));
    }
    view->addSeparator();
    // What a smaller CPU would pick: detection is read once per process, so the cap (kept in
    // the settings, read by main() before anything detects the CPU) applies at the next start.
    const auto& cap = cpu_isa_cap();
    QList<StartupChoice> caps{{QString(), tr("None (what the CPU runs)")}};
    for (const auto& c : isa_cap_choices())
        caps.push_back({qs(c), qs(c)});
    addStartupChoiceMenu(view, tr("CPU &ISA level cap"), "isaCapMenu", kIsaCapKey, caps,
                         [this, &cap](const QString& c) {
                             return tr("ISA cap %1: takes effect when Switchyard starts again "
                                       "(now: %2)")
                                 .arg(c.isEmpty() ? tr("removed") : c,
                                      cap.level.empty() ? tr("no cap")
                                                        : tr("capped at %1").arg(qs(cap.level)));
                         });
    // The CPU 1-thread probes and rows run on: likewise chosen once per process (at the first
    // measurement), so the choice applies at the next start.
    const auto pinName = [this](const QString& c) {
        return c.isEmpty() ? tr("automatic") : c == QLatin1String("off") ? tr("none") : c;
    };
    QList<StartupChoice> pins{{QString(), tr("Automatic (the CPU Switchyard is on)")},
                              {QStringLiteral("off"), tr("None (unpinned)")}};
    for (int c : process_cpu_ids())
        pins.push_back({QString::number(c), tr("CPU %1").arg(c)});
    // What this run's workers follow: the variable main() set from the settings or --pin-cpu.
    const char* pinEnv = std::getenv("SWITCHYARD_PIN_CPU");
    const QString pinNow = pinEnv && *pinEnv ? QString::fromLocal8Bit(pinEnv) : QString();
    addStartupChoiceMenu(view, tr("CPU for &1-thread measurements"), "pinCpuMenu", kPinCpuKey, pins,
                         [this, pinName, pinNow](const QString& c) {
                             return tr("1-thread CPU %1: takes effect when Switchyard starts "
                                       "again (now: %2)")
                                 .arg(pinName(c), pinName(pinNow));
                         });
    setupProfileMenu();
    auto* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Switchyard"), this, &MainWindow::about)
        ->setMenuRole(QAction::AboutRole);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);

    auto* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolbar"));
    toolbar->addAction(rescan);
    toolbar->addAction(copyReport);
}

void MainWindow::addStartupChoiceMenu(QMenu* parent, const QString& title, const char* objectName,
                                      const char* key, const QList<StartupChoice>& choices,
                                      const std::function<QString(const QString&)>& said) {
    auto* menu = parent->addMenu(title);
    menu->setObjectName(QLatin1String(objectName));
    auto* group = new QActionGroup(menu);
    const QString saved = QSettings().value(QLatin1String(key)).toString();
    for (const auto& choice : choices) {
        auto* a = menu->addAction(choice.label);
        a->setCheckable(true);
        a->setData(choice.value);
        a->setChecked(choice.value == saved);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [this, key, value = choice.value, said] {
            QSettings s;
            s.setAtomicSyncRequired(true);
            if (value.isEmpty())
                s.remove(QLatin1String(key));
            else
                s.setValue(QLatin1String(key), value);
            m_status->setText(said(value));
        });
    }
}

void MainWindow::showCatalog(const CatalogPtr& catalog) {
    m_catalog = catalog;
    m_tree->setResults(catalog);
    m_problems->setResults(*catalog);
    m_hardware->setResults(*catalog);
    m_matrix->setResults(catalog);
    m_controller->resolveTarget(m_matrix->target());
    // The panels show the selected backend from the new catalog.
    showBackend(m_tree->currentBackend());
    updateStatus();
    emit catalogShown();
}

void MainWindow::showBackend(const BackendInfo* backend) {
    m_capabilities->setBackend(backend, m_catalog.get());
    m_dependencies->setBackend(backend, m_catalog.get());
}

void MainWindow::updateStatus() {
    if (!m_catalog)
        return;
    const auto& b = m_catalog->backends;
    const auto usable =
        std::count_if(b.begin(), b.end(), [](const BackendInfo& i) { return i.is_available(); });
    const auto errors = std::count_if(
        m_catalog->doctor.problems.begin(), m_catalog->doctor.problems.end(),
        [](const DoctorProblem& p) { return p.severity == DoctorProblem::Severity::Error; });
    m_status->setText(tr("Switchyard core %1 · %2 backends (%3 usable) · %4 kernel cells · %5 "
                         "problems (%6 errors)")
                          .arg(qs(core_version()))
                          .arg(b.size())
                          .arg(usable)
                          .arg(m_catalog->kernels.size())
                          .arg(m_catalog->doctor.problems.size())
                          .arg(errors));
}

QString MainWindow::statusText() const {
    return m_status->text();
}

void MainWindow::about() {
    QString options;
    if (m_catalog) {
        const auto& build = m_catalog->doctor.build;
        options =
            tr("<p>Git %1, %2 build, %3<br>Backend contract %4</p>")
                .arg(qs(build.git_hash), qs(build.build_type), qs(build.compiler).toHtmlEscaped())
                .arg(build.contract_version);
        options += QStringLiteral("<p>");
        for (const auto& [k, v] : build.options)
            options += QStringLiteral("%1 = %2<br>").arg(qs(k), qs(v));
        options += QStringLiteral("</p>");
    }
    QMessageBox box(this);
    box.setWindowTitle(tr("About Switchyard"));
    box.setTextFormat(Qt::RichText);
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.setText(tr("<h3>Switchyard %1</h3><p>Compute backend explorer and kernel profiler.</p>"
                   "<p>Core %2 · Qt %3 (built with %4)</p>%5")
                    .arg(QApplication::applicationVersion(), qs(core_version()),
                         QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR), options));
    box.exec();
}

void MainWindow::readSettings() {
    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    for (auto* splitter : findChildren<QSplitter*>())
        if (!splitter->objectName().isEmpty())
            splitter->restoreState(
                s.value(QStringLiteral("splitters/") + splitter->objectName()).toByteArray());
    m_tabs->setCurrentIndex(s.value(QStringLiteral("window/tab"), 0).toInt());
    m_tree->setGrouping(s.value(QStringLiteral("filters/grouping"), 0).toInt());
    m_tree->setShowUnavailable(s.value(QStringLiteral("filters/showUnavailable"), true).toBool());
    if (s.contains(QStringLiteral("filters/excludedTags"))) {
        const auto list = s.value(QStringLiteral("filters/excludedTags")).toStringList();
        m_tree->proxy()->setExcludedTags(QSet<QString>(list.begin(), list.end()));
    }
    const QString target = s.value(QStringLiteral("matrix/target")).toString();
    if (!target.isEmpty())
        m_matrix->setTarget(target);
}

void MainWindow::writeSettings() {
    QSettings s; // written through a temporary file and renamed (QSettings' atomic sync)
    s.setAtomicSyncRequired(true);
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    s.setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
    for (auto* splitter : findChildren<QSplitter*>())
        if (!splitter->objectName().isEmpty())
            s.setValue(QStringLiteral("splitters/") + splitter->objectName(),
                       splitter->saveState());
    s.setValue(QStringLiteral("filters/grouping"), m_tree->grouping());
    s.setValue(QStringLiteral("filters/showUnavailable"), m_tree->showUnavailable());
    const auto excluded = m_tree->proxy()->excludedTags();
    s.setValue(QStringLiteral("filters/excludedTags"),
               QStringList(excluded.begin(), excluded.end()));
    s.setValue(QStringLiteral("matrix/target"), m_matrix->target());
    s.sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    writeSettings();
    event->accept();
}

QStringList MainWindow::saveScreenshots(const QString& dir, const QString& prefix) {
    QDir().mkpath(dir);
    QStringList paths;
    const char* names[] = {"capabilities", "dependencies", "matrix", "hardware", "problems"};
    for (int i = 0; i < std::min(m_tabs->count(), 5); ++i) {
        m_tabs->setCurrentIndex(i);
        QApplication::processEvents();
        const QString path =
            QStringLiteral("%1/%2-%3.png").arg(dir, prefix, QLatin1String(names[i]));
        if (grab().save(path))
            paths << path;
    }
    return paths;
}

} // namespace switchyard::ui
