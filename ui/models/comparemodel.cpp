// SPDX-License-Identifier: MIT
#include "models/comparemodel.h"

#include "models/backendtext.h"
#include "models/resultsmodel.h"

#include <unordered_map>

namespace switchyard::ui {

static_assert(CompareModel::OpColumn == 0 && CompareModel::VariantColumn + 1 == kRowIdentityColumns,
              "the identity columns (rowIdentityData) come first, in the shared order");

QVariant verdictBackground(const QString& v) {
    if (v == QLatin1String("FASTER"))
        return toneColor(Tone::Good, true);
    if (v == QLatin1String("SLOWER"))
        return toneColor(Tone::Bad, true);
    if (v == QLatin1String("UNCERTAIN"))
        return toneColor(Tone::Warning, true);
    if (v.startsWith(QLatin1String("only")))
        return toneColor(Tone::Muted, true);
    return {};
}

namespace {

QString median(const ProfileRow& r) {
    return r.measured() ? formatSeconds(r.stats.median) : rowStatusText(r);
}

} // namespace

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareModel::setReports(const Report& a, const Report& b, const CompareOptions& options) {
    beginResetModel();
    m_comparison = Comparison::of(a, b, options);
    endResetModel();
}

void CompareModel::clear() {
    beginResetModel();
    m_comparison = Comparison();
    endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid())
        return 0;
    return int(m_comparison.pairs().size() + m_comparison.only_in_a().size() +
               m_comparison.only_in_b().size());
}

int CompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

const ProfileRow& CompareModel::rowA(int row) const {
    const auto& pairs = m_comparison.pairs();
    std::size_t i = std::size_t(row);
    if (i < pairs.size())
        return pairs[i].a;
    i -= pairs.size();
    if (i < m_comparison.only_in_a().size())
        return m_comparison.only_in_a()[i];
    return m_comparison.only_in_b()[i - m_comparison.only_in_a().size()];
}

QString CompareModel::verdictAt(int row) const {
    const auto& pairs = m_comparison.pairs();
    if (std::size_t(row) < pairs.size())
        return qs(pairs[std::size_t(row)].result.verdict);
    return std::size_t(row) < pairs.size() + m_comparison.only_in_a().size() ? tr("only in A")
                                                                             : tr("only in B");
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section < kRowIdentityColumns)
        return rowIdentityHeader(section);
    switch (section) {
    case MedianAColumn:
        return tr("median A");
    case MedianBColumn:
        return tr("median B");
    case RatioColumn:
        return tr("B/A");
    case PValueColumn:
        return tr("p-value");
    case VerdictColumn:
        return tr("verdict");
    default:
        return {};
    }
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const bool paired = std::size_t(row) < m_comparison.pairs().size();
    const auto* pair = paired ? &m_comparison.pairs()[std::size_t(row)] : nullptr;
    const ProfileRow& r = rowA(row);
    const bool onlyB = !paired && !verdictAt(row).endsWith(QLatin1Char('A'));
    const QString verdict = verdictAt(row);
    if (role == VerdictRole)
        return verdict;
    if (role == Qt::DisplayRole || role == SortRole) {
        if (index.column() < kRowIdentityColumns)
            return rowIdentityData(r, index.column(), role == SortRole);
        switch (index.column()) {
        case MedianAColumn:
            if (role == SortRole)
                return pair || !onlyB ? r.stats.median : 0.0;
            return pair ? median(pair->a) : onlyB ? QStringLiteral("—") : median(r);
        case MedianBColumn:
            if (role == SortRole)
                return pair ? pair->b.stats.median : onlyB ? r.stats.median : 0.0;
            return pair ? median(pair->b) : onlyB ? median(r) : QStringLiteral("—");
        case RatioColumn:
            if (!pair || pair->result.ratio <= 0)
                return role == SortRole ? QVariant(0.0) : QVariant(QStringLiteral("—"));
            return role == SortRole
                       ? QVariant(pair->result.ratio)
                       : QVariant(QStringLiteral("%1×").arg(pair->result.ratio, 0, 'f', 3));
        case PValueColumn:
            if (!pair)
                return role == SortRole ? QVariant(1.0) : QVariant(QStringLiteral("—"));
            return role == SortRole ? QVariant(pair->result.p_value)
                                    : QVariant(QString::number(pair->result.p_value, 'g', 3));
        case VerdictColumn:
            return verdict;
        }
        return {};
    }
    if (role == Qt::BackgroundRole &&
        (index.column() == VerdictColumn || index.column() == RatioColumn))
        return verdictBackground(verdict);
    if (role == Qt::TextAlignmentRole && index.column() >= MedianAColumn &&
        index.column() <= PValueColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        QString tip = qs(r.spec.label() + " [" + r.spec.backend + "]");
        if (pair && !pair->result.note.empty())
            tip += QLatin1Char('\n') + qs(pair->result.note);
        if (pair)
            tip += tr("\n%1 vs %2 samples").arg(pair->a.samples.size()).arg(pair->b.samples.size());
        return tip;
    }
    return {};
}

