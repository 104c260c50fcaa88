// SPDX-License-Identifier: MIT
#include "models/backendtreemodel.h"

#include "models/backendicons.h"
#include "models/qtstring.h"
#include "models/tone.h"

#include <switchyard/registry/backendinfoformat.h>

#include <QFont>
#include <QSet>

#include <algorithm>
#include <map>

namespace switchyard::ui {
namespace {
// "(gemm, cpu, generic, default)", built in `buffer` and converted once (100,000 rows).
QString keyText(const QString& prefix, const std::vector<std::string>& key, std::string& buffer) {
    buffer.assign(1, '(');
    for (std::size_t i = 0; i < key.size(); ++i) {
        if (i)
            buffer += ", ";
        buffer += key[i];
    }
    buffer += ')';
    return prefix.isEmpty() ? qs(buffer) : prefix + qs(buffer);
}

QString sourceGroup(BackendSource source) {
    switch (source) {
    case BackendSource::Registered:
        return BackendTreeModel::tr("Registered");
    case BackendSource::Builtin:
        return BackendTreeModel::tr("Built-in");
    case BackendSource::Plugin:
        return BackendTreeModel::tr("Plugins");
    }
    return {};
}
// What case-insensitive matching compares: the case-folded text. Most rows are lowercase
// ASCII already and share the text itself.
QString folded(const QString& text) {
    for (const QChar c : text)
        if (c.unicode() >= 0x80 || (c.unicode() >= 'A' && c.unicode() <= 'Z'))
            return text.toCaseFolded();
    return text;
}
} // namespace

BackendTreeModel::BackendTreeModel(QObject* parent)
    : TreeModel({tr("Backend"), tr("State")}, parent) {}

void BackendTreeModel::setResults(CatalogPtr catalog) {
    m_catalog = std::move(catalog);
    rebuild();
}

void BackendTreeModel::setGrouping(Grouping grouping) {
    if (grouping == m_grouping)
        return;
    m_grouping = grouping;
    rebuild();
}

QVariant BackendTreeModel::data(const QModelIndex& index, int role) const {
    if (role == SortRole || role == SearchTextRole) {
        const int kind = TreeModel::data(index, KindRole).toInt();
        if (kind == KernelNode || kind == ComponentNode)
            return TreeModel::data(index.siblingAtColumn(NameColumn), Qt::DisplayRole);
    }
    return TreeModel::data(index, role);
}

const BackendInfo* BackendTreeModel::backendAt(const QModelIndex& index) const {
    const Node* n = nodeAt(index);
    if (!n || !m_catalog)
        return nullptr;
    const int i = n->roles.value(BackendIndexRole, -1).toInt();
    if (i < 0 || i >= static_cast<int>(m_catalog->backends.size()))
        return nullptr;
    return &m_catalog->backends[static_cast<std::size_t>(i)];
}

const BackendTreeModel::RowInfo* BackendTreeModel::rowInfo(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this)
        return nullptr;
    return &m_rows[static_cast<std::size_t>(index.internalId())];
}

int BackendTreeModel::addRow(int parent, QStringList texts, QHash<int, QVariant> roles,
                             RowInfo info) {
    info.foldedText = folded(info.searchText);
    const int id = addNode(parent, std::move(texts), std::move(roles));
    m_rows.push_back(std::move(info));
    return id;
}

