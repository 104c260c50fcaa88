// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractItemModel>
#include <QHash>
#include <QStringList>
#include <QVariant>

#include <vector>

namespace switchyard::ui {

/// The shared base of the read-only tree models (backend tree, dependencies, hardware):
/// nodes kept in one vector, an index's internal id is its node's position. Subclasses
/// build the nodes between beginBuild() and endBuild() (a model reset).
class TreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    explicit TreeModel(QStringList headers, QObject* parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

protected:
    static constexpr int kRoot = -1;
    struct Node {
        int parent = kRoot;
        int row = 0;
        QStringList texts;              // one per column
        QHash<int, QVariant> roles;     // every column, unless overridden per column below
        QHash<int, QVariant> roleCells; // key: role * 64 + column
        std::vector<int> children;
    };

    void beginBuild();
    void endBuild();
    /// Adds a node under `parent` (kRoot for a top-level row) and returns its id.
    int addNode(int parent, QStringList texts, QHash<int, QVariant> roles = {});
    void setCellRole(int node, int column, int role, const QVariant& value);
    /// Room for `count` nodes (a build that knows its size grows the vector once).
    void reserveNodes(std::size_t count) { m_nodes.reserve(count); }
    Node& node(int id) { return m_nodes[static_cast<std::size_t>(id)]; }
    const Node* nodeAt(const QModelIndex& index) const;

private:
    QStringList m_headers;
    std::vector<Node> m_nodes;
    std::vector<int> m_roots;
};

} // namespace switchyard::ui
