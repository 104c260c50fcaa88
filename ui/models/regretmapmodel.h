// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/fleet/fleettuning.h>

#include <QAbstractTableModel>

#include <vector>

namespace switchyard::ui {

/// A fleet's regret map (fleet::FleetTuning::regrets, the CLI's `fleet collect --regret-map`):
/// one line per machine class, op, device kind, size, chain pick and faster cell, with the
/// smallest and the median speedup across the nodes that agree, n of N, and the cell the
/// class's tuning uses there instead.
class RegretMapModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        MachineColumn,
        OpColumn,
        DeviceColumn,
        SizeColumn,
        PickColumn,
        FasterColumn,
        MinSpeedupColumn,
        MedianSpeedupColumn,
        NodesColumn,
        TunedColumn,
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole, // numbers for the speedups, the nodes and the size (its work)
        NodesRole,               // QStringList: the nodes where the pick was regretted
    };

    explicit RegretMapModel(QObject* parent = nullptr);

    /// Resets the model to `entries` (in their order: the core's stable one).
    void setResults(std::vector<fleet::RegretEntry> entries);
    const std::vector<fleet::RegretEntry>& entries() const { return m_entries; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<fleet::RegretEntry> m_entries;
};

} // namespace switchyard::ui