void BackendTreeModel::rankSiblings() {
    // The order QSortFilterProxyModel's default lessThan() gives SortRole (a QString, compared
    // case-insensitively), as dense ranks: equal keys share a rank, so a stable sort by rank
    // keeps ties in source order both ways, as the default does.
    const auto keyOf = [&](int id) -> const QString& {
        const RowInfo& r = m_rows[std::size_t(id)];
        return r.kind == KernelNode || r.kind == ComponentNode ? r.searchText
                                                               : m_sortKeys[std::size_t(id)];
    };
    const auto less = [&](int a, int b) {
        return QString::compare(keyOf(a), keyOf(b), Qt::CaseInsensitive) < 0;
    };
    auto rank = [&](std::vector<int> ids) {
        if (!std::is_sorted(ids.begin(), ids.end(), less))
            std::stable_sort(ids.begin(), ids.end(), less);
        int r = 0;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (i > 0 && less(ids[i - 1], ids[i]))
                ++r;
            m_rows[std::size_t(ids[i])].sortRank = r;
        }
    };
    rank(m_rootIds);
    for (int id = 0; id < int(m_rows.size()); ++id)
        if (m_rows[std::size_t(id)].kind == GroupNode ||
            m_rows[std::size_t(id)].kind == BackendNode)
            rank(node(id).children);
}

QStringList BackendTreeModel::tags() const {
    QSet<QString> set;
    if (m_catalog)
        for (const auto& b : m_catalog->backends)
            for (const auto& t : b.tags)
                set.insert(qs(t));
    QStringList list(set.begin(), set.end());
    list.sort();
    return list;
}

int BackendTreeModel::addBackend(int group, int backendIndex) {
    const BackendInfo& b = m_catalog->backends[static_cast<std::size_t>(backendIndex)];
    const QStringList& tags = m_tagLists[std::size_t(backendIndex)];
    const CauseText cause = explain(b);
    QString why = qs(cause.summary);
    if (!why.isEmpty() && !cause.fix.empty())
        why += QLatin1Char('\n') + tr("Fix: %1").arg(qs(cause.fix));
    QString tooltip =
        QStringLiteral("<b>%1</b> (%2, %3)")
            .arg(qs(b.name).toHtmlEscaped(), qs(to_string(b.source)), qs(to_string(b.state)));
    if (!why.isEmpty())
        tooltip += QStringLiteral("<br>") +
                   why.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    else if (!b.description.empty())
        tooltip += QStringLiteral("<br>") + qs(b.description).toHtmlEscaped();
    const bool available = b.is_available();
    const QString name = qs(b.name);
    const QString search = QStringList{name, tags.join(QLatin1Char(' ')), qs(b.description),
                                       qs(to_string(b.state)), qs(to_string(b.cause))}
                               .join(QLatin1Char(' '));
    QHash<int, QVariant> roles{
        {KindRole, BackendNode},
        {BackendIndexRole, backendIndex},
        {TagsRole, tags},
        {AvailableRole, available},
        {SortRole, name},
        {SearchTextRole, search},
        {Qt::DecorationRole, backendIcon(b)},
        {Qt::ToolTipRole, tooltip},
    };
    if (!available)
        roles.insert(Qt::ForegroundRole, toneColor(Tone::Muted));
    QString state = qs(to_string(b.state));
    if (b.cause != BackendCause::None)
        state += QStringLiteral(" (%1)").arg(qs(to_string(b.cause)));
    const int id = addRow(group, {name, state}, roles,
                          RowInfo{BackendNode, backendIndex, 0, search, {}, &tags, available});
    m_sortKeys.resize(m_rows.size());
    m_sortKeys.back() = name;

    // 100,000 cell rows: each shares one role table per (backend, availability) (implicitly
    // shared, never copied) and keeps only its texts; SortRole and SearchTextRole of a cell
    // are its key text (data() below).
    auto addCells = [&](const std::vector<CellRow>& cells, const std::vector<int>* rows,
                        NodeKind kind, const QString& prefix) {
        if (!rows || b.state == BackendState::Shadowed)
            return;
        QHash<int, QVariant> shared[2];
        for (int a = 0; a < 2; ++a) {
            shared[a] = {
                {KindRole, kind},
                {BackendIndexRole, backendIndex},
                {TagsRole, tags},
                {AvailableRole, available},
                {Qt::ToolTipRole, a ? tr("available here") : tr("declared, not available here")},
            };
            if (!a)
                shared[a].insert(Qt::ForegroundRole, toneColor(Tone::Muted));
        }
        const QString stateText[2] = {tr("unavailable"), tr("available")};
        std::string buffer;
        for (int i : *rows) {
            const auto& c = cells[std::size_t(i)];
            const int a = c.available ? 1 : 0;
            const QString text = keyText(prefix, c.key, buffer);
            addRow(id, {text, stateText[a]}, shared[a],
                   RowInfo{kind, backendIndex, 0, text, {}, &tags, available});
        }
    };
    auto rowsOf = [&](const std::map<std::string, std::vector<int>>& byBackend) {
        const auto it = byBackend.find(b.name);
        return it == byBackend.end() ? nullptr : &it->second;
    };
    addCells(m_catalog->kernels, rowsOf(m_kernelsByBackend), KernelNode, QString());
    addCells(m_catalog->components, rowsOf(m_componentsByBackend), ComponentNode, tr("component "));
    return id;
}

