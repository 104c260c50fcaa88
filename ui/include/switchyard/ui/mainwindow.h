// SPDX-License-Identifier: MIT
#pragma once

#include <QMainWindow>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace switchyard {
class BackendRegistry;
}

namespace switchyard::ui {

class BackendCatalog;
class BackendModel;

/// The main window: the installed backends, filterable, with the selected one's details.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(BackendRegistry& registry, QWidget* parent = nullptr);

    BackendModel* backendModel() const { return m_model; }
    QTreeView* backendView() const { return m_view; }
    QPlainTextEdit* detailsView() const { return m_details; }

private:
    void showDetails();

    BackendCatalog* m_catalog;
    BackendModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTreeView* m_view;
    QLineEdit* m_filter;
    QPlainTextEdit* m_details;
    QLabel* m_status;
};

} // namespace switchyard::ui
