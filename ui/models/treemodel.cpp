// SPDX-License-Identifier: MIT
#include "models/treemodel.h"

namespace switchyard::ui {

TreeModel::TreeModel(QStringList headers, QObject* parent)
    : QAbstractItemModel(parent), m_headers(std::move(headers)) {}

void TreeModel::beginBuild() {
    beginResetModel();
    m_nodes.clear();
    m_roots.clear();
}

void TreeModel::endBuild() {
    endResetModel();
}

int TreeModel::addNode(int parent, QStringList texts, QHash<int, QVariant> roles) {
    const int id = static_cast<int>(m_nodes.size());
    auto& siblings = parent == kRoot ? m_roots : node(parent).children;
    Node n;
    n.parent = parent;
    n.row = static_cast<int>(siblings.size());
    n.texts = std::move(texts);
    n.roles = std::move(roles);
    siblings.push_back(id);
    m_nodes.push_back(std::move(n));
    return id;
}

void TreeModel::setCellRole(int id, int column, int role, const QVariant& value) {
    node(id).roleCells.insert(role * 64 + column, value);
}

const TreeModel::Node* TreeModel::nodeAt(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this)
        return nullptr;
    return &m_nodes[static_cast<std::size_t>(index.internalId())];
}

QModelIndex TreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= columnCount(parent))
        return {};
    const auto& siblings = parent.isValid() ? nodeAt(parent)->children : m_roots;
    if (row >= static_cast<int>(siblings.size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>(siblings[static_cast<std::size_t>(row)]));
}

QModelIndex TreeModel::parent(const QModelIndex& child) const {
    const Node* n = nodeAt(child);
    if (!n || n->parent == kRoot)
        return {};
    const auto& p = m_nodes[static_cast<std::size_t>(n->parent)];
    return createIndex(p.row, 0, static_cast<quintptr>(n->parent));
}

int TreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return static_cast<int>(m_roots.size());
    if (parent.column() != 0)
        return 0;
    return static_cast<int>(nodeAt(parent)->children.size());
}

int TreeModel::columnCount(const QModelIndex&) const {
    return static_cast<int>(m_headers.size());
}

QVariant TreeModel::data(const QModelIndex& index, int role) const {
    const Node* n = nodeAt(index);
    if (!n)
        return {};
    if (auto it = n->roleCells.find(role * 64 + index.column()); it != n->roleCells.end())
        return *it;
    if (role == Qt::DisplayRole)
        return index.column() < n->texts.size() ? n->texts[index.column()] : QString();
    if (role == Qt::DecorationRole && index.column() != 0)
        return {};
    return n->roles.value(role);
}

QVariant TreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 &&
        section < m_headers.size())
        return m_headers[section];
    return {};
}

} // namespace switchyard::ui
