// SPDX-License-Identifier: MIT
#include "models/resultsmodel.h"

#include <QCoreApplication>

#include "models/qtstring.h"
#include "models/tone.h"

#include <switchyard/profiling/ceilingtext.h>
#include <switchyard/report/csv.h>

#include <QRegularExpression>

#include <cmath>
#include <limits>

namespace switchyard::ui {

static_assert(ResultsModel::OpColumn == 0 && ResultsModel::VariantColumn + 1 == kRowIdentityColumns,
              "the identity columns (rowIdentityData) come first, in the shared order");

QString rowStatusText(const ProfileRow& row) {
    switch (row.status) {
    case RowStatus::Ok:
        return QStringLiteral("ok");
    case RowStatus::Fail:
        return QStringLiteral("FAIL");
    case RowStatus::Error:
        return QStringLiteral("error");
    case RowStatus::TimedOut:
        return QStringLiteral("timed out");
    case RowStatus::Crashed: {
        // The reason reads "worker died: signal 11 (SIGSEGV: Segmentation fault)" or "exit
        // code 3".
        static const QRegularExpression sig(QStringLiteral("\\b(SIG[A-Z0-9]+)\\b"));
        static const QRegularExpression code(QStringLiteral("exit code (-?\\d+)"));
        const QString reason = qs(row.reason);
        if (const auto m = sig.match(reason); m.hasMatch())
            return QStringLiteral("crashed (%1)").arg(m.captured(1));
        if (const auto m = code.match(reason); m.hasMatch())
            return QStringLiteral("crashed (exit %1)").arg(m.captured(1));
        return QStringLiteral("crashed");
    }
    }
    return QStringLiteral("?");
}

QString formatSeconds(double s) {
    if (!(s > 0))
        return QStringLiteral("-");
    if (s < 1e-6)
        return QStringLiteral("%1 ns").arg(s * 1e9, 0, 'g', 3);
    if (s < 1e-3)
        return QStringLiteral("%1 µs").arg(s * 1e6, 0, 'g', 3);
    if (s < 1)
        return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'g', 3);
    return QStringLiteral("%1 s").arg(s, 0, 'g', 3);
}

double rowIntensity(const ProfileRow& row) {
    if (row.intensity > 0)
        return row.intensity;
    return row.bytes > 0 ? row.flops / row.bytes : 0;
}

double rowElements(const ProfileRow& row) {
    double n = 1;
    for (auto d : row.spec.dims)
        if (d > 0)
            n *= double(d);
    return n;
}

QString rowIdentityHeader(int column) {
    static const char* const names[kRowIdentityColumns] = {
        QT_TRANSLATE_NOOP("ResultsModel", "op"), QT_TRANSLATE_NOOP("ResultsModel", "size"),
        QT_TRANSLATE_NOOP("ResultsModel", "device"), QT_TRANSLATE_NOOP("ResultsModel", "backend"),
        QT_TRANSLATE_NOOP("ResultsModel", "arch/variant")};
    return column >= 0 && column < kRowIdentityColumns
               ? QCoreApplication::translate("ResultsModel", names[column])
               : QString();
}

QVariant rowIdentityData(const ProfileRow& r, int column, bool forSort) {
    switch (column) {
    case 0:
        return qs(r.spec.op);
    case 1:
        return forSort ? QVariant(rowElements(r)) : QVariant(qs(r.spec.size));
    case 2:
        return qs(r.spec.device);
    case 3:
        return qs(r.spec.backend);
    case 4:
        return qs(r.spec.arch + "/" + r.spec.variant);
    default:
        return {};
    }
}

QString ceilingText(const ProfileRow& row) {
    if (!row.measured())
        return {};
    if (const std::string percent = ceiling_percent(row); !percent.empty())
        return QStringLiteral("%1 %2").arg(
            qs(percent), row.level.empty() ? QStringLiteral("ceiling") : qs(row.level));
    if (!row.level.empty())
        return QCoreApplication::translate("ResultsModel", "%1: no ceiling").arg(qs(row.level));
    return {};
}

namespace {

QString number(double v, int precision = 3) {
    return v > 0 ? QString::number(v, 'g', precision) : QStringLiteral("-");
}

QString parityText(const ParityResult& p) {
    if (!p.checked)
        return QStringLiteral("-");
    return QStringLiteral("%1 (abs %2, rel %3)")
        .arg(QLatin1String(p.verdict()))
        .arg(p.max_abs_error, 0, 'g', 2)
        .arg(p.max_rel_error, 0, 'g', 2);
}

} // namespace

