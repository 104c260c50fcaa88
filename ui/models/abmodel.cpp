// SPDX-License-Identifier: MIT
#include "models/abmodel.h"

#include "models/comparemodel.h"
#include "models/qtstring.h"
#include "models/resultsmodel.h"

namespace switchyard::ui {

namespace {

QString sideMedian(const ProfileRow& r) {
    return r.measured() ? formatSeconds(r.stats.median) : rowStatusText(r);
}

QString cellOf(const AbRow& r) {
    const auto a = qs(r.a.spec.arch + "/" + r.a.spec.variant);
    const auto b = qs(r.b.spec.arch + "/" + r.b.spec.variant);
    return a == b ? a : QStringLiteral("%1 vs %2").arg(a, b);
}

} // namespace

AbModel::AbModel(QObject* parent) : QAbstractTableModel(parent) {}

void AbModel::setReport(const AbReport& report) {
    beginResetModel();
    m_rows = report.rows;
    endResetModel();
}

void AbModel::addRow(const AbRow& row) {
    const int n = int(m_rows.size());
    beginInsertRows({}, n, n);
    m_rows.push_back(row);
    endInsertRows();
}

void AbModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

QString AbModel::verdictAt(int row) const {
    if (row < 0 || row >= int(m_rows.size()))
        return {};
    return QString::fromLatin1(to_string(m_rows[std::size_t(row)].result.verdict));
}

int AbModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AbModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AbModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(m_rows.size()))
        return {};
    const auto& r = m_rows[std::size_t(index.row())];
    const auto& c = r.result;
    if (role == VerdictRole)
        return verdictAt(index.row());
    if (role == Qt::BackgroundRole)
        return index.column() == VerdictColumn ? verdictBackground(verdictAt(index.row()))
                                               : QVariant();
    if (role == Qt::ToolTipRole)
        return qs(c.note);
    if (role == SortRole) {
        switch (index.column()) {
        case SizeColumn:
            return double(r.a.spec.dims[0]) * double(std::max<std::int64_t>(1, r.a.spec.dims[1])) *
                   double(std::max<std::int64_t>(1, r.a.spec.dims[2]));
        case MedianAColumn:
            return r.a.stats.median;
        case MedianBColumn:
            return r.b.stats.median;
        case PairsColumn:
            return qulonglong(c.pairs);
        case RatioColumn:
            return c.ratio;
        case IntervalColumn:
            return c.ci_high - c.ci_low;
        case QColumn:
            return c.q_value;
        default:
            break;
        }
        role = Qt::DisplayRole;
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case OpColumn:
        return qs(r.a.spec.op);
    case SizeColumn:
        return qs(r.a.spec.size);
    case DeviceColumn:
        return qs(r.a.spec.device);
    case CellColumn:
        return cellOf(r);
    case MedianAColumn:
        return sideMedian(r.a);
    case MedianBColumn:
        return sideMedian(r.b);
    case PairsColumn:
        return qulonglong(c.pairs);
    case RatioColumn:
        return c.ratio > 0 ? QString::number(c.ratio, 'f', 3) : QStringLiteral("-");
    case IntervalColumn:
        return c.ratio > 0 ? QStringLiteral("%1–%2").arg(QString::number(c.ci_low, 'f', 3),
                                                         QString::number(c.ci_high, 'f', 3))
                           : QStringLiteral("-");
    case QColumn:
        return QString::number(c.q_value, 'g', 2);
    case VerdictColumn:
        return verdictAt(index.row()) + (c.identical_code ? tr(" (identical code)") : QString());
    default:
        return {};
    }
}

QVariant AbModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case OpColumn:
        return tr("Op");
    case SizeColumn:
        return tr("Size");
    case DeviceColumn:
        return tr("Device");
    case CellColumn:
        return tr("Cell");
    case MedianAColumn:
        return tr("A median");
    case MedianBColumn:
        return tr("B median");
    case PairsColumn:
        return tr("Pairs");
    case RatioColumn:
        return tr("B/A");
    case IntervalColumn:
        return tr("90 % interval");
    case QColumn:
        return tr("q");
    case VerdictColumn:
        return tr("Verdict");
    default:
        return {};
    }
}

} // namespace switchyard::ui
