// SPDX-License-Identifier: MIT
// MainWindow's profiler half: the Profiler and Compare tabs, the report items of
// the File menu (open, save, compare, export, recent files), drag and drop, and the
// matrix's "Profile" entry. Kept apart from mainwindow.cpp (the explorer).
#include "mainwindow.h"
#include "models/qtstring.h"

#include "controllers/abruncontroller.h"
#include "controllers/fleetloader.h"
#include "controllers/profilecontroller.h"
#include "models/comparemodel.h"
#include "models/kernelmatrixmodel.h"
#include "models/resultsmodel.h"
#include "views/abview.h"
#include "views/compareview.h"
#include "views/fleetview.h"
#include "views/kernelmatrixview.h"
#include "views/plotsview.h"
#include "views/profileview.h"

#include <switchyard/report/report.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/tuning/tune.h>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTableView>
#include <QTabWidget>

#include <qcustomplot.h>

#include <algorithm>
#include <utility>

namespace switchyard::ui {

namespace {
constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("reports/recent");
const QString kReportFilter = QStringLiteral("Switchyard reports (*.json);;All files (*)");
} // namespace

void MainWindow::setupProfiler() {
    m_profileController = new ProfileController(this);
    m_profile = new ProfileView(m_profileController);
    m_compare = new CompareView;
    m_compare->abView()->setController(new AbRunController(this));
    m_tabs->addTab(m_profile, tr("Profiler"));
    m_tabs->addTab(m_compare, tr("Compare"));
    m_fleetView = new FleetView;
    m_fleetLoader = new FleetLoader(this);
    m_tabs->addTab(m_fleetView, tr("Fleet"));
    m_fleetView->setLoader(m_fleetLoader);
    connect(m_fleetLoader, &FleetLoader::fleetAvailable, this, [this](const FleetPtr& fleet) {
        m_fleetView->setFleet(*fleet);
        int failed = 0;
        for (const auto& i : fleet->issues)
            failed += i.fatal;
        for (const auto& i : fleet->issues)
            if (i.fatal)
                reportError(tr("Cannot open %1: %2").arg(i.file, i.error));
        if (!fleet->error.isEmpty())
            reportError(fleet->error);
        m_status->setText(
            tr("Fleet %1: %2 reports read in %3 s%4")
                .arg(fleet->folder)
                .arg(m_fleetView->model()->reportCount())
                .arg(fleet->seconds, 0, 'f', 2)
                .arg(failed ? tr(", %1 could not be read (listed in the Fleet tab)").arg(failed)
                            : QString()));
    });
    setAcceptDrops(true);
    connect(m_matrix, &KernelMatrixView::profileRequested, this,
            [this](const QStringList& ops, const QStringList& devices, bool all) {
                m_profile->setChoices(ops, devices, all);
                m_tabs->setCurrentIndex(ProfilerTab);
                m_status->setText(tr("Profiler: %1 on %2 — press Run")
                                      .arg(ops.join(QStringLiteral(", ")),
                                           devices.isEmpty() ? tr("every device")
                                                             : devices.join(QStringLiteral(", "))));
            });
    connect(this, &MainWindow::catalogShown, this, [this] {
        if (m_catalog)
            m_profile->setDevices(m_catalog->doctor.devices);
    });
    // The matrix flags the cells a finished run (or an opened report) found a faster cell
    // than: "is my fallback chain right on this machine?".
    auto flagRegret = [this] { m_matrix->model()->setDispatch(m_profile->model()->dispatch()); };
    connect(m_profile, &ProfileView::runFinished, this, flagRegret);
    connect(m_profile, &ProfileView::reportChanged, this, flagRegret);
}

void MainWindow::setupProfileMenu() {
    auto* menu = menuBar()->addMenu(tr("&Profile"));
    auto* run = menu->addAction(tr("&Run"), this, [this] {
        m_tabs->setCurrentIndex(ProfilerTab);
        startProfile();
    });
    run->setShortcut(QKeySequence(tr("Ctrl+R")));
    auto* cancel = menu->addAction(tr("&Cancel run"), this, &MainWindow::cancelProfile);
    cancel->setShortcut(QKeySequence(tr("Ctrl+.")));
    cancel->setEnabled(false);
    auto update = [run, cancel, this] {
        run->setEnabled(!isProfiling());
        cancel->setEnabled(isProfiling());
    };
    connect(m_profile, &ProfileView::reportChanged, this, update);
    connect(m_profile, &ProfileView::runFinished, this, update);
    connect(m_profile, &ProfileView::runFinished, this, &MainWindow::profileFinished);
    setupCeilingsMenu(menu);
    setupTuningMenu(menu);
}

void MainWindow::setupTuningMenu(QMenu* profileMenu) {
    profileMenu->addSeparator();
    auto* tune = profileMenu->addAction(tr("&Tune dispatch"), this, [this] {
        m_tabs->setCurrentIndex(ProfilerTab);
        tuneDispatch();
    });
    tune->setObjectName(QStringLiteral("tuneDispatchAction"));
    tune->setToolTip(tr("Measure every variant of the chosen ops and keep, per size range, the "
                        "cell that beats the fallback chain's pick (a tuning file resolve and "
                        "profile follow)"));
    auto* follow = profileMenu->addAction(tr("&Follow tuning files"));
    follow->setObjectName(QStringLiteral("followTuningAction"));
    follow->setCheckable(true);
    follow->setChecked(QSettings().value(QLatin1String(kFollowTuningKey), true).toBool());
    m_profile->setFollowTuning(follow->isChecked());
    connect(follow, &QAction::toggled, this, &MainWindow::setFollowTuning);
    connect(m_profile, &ProfileView::runFinished, this, &MainWindow::writeTuning);
    // The kernel matrix marks the cells the tuning files choose here: the catalog reads them
    // (off the GUI thread), so a new tuning file means a new snapshot.
    connect(this, &MainWindow::tuningWritten, m_controller, [this] { m_controller->refresh(); });
    connect(this, &MainWindow::catalogShown, this, &MainWindow::markTunedCells);
}

void MainWindow::markTunedCells() {
    const bool follow = QSettings().value(QLatin1String(kFollowTuningKey), true).toBool();
    m_matrix->model()->setTunings(follow && m_catalog ? m_catalog->tunings
                                                      : std::vector<TuningStanding>{});
}

void MainWindow::setFollowTuning(bool follow) {
    QSettings s;
    s.setAtomicSyncRequired(true);
    s.setValue(QLatin1String(kFollowTuningKey), follow);
    m_profile->setFollowTuning(follow);
    markTunedCells();
    m_status->setText(follow ? tr("Profile runs follow the tuning files")
                             : tr("Profile runs resolve by the fallback chain alone"));
}

bool MainWindow::tuneDispatch() {
    m_tuning = m_profile->run([](ProfileSettings& s) {
        s.all_variants = true; // every cell competes with the chain's pick ...
        s.use_tuning = false;  // ... the chain's own, not an earlier tuning's
        s.repeat = std::max<std::int64_t>(s.repeat, 3);
    });
    if (m_tuning)
        m_status->setText(tr("Tuning: measuring every variant…"));
    return m_tuning;
}

void MainWindow::writeTuning(bool cancelled) {
    if (!std::exchange(m_tuning, false))
        return;
    if (cancelled) {
        m_tuningSummary = tr("Tuning cancelled: nothing written");
    } else {
        try {
            m_tuningSummary = qs(tune_and_write(m_profile->report(), {}, {}).summary());
        } catch (const std::exception& e) {
            m_tuningSummary = tr("Tuning not written: %1").arg(qs(e.what()));
        }
    }
    for (const auto& line : m_tuningSummary.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        m_profile->appendLog(line);
    m_status->setText(m_tuningSummary.section(QLatin1Char('\n'), 0, 0));
    // Copyable, and not in the way: the window stays usable while it is open.
    auto* box = new QMessageBox(QMessageBox::Information, tr("Tune dispatch"), m_tuningSummary,
                                QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("tuningSummaryBox"));
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    emit tuningWritten(m_tuningSummary);
}

void MainWindow::setupCeilingsMenu(QMenu* profileMenu) {
    // The CPU ceilings a run is judged by: the set kept from an earlier run of this machine,
    // core and kernel while it is younger than the limit chosen here, else measured and kept.
    auto* menu = profileMenu->addMenu(tr("CPU &ceilings"));
    menu->setObjectName(QStringLiteral("ceilingsMenu"));
    double fallback = kDefaultCeilingsMaxAgeDays;
    try {
        fallback = default_ceilings_max_age_days();
    } catch (const std::invalid_argument&) {
        // a bad SWITCHYARD_CEILINGS_MAX_AGE: the core's default (the CLI refuses it)
    }
    bool ok = false;
    const double saved =
        QSettings().value(QLatin1String(kCeilingsMaxAgeKey)).toString().toDouble(&ok);
    CeilingCachePolicy policy;
    policy.max_age_days = ok && saved >= 0 ? saved : fallback;
    m_profileController->setCeilingPolicy(policy);
    auto* group = new QActionGroup(menu);
    const double choices[] = {1, 7, 30, 0};
    for (const double days : choices) {
        auto* a = menu->addAction(days > 0 ? tr("Reuse for up to %n day(s)", nullptr, int(days))
                                           : tr("Measure at every run"));
        a->setCheckable(true);
        a->setChecked(days == policy.max_age_days);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [this, days] {
            QSettings s;
            s.setAtomicSyncRequired(true);
            s.setValue(QLatin1String(kCeilingsMaxAgeKey), days);
            auto p = m_profileController->ceilingPolicy();
            p.max_age_days = days;
            m_profileController->setCeilingPolicy(p);
            m_status->setText(days > 0 ? tr("CPU ceilings: a kept set is reused for up to %n "
                                            "day(s)",
                                            nullptr, int(days))
                                       : tr("CPU ceilings: measured at every run"));
        });
    }
    menu->addSeparator();
    auto* fresh = menu->addAction(tr("Measure &again at the next run"), this, [this] {
        m_profileController->measureCeilingsNextRun();
        m_status->setText(tr("CPU ceilings: the next run measures them and keeps the new set"));
    });
    fresh->setObjectName(QStringLiteral("freshCeilingsAction"));
}

void MainWindow::prepareProfile(const QStringList& ops, const QStringList& devices,
                                bool allVariants, const QString& sizes, double budget) {
    m_profile->setChoices(ops, devices, allVariants);
    if (!sizes.isEmpty())
        m_profile->setSizes(sizes);
    if (budget > 0)
        m_profile->setBudget(budget);
}

bool MainWindow::startProfile() {
    return m_profile->run();
}

void MainWindow::cancelProfile() {
    m_profile->cancel();
}

bool MainWindow::isProfiling() const {
    return m_profile->isRunning();
}

bool MainWindow::hasProfileRows() const {
    return m_profile->hasRows();
}

void MainWindow::setupReportMenu(QMenu* file) {
    auto* open = file->addAction(tr("&Open report…"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open report"), QString(), kReportFilter);
        if (!path.isEmpty())
            openReport(path);
    });
    open->setShortcut(QKeySequence::Open);
    auto* save = file->addAction(tr("&Save report…"), this, [this] {
        if (!m_profile->hasRows()) {
            QMessageBox::information(this, tr("Save report"),
                                     tr("There are no rows to save: run a profile first."));
            return;
        }
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save report"), QStringLiteral("report.json"), kReportFilter);
        if (path.isEmpty())
            return;
        const QString error = saveReport(path);
        if (!error.isEmpty())
            QMessageBox::critical(this, tr("Save report"), error);
    });
    save->setShortcut(QKeySequence::Save);
    file->addAction(tr("&Compare reports…"), this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(
            this, tr("Compare reports (choose two or more)"), QString(), kReportFilter);
        if (!paths.isEmpty())
            compareReports(paths);
    });
    file->addAction(tr("Open &fleet folder…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Open a folder of reports (report*.json)"));
        if (!dir.isEmpty())
            openFleetFolder(dir);
    });
    m_recentMenu = file->addMenu(tr("Recent &reports"));
    updateRecentMenu();
    file->addSeparator();
    file->addAction(tr("Export results table as &CSV…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export table"), QStringLiteral("results.csv"), tr("CSV (*.csv)"));
        if (path.isEmpty())
            return;
        const QString error = m_profile->exportCsv(path);
        if (!error.isEmpty())
            reportError(error);
    });
    // The plots' own Export button does the same.
    file->addAction(PlotsView::canExportSvg() ? tr("Export current &plot (PNG/PDF/SVG)…")
                                              : tr("Export current &plot (PNG/PDF)…"),
                    m_profile->plots(), &PlotsView::exportCurrentPlot);
    connect(m_profile->plots(), &PlotsView::exportFailed, this, &MainWindow::reportError);
    file->addSeparator();
}

