// SPDX-License-Identifier: MIT
#include "models/regretmapmodel.h"

#include "models/qtstring.h"
#include "models/tone.h"

#include <QStringList>

namespace switchyard::ui {

namespace {

QString speedupText(double s) {
    return QStringLiteral("%1x").arg(s, 0, 'f', 2);
}

QStringList names(const std::vector<std::string>& items) {
    QStringList out;
    for (const auto& i : items)
        out << qs(i);
    return out;
}

} // namespace

RegretMapModel::RegretMapModel(QObject* parent) : QAbstractTableModel(parent) {}

void RegretMapModel::setResults(std::vector<fleet::RegretEntry> entries) {
    beginResetModel();
    m_entries = std::move(entries);
    endResetModel();
}

int RegretMapModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_entries.size());
}

int RegretMapModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RegretMapModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const auto& e = m_entries[std::size_t(index.row())];
    const int column = index.column();
    const QString agree = QStringLiteral("%1 of %2").arg(e.nodes.size()).arg(e.class_nodes);
    switch (role) {
    case Qt::DisplayRole:
        switch (Columns(column)) {
        case MachineColumn:
            return qs(e.machine_id);
        case OpColumn:
            return qs(e.op);
        case DeviceColumn:
            return qs(e.device);
        case SizeColumn:
            return qs(e.size);
        case PickColumn:
            return qs(e.pick);
        case FasterColumn:
            return qs(e.faster);
        case MinSpeedupColumn:
            return speedupText(e.min_speedup);
        case MedianSpeedupColumn:
            return speedupText(e.median_speedup);
        case NodesColumn:
            return agree;
        case TunedColumn:
            return e.tuned.empty() ? QStringLiteral("-") : qs(e.tuned);
        case ColumnCount:
            break;
        }
        return {};
    case SortRole:
        switch (Columns(column)) {
        case SizeColumn:
            return e.work;
        case MinSpeedupColumn:
            return e.min_speedup;
        case MedianSpeedupColumn:
            return e.median_speedup;
        case NodesColumn:
            return double(e.nodes.size()) / double(std::max<std::size_t>(1, e.class_nodes));
        default:
            return data(index, Qt::DisplayRole);
        }
    case NodesRole:
        return names(e.nodes);
    case Qt::ToolTipRole:
        if (column == NodesColumn)
            return tr("The chain's pick was regretted on %1 of the class's %2 node(s) with "
                      "dispatch findings: %3")
                .arg(e.nodes.size())
                .arg(e.class_nodes)
                .arg(names(e.nodes).join(QStringLiteral(", ")));
        if (column == TunedColumn)
            return e.tuned.empty()
                       ? tr("The class's tuning keeps the chain's pick here: not every node "
                            "agreed on a faster cell")
                       : tr("The class's tuning uses %1 here instead of %2")
                             .arg(qs(e.tuned), qs(e.pick));
        return tr("%1 %2 on %3: %4 is %5 faster than the chain's pick %6 (smallest across the "
                  "nodes; median %7)")
            .arg(qs(e.op), qs(e.size), qs(e.device), qs(e.faster), speedupText(e.min_speedup),
                 qs(e.pick), speedupText(e.median_speedup));
    case Qt::TextAlignmentRole:
        if (column == MinSpeedupColumn || column == MedianSpeedupColumn || column == NodesColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (column == NodesColumn && e.nodes.size() < e.class_nodes)
            return toneColor(Tone::Warning);
        if (column == TunedColumn)
            return toneColor(e.tuned.empty() ? Tone::Muted : Tone::Good);
        return {};
    default:
        return {};
    }
}

QVariant RegretMapModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    static const char* const titles[ColumnCount] = {QT_TR_NOOP("Machine"),     QT_TR_NOOP("Op"),
                                                    QT_TR_NOOP("Device"),      QT_TR_NOOP("Size"),
                                                    QT_TR_NOOP("Chain picks"), QT_TR_NOOP("Faster"),
                                                    QT_TR_NOOP("Min speedup"), QT_TR_NOOP("Median"),
                                                    QT_TR_NOOP("Nodes"),       QT_TR_NOOP("Tuned")};
    if (role == Qt::DisplayRole)
        return tr(titles[section]);
    if (role == Qt::ToolTipRole) {
        switch (Columns(section)) {
        case MachineColumn:
            return tr("The machine class: the reports' fingerprint machine_id");
        case MinSpeedupColumn:
            return tr("The faster cell's speedup over the chain's pick, the smallest across the "
                      "nodes that agree");
        case MedianSpeedupColumn:
            return tr("The median speedup across the nodes that agree");
        case NodesColumn:
            return tr("On how many of the class's nodes (with dispatch findings) the pick was "
                      "regretted in favour of this cell");
        case TunedColumn:
            return tr("The cell the class's tuning uses instead, where all its nodes agreed");
        default:
            return {};
        }
    }
    return {};
}

} // namespace switchyard::ui
