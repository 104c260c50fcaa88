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
    /// Puts the keyboard focus in the search field with its text selected (Edit ▸ Find).
    void focusSearch();
    /// The backend of the tree's current row (or of the backend the row belongs to), or
    /// nullptr.
    const BackendInfo* currentBackend() const;
    /// The grouping choice (0: by source, 1: by tag) and the "Show unavailable" filter, as
    /// the window's settings keep them.
    int grouping() const;
    void setGrouping(int grouping);
    bool showUnavailable() const;
    void setShowUnavailable(bool show);
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
