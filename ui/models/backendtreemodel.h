// SPDX-License-Identifier: MIT
#pragma once

#include "models/catalog.h"
#include "models/treemodel.h"

#include <QSet>

#include <QSortFilterProxyModel>

#include <map>
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

    /// What the filter proxy reads of a node, kept beside it so that filtering and sorting
    /// 100,000 rows compare plain values (no QVariant, no role lookup per row).
    struct RowInfo {
        NodeKind kind = GroupNode;
        int backend = -1;                  // index into the snapshot's backends (-1 for groups)
        int sortRank = 0;                  // position among its siblings, ordered as SortRole sorts
        QString searchText;                // SearchTextRole
        QString foldedText;                // searchText case-folded (shared when the same)
        const QStringList* tags = nullptr; // TagsRole (the backend's; null for groups)
        bool available = false;            // AvailableRole
    };
    /// The row info of an index of this model (null for an invalid or foreign index).
    const RowInfo* rowInfo(const QModelIndex& index) const;
    /// Changes whenever the rows are rebuilt.
    quint64 generation() const { return m_generation; }

private:
    void rebuild();
    int addBackend(int group, int backendIndex);
    int addRow(int parent, QStringList texts, QHash<int, QVariant> roles, RowInfo info);
    void rankSiblings();

    CatalogPtr m_catalog;
    std::vector<RowInfo> m_rows;         // by node id
    std::vector<int> m_rootIds;          // the groups
    std::vector<QString> m_sortKeys;     // by node id, while building (groups, backends)
    std::vector<QStringList> m_tagLists; // by backend index
    quint64 m_generation = 0;
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
    void setSourceModel(QAbstractItemModel* model) override;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    /// SortRole, case-insensitive: the model's precomputed sibling order (the same order).
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    bool backendPasses(const QModelIndex& backend) const;
    bool backendPasses(const BackendTreeModel::RowInfo& row) const;

    BackendTreeModel* m_tree = nullptr; // the source, when it is a BackendTreeModel
    // Per backend index: -1 not yet known, else whether it passes tags and availability.
    mutable std::vector<signed char> m_backendPass;
    mutable quint64 m_passGeneration = ~quint64(0);

    QSet<QString> m_excluded{QStringLiteral("debug"), QStringLiteral("experimental")};
    bool m_showUnavailable = true;
    QString m_search;
    QString m_searchFolded; // m_search.toCaseFolded()
};

} // namespace switchyard::ui
