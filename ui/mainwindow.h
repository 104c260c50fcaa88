// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/catalogcontroller.h"

#include <QMainWindow>

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
class ProfileView;

/// The settings key of the GUI's ISA level cap (View ▸ CPU ISA level cap): main() applies it
/// as SWITCHYARD_MAX_ISA at start when neither --max-isa nor the variable is given.
inline constexpr const char* kIsaCapKey = "cpu/max_isa";

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
    BackendTreeView* backendTree() const { return m_tree; }
    CapabilitiesPanel* capabilitiesPanel() const { return m_capabilities; }
    DependenciesPanel* dependenciesPanel() const { return m_dependencies; }
    KernelMatrixView* matrixView() const { return m_matrix; }
    HardwarePanel* hardwarePanel() const { return m_hardware; }
    ProblemsView* problemsView() const { return m_problems; }
    QTabWidget* tabs() const { return m_tabs; }
    ProfileView* profileView() const { return m_profile; }
    CompareView* compareView() const { return m_compare; }
    FleetView* fleetView() const { return m_fleetView; }
    FleetLoader* fleetLoader() const { return m_fleetLoader; }

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

    /// Saves one PNG per tab (window-sized) into `dir` with `prefix`; returns the paths.
    QStringList saveScreenshots(const QString& dir, const QString& prefix);

signals:
    /// A catalog arrived and every panel shows it.
    void catalogShown();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void setupProfiler();
    void setupReportMenu(QMenu* file);
    void addRecentReport(const QString& path);
    void updateRecentMenu();
    void reportError(const QString& error);
    void setupMenus();
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
    QLabel* m_busy;
    QString m_selected;
    ProfileView* m_profile = nullptr;
    CompareView* m_compare = nullptr;
    FleetView* m_fleetView = nullptr;
    FleetLoader* m_fleetLoader = nullptr;
    QMenu* m_recentMenu = nullptr;
};

} // namespace switchyard::ui
