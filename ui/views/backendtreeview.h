// SPDX-License-Identifier: MIT
#pragma once

#include "models/backendtreemodel.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLineEdit;
class QToolButton;
class QTreeView;

namespace switchyard::ui {

/// The left dock: search, grouping, "show unavailable", one chip per tag, the tree.
class BackendTreeView : public QWidget {
    Q_OBJECT
public:
    explicit BackendTreeView(QWidget* parent = nullptr);

    void setResults(CatalogPtr catalog);
    BackendTreeModel* model() const { return m_model; }
    BackendFilterProxy* proxy() const { return m_proxy; }
    QTreeView* treeView() const { return m_tree; }
    QLineEdit* searchBox() const { return m_search; }
    QCheckBox* showUnavailableBox() const { return m_showUnavailable; }
    QComboBox* groupingBox() const { return m_grouping; }
    /// The chip of `tag`, nullptr when no backend has it.
    QToolButton* tagChip(const QString& tag) const;
    /// Selects the first backend named `name`; false when it is filtered out or unknown.
    bool selectBackend(const QString& name);

signals:
    void backendSelected(const switchyard::BackendInfo* backend);
    void opSelected(const QString& op);

private:
    void rebuildChips();
    void emitSelection();
    void expandMatches();

    BackendTreeModel* m_model;
    BackendFilterProxy* m_proxy;
    QLineEdit* m_search;
    QComboBox* m_grouping;
    QCheckBox* m_showUnavailable;
    QWidget* m_chips;
    QHBoxLayout* m_chipLayout;
    QTreeView* m_tree;
    QString m_selected; // the backend to keep selected across resets
};

} // namespace switchyard::ui