QString speedupText(double speedup) {
    return QStringLiteral("%1×").arg(speedup, 0, 'f', speedup < 10 ? 2 : 0);
}

QString rowSummary(const ProfileRow& r) {
    QStringList identity;
    for (int c = 0; c < kRowIdentityColumns; ++c)
        identity << rowIdentityData(r, c, false).toString();
    QStringList lines{identity.join(QStringLiteral(" · "))};
    if (r.measured()) {
        lines << QCoreApplication::translate("ResultsModel",
                                             "%1 GFLOP/s · %2 GB/s · %3 FLOP/byte · median %4")
                     .arg(number(r.gflops), number(r.gbps), number(rowIntensity(r)),
                          formatSeconds(r.stats.median));
        if (const QString c = ceilingText(r); !c.isEmpty())
            lines << QCoreApplication::translate("ResultsModel", "of ceiling: %1").arg(c);
        if (memory_share(r) > 0)
            lines << qs(memory_text(r));
        if (r.pinned_cpu >= 0)
            lines << QCoreApplication::translate("ResultsModel", "ran on CPU %1").arg(r.pinned_cpu);
    } else {
        lines << rowStatusText(r);
    }
    return lines.join(QLatin1Char('\n'));
}

ResultsModel::ResultsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ResultsModel::clear() {
    beginResetModel();
    m_rows.clear();
    m_references.clear();
    m_dispatch.clear();
    m_findingByIndex.clear();
    endResetModel();
}

void ResultsModel::setRows(std::vector<ProfileRow> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    m_references.clear();
    m_dispatch.clear();
    m_findingByIndex.clear();
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        indexRow(i);
    endResetModel();
}

void ResultsModel::addRow(const ProfileRow& row) {
    const int n = int(m_rows.size());
    beginInsertRows({}, n, n);
    m_rows.push_back(row);
    indexRow(m_rows.size() - 1);
    endInsertRows();
    // A reference that arrives after rows of its (op, size) gives them their speedup.
    if (row.spec.is_reference() && n > 0)
        emit dataChanged(index(0, SpeedupColumn), index(n - 1, SpeedupColumn));
}

void ResultsModel::indexRow(std::size_t i) {
    const auto& r = m_rows[i];
    if (r.spec.is_reference() && r.measured())
        m_references[r.spec.op + "|" + r.spec.size] = i;
}

double ResultsModel::speedup(int i) const {
    const auto& r = m_rows[std::size_t(i)];
    if (r.reference_speedup > 0)
        return r.reference_speedup;
    const auto it = m_references.find(r.spec.op + "|" + r.spec.size);
    return it == m_references.end() ? 0 : reference_speedup(r, m_rows[it->second]);
}

void ResultsModel::setDispatch(std::vector<DispatchFinding> findings) {
    m_dispatch = std::move(findings);
    m_findingByIndex.clear();
    for (std::size_t f = 0; f < m_dispatch.size(); ++f)
        m_findingByIndex[m_dispatch[f].resolved_index] = f;
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

const DispatchFinding* ResultsModel::findingFor(int i) const {
    const auto it = m_findingByIndex.find(m_rows[std::size_t(i)].spec.index);
    return it == m_findingByIndex.end() ? nullptr : &m_dispatch[it->second];
}

int ResultsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ResultsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section < kRowIdentityColumns)
        return rowIdentityHeader(section);
    switch (section) {
    case MedianColumn:
        return tr("median");
    case NoiseColumn:
        return tr("noise");
    case SamplesColumn:
        return tr("samples");
    case StopColumn:
        return tr("stop reason");
    case GbpsColumn:
        return tr("GB/s");
    case GflopsColumn:
        return tr("GFLOP/s");
    case CeilingColumn:
        return tr("of ceiling");
    case SpeedupColumn:
        return tr("×ref");
    case ClockColumn:
        return tr("GHz");
    case ParityColumn:
        return tr("parity");
    case StatusColumn:
        return tr("status");
    default:
        return {};
    }
}