void BackendTreeModel::rebuild() {
    beginBuild();
    ++m_generation;
    m_rows.clear();
    m_rootIds.clear();
    m_sortKeys.clear();
    m_tagLists.clear();
    m_kernelsByBackend.clear();
    m_componentsByBackend.clear();
    if (m_catalog) {
        const std::size_t nodes = m_catalog->backends.size() + m_catalog->kernels.size() +
                                  m_catalog->components.size() + 8;
        m_rows.reserve(nodes);
        reserveNodes(nodes);
        m_tagLists.reserve(m_catalog->backends.size());
        for (const auto& b : m_catalog->backends) {
            QStringList tags;
            for (const auto& t : b.tags)
                tags << qs(t);
            m_tagLists.push_back(std::move(tags));
        }
        // Each backend's cells, found once (not one scan of every cell per backend).
        for (int i = 0; i < int(m_catalog->kernels.size()); ++i)
            m_kernelsByBackend[m_catalog->kernels[std::size_t(i)].backend].push_back(i);
        for (int i = 0; i < int(m_catalog->components.size()); ++i)
            m_componentsByBackend[m_catalog->components[std::size_t(i)].backend].push_back(i);
        // group name -> backend indexes, groups in a stable order
        std::vector<std::pair<QString, std::vector<int>>> groups;
        auto groupOf = [&](const QString& name) -> std::vector<int>& {
            for (auto& g : groups)
                if (g.first == name)
                    return g.second;
            groups.emplace_back(name, std::vector<int>{});
            return groups.back().second;
        };
        if (m_grouping == Grouping::BySource) {
            for (auto s :
                 {BackendSource::Registered, BackendSource::Builtin, BackendSource::Plugin})
                groupOf(sourceGroup(s));
        }
        std::map<QString, std::vector<int>> byTag;
        for (int i = 0; i < static_cast<int>(m_catalog->backends.size()); ++i) {
            const auto& b = m_catalog->backends[static_cast<std::size_t>(i)];
            if (m_grouping == Grouping::BySource) {
                groupOf(sourceGroup(b.source)).push_back(i);
            } else if (b.tags.empty()) {
                byTag[tr("(untagged)")].push_back(i);
            } else {
                for (const auto& t : b.tags)
                    byTag[qs(t)].push_back(i);
            }
        }
        for (auto& [tag, members] : byTag)
            groups.emplace_back(tag, std::move(members));
        QFont bold;
        bold.setBold(true);
        for (const auto& [name, members] : groups) {
            if (members.empty())
                continue;
            const int g = addRow(kRoot, {name, tr("%n backend(s)", nullptr, int(members.size()))},
                                 {{KindRole, GroupNode},
                                  {BackendIndexRole, -1},
                                  {SortRole, name},
                                  {SearchTextRole, QString()}},
                                 RowInfo{GroupNode, -1, 0, QString(), {}, nullptr, false});
            m_rootIds.push_back(g);
            m_sortKeys.resize(m_rows.size());
            m_sortKeys.back() = name;
            setCellRole(g, NameColumn, Qt::FontRole, bold);
            for (int i : members)
                addBackend(g, i);
        }
        m_sortKeys.resize(m_rows.size());
        rankSiblings();
        m_sortKeys.clear();
        m_sortKeys.shrink_to_fit();
    }
    endBuild();
}

