// SPDX-License-Identifier: MIT
#pragma once

#include "models/catalog.h"

#include <QWidget>

class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTreeView;

namespace switchyard::ui {

class DependencyModel;
class ProblemModel;
class HardwareModel;

/// The selected backend as a form: identity, state and cause, contract and core range
/// with pass/fail marks, paths, declared vs registered cells, unknown manifest keys.
class CapabilitiesPanel : public QWidget {
    Q_OBJECT
public:
    explicit CapabilitiesPanel(QWidget* parent = nullptr);
    void setBackend(const BackendInfo* backend, const CatalogSnapshot* catalog);

private:
    /// The value label of a form row, found by its key ("state", "contract", ...), which is
    /// also its objectName.
    QLabel* field(const QString& key) const;
    QLabel* addRow(const QString& key, const QString& label);
    QFormLayout* m_form;
    QLabel* m_title;
};

/// The selected backend's optional dependencies and library dependency tree, with
/// "Copy install command" and "Copy diagnostic report".
class DependenciesPanel : public QWidget {
    Q_OBJECT
public:
    explicit DependenciesPanel(QWidget* parent = nullptr);
    void setBackend(const BackendInfo* backend, const CatalogSnapshot* catalog);
    DependencyModel* model() const { return m_model; }
    QString installCommand() const { return m_install; }

private:
    DependencyModel* m_model;
    QTreeView* m_tree;
    QPlainTextEdit* m_problem;
    QLabel* m_searchPath;
    QPushButton* m_copyInstall;
    QPushButton* m_copyReport;
    QString m_install;
    QString m_report;
};

/// Every problem on the machine with its fix; the selected one's text is selectable.
class ProblemsView : public QWidget {
    Q_OBJECT
public:
    explicit ProblemsView(QWidget* parent = nullptr);
    void setResults(const CatalogSnapshot& catalog);
    ProblemModel* model() const { return m_model; }

signals:
    void subjectActivated(const QString& subject);

private:
    ProblemModel* m_model;
    QTableView* m_table;
    QPlainTextEdit* m_text;
    QString m_report;
};

/// The CPU, the devices and why a device class is absent.
class HardwarePanel : public QWidget {
    Q_OBJECT
public:
    explicit HardwarePanel(QWidget* parent = nullptr);
    void setResults(const CatalogSnapshot& catalog);
    HardwareModel* model() const { return m_model; }

private:
    HardwareModel* m_model;
    QTreeView* m_tree;
};

} // namespace switchyard::ui
