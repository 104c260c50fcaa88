// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/catalogcontroller.h"

#include <QList>
#include <QMainWindow>
#include <QString>

#include <functional>

class QLabel;
class QMenu;
class QTabWidget;

namespace switchyard::ui {

class BackendTreeView;
class CapabilitiesPanel;
class CompareView;
class DependenciesPanel;
class FleetLoader;
class FleetView;
class HardwarePanel;
class KernelMatrixView;
class ProblemsView;
class ProfileController;
class ProfileView;

/// The settings key of the GUI's ISA level cap (View ▸ CPU ISA level cap): main() applies it
/// as SWITCHYARD_MAX_ISA at start when neither --max-isa nor the variable is given.
inline constexpr const char* kIsaCapKey = "cpu/max_isa";
/// The settings key of the CPU for 1-thread measurements (View ▸ CPU for 1-thread
/// measurements): a CPU number or "off"; main() applies it as SWITCHYARD_PIN_CPU at start when
/// neither --pin-cpu nor the variable is given. Absent: the default CPU.
inline constexpr const char* kPinCpuKey = "cpu/pin_cpu";
/// The settings key of the days a cached set of CPU ceilings is used for (Profile ▸ CPU
/// ceilings): a number, 0 to measure every run. Absent: SWITCHYARD_CEILINGS_MAX_AGE, else the
/// core's default.
inline constexpr const char* kCeilingsMaxAgeKey = "profile/ceilings_max_age_days";
inline constexpr const char* kFollowTuningKey = "profile/follow_tuning";

/// The explorer: the backend tree (left dock) drives the capabilities and dependencies
/// panels; the kernel matrix, hardware and problems are tabs beside them. All core work
/// runs in the CatalogController, off the GUI thread.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(BackendRegistry& registry, DeviceRegistry& devices, PluginSearchPath path,
               QWidget* parent = nullptr);
    ~MainWindow() override;

    enum Tab {
        CapabilitiesTab,
        DependenciesTab,
        MatrixTab,
        HardwareTab,
        ProblemsTab,
        ProfilerTab,
        CompareTab,
        FleetTab
    };

    CatalogController* controller() const { return m_controller; }
    const CatalogPtr& catalog() const { return m_catalog; }
    FleetLoader* fleetLoader() const { return m_fleetLoader; }

    /// The window's first-start size on a screen whose available area is `available`: the
    /// tree and the panels without scrolling, down to a 1366×768 screen (its taskbar
    /// included), and no bigger than 1400×860 on a large one.
    static QSize firstStartSize(const QSize& available);

    // What the command line (and scripts) ask of the window; the views stay its own.
    /// Selects `name` in the backend tree; false when it is filtered out or unknown.
    bool selectBackend(const QString& name);
    /// The kernel matrix's op and target (the GUI's --op, --target).
    void showOp(const QString& op);
    void setMatrixTarget(const QString& target);
    /// Pre-fills the profiler (the GUI's --profile, --devices, --all-variants, --sizes,
    /// --budget): an empty `sizes` keeps the default sweep, a `budget` of 0 the default.
    void prepareProfile(const QStringList& ops, const QStringList& devices, bool allVariants,
                        const QString& sizes, double budget);
    /// Profile ▸ Run and Profile ▸ Cancel run; profileFinished follows a run that started.
    bool startProfile();
    void cancelProfile();
    bool isProfiling() const;
    bool hasProfileRows() const;
    /// Profile ▸ Tune dispatch: a run of every variant of the panel's ops, devices and sizes
    /// (at least 3 runs per row, the fallback chain's own picks); when it completes, the
    /// tuning it supports is written to the user's tuning file (tuning/tune.h,
    /// tune_and_write()) and tuningWritten follows with the summary. False when no run
    /// starts.
    bool tuneDispatch();
    /// Profile ▸ Follow tuning files (kept in the settings): profile runs follow them.
    void setFollowTuning(bool follow);
    /// The last Tune dispatch's summary ("1 tuned entry written to …", each entry, notes).
    QString tuningSummary() const { return m_tuningSummary; }

    // Reports (File menu, drag and drop, recent files). Each returns the error text (also
    // shown in the status bar and the profiler's log), or an empty string on success.
    QString openReport(const QString& path);
    /// Saves the profiler's rows and context; a failed save leaves the previous file intact.
    QString saveReport(const QString& path);
    /// Two or more reports into the Compare tab.
    QString compareReports(const QStringList& paths);
    /// A fleet folder (its report*.json files, as `switchyard-cli compare FOLDER` takes
    /// them) into the Fleet tab, read off the GUI thread; FleetView::fleetShown follows.
    void openFleetFolder(const QString& folder);
    QStringList recentReports() const;
    /// Screenshots of the profiler (table, each plot) and the comparison, plus each plot
    /// exported through QCustomPlot; returns the paths.
    QStringList saveProfilerScreenshots(const QString& dir, const QString& prefix);
    QString statusText() const;
    /// What the command line asked for and was refused (an unknown op, backend, device, a
    /// report that cannot be read): in the status bar, and each in the profiler's log.
    void showCommandLineErrors(const QStringList& errors);

    /// Saves one PNG per tab (window-sized) into `dir` with `prefix`; returns the paths.
    QStringList saveScreenshots(const QString& dir, const QString& prefix);

