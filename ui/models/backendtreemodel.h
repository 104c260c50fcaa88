// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/catalogcontroller.h"
#include "models/treemodel.h"

#include <QSet>

#include <map>
#include <QSortFilterProxyModel>
#include <string>
#include <vector>

namespace switchyard::ui {

/// The backend tree: groups (by source or by tag), backends, and each backend's kernels
/// and components as children.
class BackendTreeModel : public TreeModel {
    Q_OBJECT
public:
    enum Columns { NameColumn, StateColumn, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole,
        KindRole,         // NodeKind
        BackendIndexRole, // index into the snapshot's backends (-1 for groups)
        TagsRole,         // QStringList of the backend's tags
        AvailableRole,    // the backend is usable here
        SearchTextRole,   // what the search box matches
    };
    enum NodeKind { GroupNode, BackendNode, KernelNode, ComponentNode };
    enum class Grouping { BySource, ByTag };

    explicit BackendTreeModel(QObject* parent = nullptr);

    void setResults(CatalogPtr catalog);
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    void setGrouping(Grouping grouping);
    Grouping grouping() const { return m_grouping; }
    const CatalogPtr& catalog() const { return m_catalog; }
    /// The backend of a backend node or of a kernel/component under it.
    const BackendInfo* backendAt(const QModelIndex& index) const;
    /// Every tag in use, sorted.
    QStringList tags() const;

private:
    void rebuild();
    int addBackend(int group, int backendIndex);

    CatalogPtr m_catalog;
    std::map<std::string, std::vector<int>> m_kernelsByBackend; // indexes into the catalog
    std::map<std::string, std::vector<int>> m_componentsByBackend;
    Grouping m_grouping = Grouping::BySource;
};

/// The one filter in front of the backend tree: excluded tags (the chips), "show
/// unavailable" and the search text. A group shows while any backend in it does.
class BackendFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit BackendFilterProxy(QObject* parent = nullptr);

    void setExcludedTags(const QSet<QString>& tags);
    QSet<QString> excludedTags() const { return m_excluded; }
    void setShowUnavailable(bool show);
    bool showUnavailable() const { return m_showUnavailable; }
    void setSearchText(const QString& text);
    QString searchText() const { return m_search; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool backendPasses(const QModelIndex& backend) const;

    QSet<QString> m_excluded{QStringLiteral("debug"), QStringLiteral("experimental")};
    bool m_showUnavailable = true;
    QString m_search;
};

} // namespace switchyard::ui
