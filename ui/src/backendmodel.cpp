// SPDX-License-Identifier: MIT
#include <switchyard/ui/backendmodel.h>

#include <QBrush>
#include <QColor>
#include <QStringList>

namespace switchyard::ui {
namespace {
QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<int>(s.size()));
}
} // namespace

BackendModel::BackendModel(QObject* parent) : QAbstractItemModel(parent) {}

void BackendModel::setResults(std::vector<BackendInfo> backends) {
    beginResetModel();
    m_backends = std::move(backends);
    endResetModel();
}

const BackendInfo* BackendModel::backendAt(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this ||
        index.row() >= static_cast<int>(m_backends.size()))
        return nullptr;
    return &m_backends[static_cast<std::size_t>(index.row())];
}

QModelIndex BackendModel::index(int row, int column, const QModelIndex& parent) const {
    if (parent.isValid() || row < 0 || column < 0 || row >= rowCount() || column >= ColumnCount)
        return {};
    return createIndex(row, column);
}

QModelIndex BackendModel::parent(const QModelIndex&) const {
    return {};
}

int BackendModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_backends.size());
}

int BackendModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BackendModel::data(const QModelIndex& index, int role) const {
    const BackendInfo* b = backendAt(index);
    if (!b)
        return {};
    if (role == Qt::DisplayRole || role == SortRole) {
        switch (index.column()) {
        case NameColumn:
            return qs(b->name);
        case SourceColumn:
            return qs(to_string(b->source));
        case StateColumn:
            return qs(to_string(b->state));
        case TagsColumn: {
            QStringList tags;
            for (const auto& t : b->tags)
                tags << qs(t);
            return tags.join(QStringLiteral(", "));
        }
        case DescriptionColumn: {
            // One line in the table; the whole text is in the tooltip and the details.
            const QString text = qs(b->is_available() ? b->description : b->error);
            const auto newline = text.indexOf(QLatin1Char('\n'));
            return newline < 0 ? text : text.left(newline) + QStringLiteral(" …");
        }
        }
    }
    if (role == Qt::ToolTipRole)
        return qs(b->is_available() ? b->description : b->error);
    if (role == Qt::ForegroundRole && !b->is_available())
        return QBrush(QColor(0x9a, 0x9a, 0x9a));
    if (role == NameRole)
        return qs(b->name);
    if (role == AvailableRole)
        return b->is_available();
    if (role == ErrorRole)
        return qs(b->error);
    return {};
}

QVariant BackendModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Backend");
    case SourceColumn:
        return tr("Source");
    case StateColumn:
        return tr("State");
    case TagsColumn:
        return tr("Tags");
    case DescriptionColumn:
        return tr("Description / why not");
    }
    return {};
}

} // namespace switchyard::ui
