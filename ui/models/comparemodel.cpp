// SPDX-License-Identifier: MIT
#include "models/comparemodel.h"

#include "models/qtstring.h"
#include "models/resultsmodel.h"
#include "models/tone.h"

#include <QFont>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace switchyard::ui {

static_assert(CompareModel::OpColumn == 0 && CompareModel::VariantColumn + 1 == kRowIdentityColumns,
              "the identity columns (rowIdentityData) come first, in the shared order");

QVariant verdictBackground(const QString& v) {
    if (v == QLatin1String("FASTER"))
        return toneColor(Tone::Good, true);
    if (v == QLatin1String("SLOWER"))
        return toneColor(Tone::Bad, true);
    if (v == QLatin1String("AMBIGUOUS"))
        return toneColor(Tone::Warning, true);
    if (v.startsWith(QLatin1String("only")) || v == QLatin1String("MACHINE"))
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
        return QString::fromLatin1(to_string(pairs[std::size_t(row)].result.verdict));
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
                                   const CompareOptions& options, int baseline, QStringList files) {
    beginResetModel();
    m_comparison.reset(); // before the reports it points into
    m_reports = std::move(reports);
    m_names = std::move(names);
    while (m_names.size() < qsizetype(m_reports.size()))
        m_names << tr("report %1").arg(m_names.size() + 1);
    m_files = files.size() == qsizetype(m_reports.size()) ? std::move(files) : m_names;
    m_options = options;
    compare(baseline);
    endResetModel();
}

void MultiCompareModel::setBaseline(int baseline) {
    if (!m_comparison || baseline < 0 || baseline >= reportCount() ||
        std::size_t(baseline) == m_comparison->baseline())
        return;
    beginResetModel();
    compare(baseline);
    endResetModel();
}

void MultiCompareModel::compare(int baseline) {
    m_comparison.reset();
    if (m_reports.size() < 2)
        return;
    std::vector<std::string> labels;
    labels.reserve(m_reports.size());
    for (qsizetype i = 0; i < qsizetype(m_reports.size()); ++i)
        labels.push_back(m_files[i].toStdString());
    m_comparison = MultiComparison::of(m_reports, std::move(labels), m_options,
                                       std::size_t(std::clamp(baseline, 0, reportCount() - 1)));
}

QString MultiCompareModel::outlierReason(int row, int report) const {
    if (!m_comparison || row < 0 || std::size_t(row) >= m_comparison->lines().size())
        return {};
    const auto& line = m_comparison->lines()[std::size_t(row)];
    if (report < 0 || std::size_t(report) >= line.cells.size() ||
        !line.cells[std::size_t(report)].outlier)
        return {};
    std::vector<double> medians;
    for (const auto& c : line.cells)
        if (c.row && c.row->measured() && c.row->stats.median > 0)
            medians.push_back(c.row->stats.median);
    std::sort(medians.begin(), medians.end());
    const std::size_t n = medians.size();
    const double center = n % 2 ? medians[n / 2] : std::sqrt(medians[n / 2 - 1] * medians[n / 2]);
    const double mine = line.cells[std::size_t(report)].row->stats.median;
    return tr("Outlier: %1 is %2× the median of this line over %3 machines (%4); more than "
              "max(10 %, 3 robust standard deviations) away")
        .arg(m_names.value(report))
        .arg(mine / center, 0, 'f', 2)
        .arg(n)
        .arg(formatSeconds(center));
}

QString MultiCompareModel::verdictAt(int row, int report) const {
    if (!m_comparison)
        return {};
    const auto& cell = m_comparison->lines()[std::size_t(row)].cells[std::size_t(report)];
    return cell.judged ? QString::fromLatin1(to_string(cell.result.verdict)) : QString();
}

int MultiCompareModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_comparison ? 0 : int(m_comparison->lines().size());
}

int MultiCompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : FixedColumnCount + int(m_reports.size());
}

QVariant MultiCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    const int report = reportOf(section);
    if (orientation == Qt::Horizontal && report >= 0 && report < reportCount()) {
        const bool isBase = m_comparison && std::size_t(report) == m_comparison->baseline();
        if (role == Qt::ToolTipRole)
            return tr("%1\n%2%3")
                .arg(m_names.value(report), m_files.value(report),
                     isBase ? tr("\nthe baseline: every other column is judged against it")
                            : tr("\nright-click: use as the baseline"));
        if (role == Qt::FontRole && isBase) {
            QFont f;
            f.setBold(true);
            return f;
        }
        if (role == Qt::DisplayRole && isBase)
            return tr("%1 (baseline)").arg(m_names.value(report));
    }
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
    const auto& line = m_comparison->lines()[std::size_t(index.row())];
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
    const auto& cell = line.cells[std::size_t(ri)];
    const auto& verdict = cell.result;
    const bool baseline = std::size_t(ri) == m_comparison->baseline();
    const QString baseName = m_names.value(int(m_comparison->baseline()));
    switch (role) {
    case Qt::DisplayRole:
        if (!cell.row)
            return QStringLiteral("—");
        if (!cell.row->measured())
            return rowStatusText(*cell.row);
        if (baseline || !cell.judged)
            return formatSeconds(cell.row->stats.median);
        return QStringLiteral("%1 (%2×)")
            .arg(formatSeconds(cell.row->stats.median))
            .arg(verdict.ratio, 0, 'f', 2);
    case SortRole:
        return cell.row && cell.row->measured() ? cell.row->stats.median : 0.0;
    case VerdictRole:
        return verdictAt(index.row(), ri);
    case OutlierRole:
        return cell.outlier;
    case Qt::FontRole:
        if (cell.outlier) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::BackgroundRole:
        return verdictBackground(verdictAt(index.row(), ri));
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
        const QString tip = cellToolTip(index.row(), ri);
        const QString why = outlierReason(index.row(), ri);
        return why.isEmpty() ? tip : tip + QLatin1Char('\n') + why;
    }
    }
    return {};
}

QString MultiCompareModel::cellToolTip(int row, int ri) const {
    const auto& cell = m_comparison->lines()[std::size_t(row)].cells[std::size_t(ri)];
    const auto& verdict = cell.result;
    const bool baseline = std::size_t(ri) == m_comparison->baseline();
    const QString baseName = m_names.value(int(m_comparison->baseline()));
    if (!cell.row)
        return tr("%1 has no row for this kernel and size").arg(m_names.value(ri));
    if (baseline)
        return tr("%1: the baseline of this line").arg(m_names.value(ri));
    if (!cell.judged)
        return tr("%1: not judged%2")
            .arg(m_names.value(ri),
                 verdict.note.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(verdict.note)));
    return tr("%1 against %2: %3, ratio %4, q = %5, threshold %6 %, runs %7/%8%9")
        .arg(m_names.value(ri), baseName, QString::fromLatin1(to_string(verdict.verdict)))
        .arg(verdict.ratio, 0, 'f', 3)
        .arg(verdict.q_value, 0, 'g', 3)
        .arg(verdict.threshold * 100, 0, 'f', 1)
        .arg(verdict.runs_b)
        .arg(verdict.runs_a)
        .arg(verdict.note.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(verdict.note)));
}

} // namespace switchyard::ui
