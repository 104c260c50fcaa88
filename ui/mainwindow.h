// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/catalogcontroller.h"

#include <QMainWindow>

class QLabel;
class QTabWidget;

namespace switchyard::ui {

class BackendTreeView;
class CapabilitiesPanel;
class DependenciesPanel;
class HardwarePanel;
class KernelMatrixView;
class ProblemsView;

/// The explorer: the backend tree (left dock) drives the capabilities and dependencies
/// panels; the kernel matrix, hardware and problems are tabs beside them. All core work
/// runs in the CatalogController, off the GUI thread.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(BackendRegistry& registry, DeviceRegistry& devices, PluginSearchPath path,
               QWidget* parent = nullptr);
    ~MainWindow() override;

    enum Tab { CapabilitiesTab, DependenciesTab, MatrixTab, HardwareTab, ProblemsTab };

    CatalogController* controller() const { return m_controller; }
    const CatalogPtr& catalog() const { return m_catalog; }
    BackendTreeView* backendTree() const { return m_tree; }
    CapabilitiesPanel* capabilitiesPanel() const { return m_capabilities; }
    DependenciesPanel* dependenciesPanel() const { return m_dependencies; }
    KernelMatrixView* matrixView() const { return m_matrix; }
    HardwarePanel* hardwarePanel() const { return m_hardware; }
    ProblemsView* problemsView() const { return m_problems; }
    QTabWidget* tabs() const { return m_tabs; }
    QString statusText() const;

    /// Saves one PNG per tab (window-sized) into `dir` with `prefix`; returns the paths.
    QStringList saveScreenshots(const QString& dir, const QString& prefix);

signals:
    /// A catalog arrived and every panel shows it.
    void catalogShown();

private:
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
};

} // namespace switchyard::ui