QVariant ResultsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ProfileRow& r = m_rows[std::size_t(index.row())];
    const bool m = r.measured();
    const int c = index.column();
    if (role == RowRole)
        return index.row();
    if (role == StatusRole)
        return qs(to_string(r.status));
    if (role == Qt::DisplayRole) {
        if (c < kRowIdentityColumns && c != VariantColumn)
            return rowIdentityData(r, c, false);
        switch (c) {
        case MedianColumn:
            return m ? formatSeconds(r.stats.median) : QStringLiteral("-");
        case NoiseColumn:
            if (!m)
                return QStringLiteral("-");
            return r.stats.noise_known()
                       ? QStringLiteral("%1%").arg(r.stats.rel_noise * 100, 0, 'f', 2)
                       : QStringLiteral("n/a"); // one sample has no spread
        case SamplesColumn:
            return m ? QString::number(r.stats.count) : QStringLiteral("-");
        case StopColumn:
            return qs(r.stop_reason);
        case GbpsColumn:
            return m ? number(r.gbps) : QStringLiteral("-");
        case GflopsColumn:
            return m ? number(r.gflops) : QStringLiteral("-");
        case CeilingColumn:
            return ceilingText(r);
        case SpeedupColumn: {
            const double s = m ? speedup(index.row()) : 0;
            return s > 0 ? speedupText(s) : QStringLiteral("-");
        }
        case ClockColumn:
            if (!m)
                return QStringLiteral("-");
            return r.clock.median_ghz > 0
                       ? QStringLiteral("%1%2")
                             .arg(r.clock.median_ghz, 0, 'f', 2)
                             .arg(r.clock.throttled ? QStringLiteral(" !") : QString())
                       : tr("none");
        case VariantColumn: {
            // "(tuned)": a tuning chose this cell over the chain's pick; ⚑: a dispatch regret.
            QString text = rowIdentityData(r, c, false).toString();
            if (!r.spec.tuned_from.empty())
                text += QStringLiteral(" (tuned)");
            if (const auto* f = findingFor(index.row()); f && f->regret())
                text += QStringLiteral(" ⚑");
            return text;
        }
        case ParityColumn:
            return parityText(r.parity);
        case StatusColumn:
            return r.warnings.empty()
                       ? rowStatusText(r)
                       : QStringLiteral("%1 ⚠%2").arg(rowStatusText(r)).arg(r.warnings.size());
        }
        return {};
    }
    if (role == SortRole) {
        switch (c) {
        case SizeColumn:
            return rowElements(r); // sizes sort by element count, not as text
        case MedianColumn:
            return m ? r.stats.median : 0.0;
        case NoiseColumn: // unknown (one sample) sorts with the noisiest, not the quietest
            return !m                      ? 0.0
                   : r.stats.noise_known() ? r.stats.rel_noise
                                           : std::numeric_limits<double>::infinity();
        case SamplesColumn:
            return qlonglong(r.stats.count);
        case GbpsColumn:
            return r.gbps;
        case GflopsColumn:
            return r.gflops;
        case CeilingColumn:
            return r.ceiling_fraction;
        case SpeedupColumn:
            return m ? speedup(index.row()) : 0.0;
        case ClockColumn:
            return r.clock.median_ghz;
        case ParityColumn:
            return r.parity.max_rel_error;
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole) {
        if (c >= MedianColumn && c <= SamplesColumn || c == GbpsColumn || c == GflopsColumn ||
            c == CeilingColumn || c == SpeedupColumn || c == ClockColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    if (role == Qt::BackgroundRole) {
        if (c == StatusColumn || c == ParityColumn) {
            if (r.status == RowStatus::Ok)
                return c == ParityColumn && r.parity.checked ? toneColor(Tone::Good, true)
                                                             : QVariant();
            return toneColor(r.status == RowStatus::Fail ? Tone::Bad : Tone::Warning, true);
        }
        if ((c == NoiseColumn && !r.warnings.empty()) || (c == ClockColumn && r.clock.throttled) ||
            (c == CeilingColumn && memory_busy(r)))
            return toneColor(Tone::Warning, true);
        if (c == VariantColumn)
            if (const auto* f = findingFor(index.row()); f && f->regret())
                return toneColor(Tone::Warning, true);
        return {};
    }
    if (role == Qt::ToolTipRole) {
        QStringList tip;
        tip << qs(r.spec.label() + " [" + r.spec.backend + "]");
        if (!r.reason.empty())
            tip << tr("%1: %2").arg(qs(to_string(r.status)), qs(r.reason).left(600));
        if (c == CeilingColumn && !r.ceiling_id.empty())
            tip << tr("ceiling %1: %2 %3")
                       .arg(qs(r.ceiling_id))
                       .arg(r.ceiling_value, 0, 'g', 4)
                       .arg(r.level == "compute" ? tr("GFLOP/s") : tr("GB/s"));
        if (c == CeilingColumn && memory_share(r) > 0)
            tip << qs(memory_text(r));
        if ((c == CeilingColumn || c == ClockColumn) && r.pinned_cpu >= 0)
            tip << tr("ran on CPU %1, held there as the 1-thread ceilings were").arg(r.pinned_cpu);
        if (const auto* f = findingFor(index.row()); f && c == VariantColumn)
            tip << tr("dispatch: %1").arg(qs(f->message()));
        if (c == VariantColumn && !r.spec.tuned_from.empty())
            tip << tr("tuned: a tuning file chose this cell; the fallback chain picks %1 "
                      "(Profile ▸ Follow tuning files off, or profile --no-tuning, runs it)")
                       .arg(qs(r.spec.tuned_from));
        if (c == ClockColumn && !r.clock.none_reason.empty())
            tip << tr("no clock: %1").arg(qs(r.clock.none_reason));
        else if (c == ClockColumn && !r.clock.method.empty())
            tip << tr("clock: median %1 GHz, best %2, lowest %3 (%4); %5 samples below %6 % "
                      "of the best dropped")
                       .arg(r.clock.median_ghz, 0, 'f', 2)
                       .arg(r.clock.best_ghz, 0, 'f', 2)
                       .arg(r.clock.min_ghz, 0, 'f', 2)
                       .arg(qs(r.clock.method))
                       .arg(r.clock.samples_discarded)
                       .arg(r.clock.threshold * 100, 0, 'f', 0);
        if (c == SpeedupColumn && speedup(index.row()) > 0)
            tip << tr("the CPU reference (generic/reference) of %1 %2 takes %3× this row's "
                      "median")
                       .arg(qs(r.spec.op), qs(r.spec.size))
                       .arg(speedup(index.row()), 0, 'g', 3);
        if (c == ParityColumn && !r.parity.first_failure.empty())
            tip << tr("first mismatch: %1").arg(qs(r.parity.first_failure));
        for (const auto& w : r.warnings)
            tip << tr("warning: %1").arg(qs(w));
        return tip.join(QLatin1Char('\n'));
    }
    return {};
}

ResultsFilterProxy::ResultsFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(ResultsModel::SortRole);
    setFilterKeyColumn(-1);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void ResultsFilterProxy::setProblemsOnly(bool on) {
    if (on == m_problemsOnly)
        return;
    m_problemsOnly = on;
    invalidateFilter();
}

bool ResultsFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (m_problemsOnly) {
        const auto* m = qobject_cast<const ResultsModel*>(sourceModel());
        if (m) {
            const auto& r = m->row(sourceRow);
            if (r.status == RowStatus::Ok && r.warnings.empty())
                return false;
        }
    }
    return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

std::vector<int> ResultsFilterProxy::visibleSourceRows() const {
    std::vector<int> out;
    if (!qobject_cast<const ResultsModel*>(sourceModel()))
        return out;
    out.reserve(std::size_t(rowCount()));
    for (int i = 0; i < rowCount(); ++i)
        out.push_back(mapToSource(index(i, 0)).row());
    return out;
}

std::vector<const ProfileRow*> ResultsFilterProxy::visibleRows() const {
    std::vector<const ProfileRow*> out;
    const auto* m = qobject_cast<const ResultsModel*>(sourceModel());
    for (const int row : visibleSourceRows())
        out.push_back(&m->row(row));
    return out;
}

QString modelToCsv(const QAbstractItemModel* model) {
    auto cell = [](const QString& s) { return QString::fromStdString(csv_field(s.toStdString())); };
    QString out;
    QStringList line;
    for (int c = 0; c < model->columnCount(); ++c)
        line << cell(model->headerData(c, Qt::Horizontal).toString());
    out += line.join(QLatin1Char(',')) + QLatin1Char('\n');
    for (int r = 0; r < model->rowCount(); ++r) {
        line.clear();
        for (int c = 0; c < model->columnCount(); ++c)
            line << cell(model->index(r, c).data().toString());
        out += line.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out;
}

} // namespace switchyard::ui
