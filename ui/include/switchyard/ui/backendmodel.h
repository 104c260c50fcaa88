// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendregistry.h>

#include <QAbstractItemModel>

#include <vector>

namespace switchyard::ui {

/// The installed backends, one row each (flat for now; a tag-grouped tree comes later).
class BackendModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Columns {
        NameColumn,
        SourceColumn,
        StateColumn,
        TagsColumn,
        DescriptionColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, NameRole, AvailableRole, ErrorRole };

    explicit BackendModel(QObject* parent = nullptr);

    /// Replaces the contents (resets the model).
    void setResults(std::vector<BackendInfo> backends);
    const BackendInfo* backendAt(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<BackendInfo> m_backends;
};

} // namespace switchyard::ui