MultiCompareModel::MultiCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void MultiCompareModel::setReports(std::vector<Report> reports, QStringList names,
                                   const CompareOptions& options) {
    beginResetModel();
    m_reports = std::move(reports);
    m_names = std::move(names);
    while (m_names.size() < qsizetype(m_reports.size()))
        m_names << tr("report %1").arg(m_names.size() + 1);
    m_lines.clear();
    std::unordered_map<std::string, std::size_t> byKey;
    const std::size_t n = m_reports.size();
    for (std::size_t ri = 0; ri < n; ++ri)
        for (const auto& row : m_reports[ri].rows) {
            const auto key = row.key();
            auto [it, inserted] = byKey.emplace(key, m_lines.size());
            if (inserted) {
                Line line;
                line.first = &row;
                line.cells.assign(n, nullptr);
                line.verdicts.assign(n, SampleComparison{});
                m_lines.push_back(std::move(line));
            }
            auto& line = m_lines[it->second];
            if (!line.cells[ri])
                line.cells[ri] = &row;
        }
    for (auto& line : m_lines) {
        for (std::size_t ri = 0; ri < n; ++ri) {
            const auto* cell = line.cells[ri];
            if (!cell || !cell->measured())
                continue;
            if (line.baseline < 0) {
                line.baseline = int(ri);
                continue;
            }
            const auto* base = line.cells[std::size_t(line.baseline)];
            line.verdicts[ri] = compare_samples(base->samples, cell->samples, options);
            if (line.verdicts[ri].ratio <= 0 && base->stats.median > 0)
                line.verdicts[ri].ratio = cell->stats.median / base->stats.median;
        }
    }
    endResetModel();
}

QString MultiCompareModel::verdictAt(int row, int report) const {
    const auto& line = m_lines[std::size_t(row)];
    if (report == line.baseline || !line.cells[std::size_t(report)])
        return {};
    return qs(line.verdicts[std::size_t(report)].verdict);
}

int MultiCompareModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_lines.size());
}

int MultiCompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : FixedColumnCount + int(m_reports.size());
}

QVariant MultiCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case OpColumn:
        return tr("op");
    case SizeColumn:
        return tr("size");
    case DeviceColumn:
        return tr("device");
    case VariantColumn:
        return tr("arch/variant [backend]");
    default:
        return section - FixedColumnCount < m_names.size() ? m_names[section - FixedColumnCount]
                                                           : QVariant();
    }
}

QVariant MultiCompareModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& line = m_lines[std::size_t(index.row())];
    const ProfileRow& r = *line.first;
    const int c = index.column();
    if (c < FixedColumnCount) {
        if (role != Qt::DisplayRole && role != SortRole)
            return {};
        switch (c) {
        case OpColumn:
            return qs(r.spec.op);
        case SizeColumn:
            return role == SortRole ? QVariant(rowElements(r)) : QVariant(qs(r.spec.size));
        case DeviceColumn:
            return qs(r.spec.device);
        case VariantColumn:
            return qs(r.spec.arch + "/" + r.spec.variant + " [" + r.spec.backend + "]");
        }
        return {};
    }
    const int ri = c - FixedColumnCount;
    const ProfileRow* cell = line.cells[std::size_t(ri)];
    const auto& verdict = line.verdicts[std::size_t(ri)];
    switch (role) {
    case Qt::DisplayRole:
        if (!cell)
            return QStringLiteral("—");
        if (!cell->measured())
            return rowStatusText(*cell);
        if (ri == line.baseline || verdict.verdict.empty())
            return formatSeconds(cell->stats.median);
        return QStringLiteral("%1 (%2×)")
            .arg(formatSeconds(cell->stats.median))
            .arg(verdict.ratio, 0, 'f', 2);
    case SortRole:
        return cell && cell->measured() ? cell->stats.median : 0.0;
    case VerdictRole:
        return verdictAt(index.row(), ri);
    case Qt::BackgroundRole:
        return verdictBackground(verdictAt(index.row(), ri));
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (!cell)
            return tr("%1 has no row for this kernel and size").arg(m_names.value(ri));
        if (ri == line.baseline)
            return tr("%1: the baseline of this line").arg(m_names.value(ri));
        return tr("%1 against %2: %3, ratio %4, p = %5%6")
            .arg(m_names.value(ri), m_names.value(line.baseline), qs(verdict.verdict))
            .arg(verdict.ratio, 0, 'f', 3)
            .arg(verdict.p_value, 0, 'g', 3)
            .arg(verdict.note.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(verdict.note)));
    }
    return {};
}

} // namespace switchyard::ui