QString MainWindow::openReport(const QString& path) {
    try {
        const Report report = Report::load(path.toStdString());
        m_profile->setReport(report, QFileInfo(path).fileName());
        addRecentReport(path);
        m_tabs->setCurrentIndex(ProfilerTab);
        m_status->setText(tr("Opened %1: %2 rows").arg(path).arg(report.rows.size()));
        return {};
    } catch (const std::exception& e) {
        const QString error = tr("Cannot open %1: %2").arg(path, qs(e.what()));
        reportError(error);
        return error;
    }
}

QString MainWindow::saveReport(const QString& path) {
    try {
        m_profile->report().save(path.toStdString());
        addRecentReport(path);
        m_status->setText(tr("Saved %1 rows to %2").arg(m_profile->model()->rowCount()).arg(path));
        return {};
    } catch (const std::exception& e) {
        const QString error = tr("Could not save the report to %1: %2 — the previous file, if "
                                 "any, is unchanged.")
                                  .arg(path, qs(e.what()));
        reportError(error);
        return error;
    }
}

QString MainWindow::compareReports(const QStringList& paths) {
    if (paths.size() < 2) {
        const QString error = tr("Choose at least two reports to compare.");
        reportError(error);
        return error;
    }
    std::vector<Report> reports;
    QStringList names;
    for (const auto& p : paths) {
        try {
            reports.push_back(Report::load(p.toStdString()));
            names << QFileInfo(p).fileName();
        } catch (const std::exception& e) {
            const QString error = tr("Cannot open %1: %2").arg(p, qs(e.what()));
            reportError(error);
            return error;
        }
    }
    m_compare->setReports(reports, names);
    for (const auto& p : paths)
        addRecentReport(p);
    m_tabs->setCurrentIndex(CompareTab);
    m_status->setText(tr("Comparing %1 reports").arg(paths.size()));
    return {};
}