BackendFilterProxy::BackendFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);
    setAutoAcceptChildRows(true);
    setSortRole(BackendTreeModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void BackendFilterProxy::setSourceModel(QAbstractItemModel* model) {
    m_tree = qobject_cast<BackendTreeModel*>(model);
    m_backendPass.clear();
    QSortFilterProxyModel::setSourceModel(model);
}

void BackendFilterProxy::setExcludedTags(const QSet<QString>& tags) {
    if (tags == m_excluded)
        return;
    m_excluded = tags;
    m_backendPass.clear();
    invalidateFilter();
}

void BackendFilterProxy::setShowUnavailable(bool show) {
    if (show == m_showUnavailable)
        return;
    m_showUnavailable = show;
    m_backendPass.clear();
    invalidateFilter();
}

void BackendFilterProxy::setSearchText(const QString& text) {
    if (text == m_search)
        return;
    m_search = text;
    m_searchFolded = text.toCaseFolded();
    invalidateFilter();
}

bool BackendFilterProxy::backendPasses(const QModelIndex& index) const {
    if (!m_showUnavailable && !index.data(BackendTreeModel::AvailableRole).toBool())
        return false;
    const auto tags = index.data(BackendTreeModel::TagsRole).toStringList();
    for (const auto& t : tags)
        if (m_excluded.contains(t))
            return false;
    return true;
}

bool BackendFilterProxy::backendPasses(const BackendTreeModel::RowInfo& row) const {
    if (row.backend < 0 || !row.tags)
        return true;
    if (m_passGeneration != m_tree->generation()) {
        m_backendPass.clear();
        m_passGeneration = m_tree->generation();
    }
    const auto b = std::size_t(row.backend);
    if (b >= m_backendPass.size())
        m_backendPass.resize(b + 1, -1);
    if (m_backendPass[b] < 0) {
        bool pass = m_showUnavailable || row.available;
        for (const auto& t : *row.tags)
            pass = pass && !m_excluded.contains(t);
        m_backendPass[b] = pass ? 1 : 0;
    }
    return m_backendPass[b] == 1;
}

bool BackendFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    if (m_tree && sortRole() == BackendTreeModel::SortRole &&
        sortCaseSensitivity() == Qt::CaseInsensitive && !isSortLocaleAware())
        if (const auto* l = m_tree->rowInfo(left), *r = m_tree->rowInfo(right); l && r)
            return l->sortRank < r->sortRank;
    return QSortFilterProxyModel::lessThan(left, right);
}

bool BackendFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (const BackendTreeModel::RowInfo* row = m_tree ? m_tree->rowInfo(index) : nullptr) {
        // The same test as below, on the values the model keeps beside each row.
        if (row->kind == BackendTreeModel::GroupNode)
            return false;
        if (!backendPasses(*row))
            return false;
        // Case-insensitive: both sides case-folded, as QString::contains() folds them.
        if (row->kind == BackendTreeModel::BackendNode)
            return m_search.isEmpty() || row->foldedText.contains(m_searchFolded);
        return !m_search.isEmpty() && row->foldedText.contains(m_searchFolded);
    }
    const int kind = index.data(BackendTreeModel::KindRole).toInt();
    if (kind == BackendTreeModel::GroupNode)
        return false; // shown while one of its backends is (recursive filtering)
    if (!backendPasses(index))
        return false;
    const QString text = index.data(BackendTreeModel::SearchTextRole).toString();
    if (kind == BackendTreeModel::BackendNode)
        return m_search.isEmpty() || text.contains(m_search, Qt::CaseInsensitive);
    // A kernel or component row: shown under its accepted backend (auto-accepted), or on
    // its own when the search names it.
    return !m_search.isEmpty() && text.contains(m_search, Qt::CaseInsensitive);
}

} // namespace switchyard::ui