signals:
    /// A catalog arrived and every panel shows it.
    void catalogShown();
    /// A profile run ended (or could not go on).
    void profileFinished(bool cancelled);
    /// Tune dispatch wrote its tuning (or said why it could not): the summary.
    void tuningWritten(const QString& summary);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void setupProfiler();
    void setupCeilingsMenu(QMenu* profileMenu);
    void setupTuningMenu(QMenu* profileMenu);
    void writeTuning(bool cancelled);
    /// The kernel matrix's ⚙ marks: the tuning files' entries that apply here (none while
    /// Profile ▸ Follow tuning files is off).
    void markTunedCells();
    void setupReportMenu(QMenu* file);
    void setupProfileMenu();
    void addRecentReport(const QString& path);
    void updateRecentMenu();
    void reportError(const QString& error);
    void setupMenus();
    /// One of a View submenu's exclusive choices: the value kept in the settings (empty: the
    /// key removed, the default) and the action's text.
    struct StartupChoice {
        QString value;
        QString label;
    };
    /// A submenu of `parent` whose choice is kept under the settings `key` for main() to
    /// apply at the next start; the status line then says `said(value)`.
    void addStartupChoiceMenu(QMenu* parent, const QString& title, const char* objectName,
                              const char* key, const QList<StartupChoice>& choices,
                              const std::function<QString(const QString&)>& said);
    void showCatalog(const CatalogPtr& catalog);
    void showBackend(const BackendInfo* backend);
    void updateStatus();
    void readSettings();
    void writeSettings();
    void closeEvent(QCloseEvent* event) override;
    void about();

    CatalogController* m_controller;
    CatalogPtr m_catalog;
    BackendTreeView* m_tree;
    QTabWidget* m_tabs;
    CapabilitiesPanel* m_capabilities;
    DependenciesPanel* m_dependencies;
    KernelMatrixView* m_matrix;
    HardwarePanel* m_hardware;
    ProblemsView* m_problems;
    QLabel* m_status;
    bool m_tuning = false; // the running profile is Tune dispatch's
    QString m_tuningSummary;
    QLabel* m_busy;
    QString m_selected;
    ProfileView* m_profile = nullptr;
    ProfileController* m_profileController = nullptr;
    CompareView* m_compare = nullptr;
    FleetView* m_fleetView = nullptr;
    FleetLoader* m_fleetLoader = nullptr;
    QMenu* m_recentMenu = nullptr;
};

} // namespace switchyard::ui