void MainWindow::openFleetFolder(const QString& folder) {
    m_fleetView->setLoading(folder);
    m_tabs->setCurrentIndex(FleetTab);
    m_status->setText(tr("Reading the reports in %1…").arg(folder));
    m_fleetLoader->open(folder);
}

void MainWindow::showCommandLineErrors(const QStringList& errors) {
    if (errors.isEmpty())
        return;
    for (const auto& e : errors)
        m_profile->appendLog(tr("error: %1").arg(e));
    m_status->setText(tr("Command line refused: %1").arg(errors.join(QStringLiteral("; "))));
}

void MainWindow::reportError(const QString& error) {
    m_status->setText(error);
    m_profile->appendLog(tr("error: %1").arg(error));
}

QStringList MainWindow::recentReports() const {
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::addRecentReport(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList list = recentReports();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings s;
    s.setAtomicSyncRequired(true); // temporary file + rename (QSaveFile), never in place
    s.setValue(kRecentKey, list);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList list = recentReports();
    for (int i = 0; i < list.size(); ++i) {
        const QString path = list[i];
        auto* a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(path), this,
                                          [this, path] { openReport(path); });
        a->setToolTip(path);
    }
    m_recentMenu->setEnabled(!list.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList paths;
    for (const auto& url : event->mimeData()->urls())
        if (url.isLocalFile())
            paths << url.toLocalFile();
    if (paths.isEmpty())
        return;
    event->acceptProposedAction();
    // A folder is a fleet; one report opens in the profiler; two or more are compared.
    if (paths.size() == 1 && QFileInfo(paths.front()).isDir())
        openFleetFolder(paths.front());
    else if (paths.size() == 1)
        openReport(paths.front());
    else
        compareReports(paths);
}

QStringList MainWindow::saveProfilerScreenshots(const QString& dir, const QString& prefix) {
    QDir().mkpath(dir);
    QStringList paths;
    auto shot = [&](const QString& name) {
        QApplication::processEvents();
        m_profile->plots()->replot();
        const QString path = QStringLiteral("%1/%2-%3.png").arg(dir, prefix, name);
        if (grab().save(path))
            paths << path;
    };
    m_tabs->setCurrentIndex(ProfilerTab);
    m_profile->showPane(ProfileView::PlotsPane);
    for (int i = 0; i < PlotsView::PlotCount; ++i) {
        const auto which = PlotsView::Plot(i);
        m_profile->plots()->setCurrentPlot(which);
        shot(QStringLiteral("profiler-") + PlotsView::plotName(which));
        const QString file =
            QStringLiteral("%1/%2-plot-%3.png").arg(dir, prefix, PlotsView::plotName(which));
        if (m_profile->plots()->exportPlot(which, file, 1000, 620))
            paths << file;
    }
    m_profile->showPane(ProfileView::ContextPane);
    shot(QStringLiteral("profiler-context"));
    m_profile->showPane(ProfileView::PlotsPane);
    if (m_compare->pairModel()->rowCount() > 0) {
        m_tabs->setCurrentIndex(CompareTab);
        m_compare->showPane(CompareView::PairPane);
        shot(QStringLiteral("compare"));
        if (m_compare->multiModel()->reportCount() > 2) {
            m_compare->showPane(CompareView::AllPane);
            shot(QStringLiteral("compare-all"));
        }
    }
    if (m_fleetView->model()->reportCount() > 0) {
        m_tabs->setCurrentIndex(FleetTab);
        m_fleetView->showPage(FleetView::ComparisonPage);
        shot(QStringLiteral("fleet"));
        if (!m_fleetView->tuning().classes.empty()) {
            m_fleetView->showPage(FleetView::TuningPage);
            shot(QStringLiteral("fleet-tuning"));
            m_fleetView->showPage(FleetView::ComparisonPage);
        }
    }
    return paths;
}

} // namespace switchyard::ui
