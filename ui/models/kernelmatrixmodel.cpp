// SPDX-License-Identifier: MIT
#include "models/kernelmatrixmodel.h"

#include "models/qtstring.h"
#include "models/tone.h"

#include <switchyard/registry/backendinfoformat.h>

#include <switchyard/registry/fallback.h>

#include <QBrush>
#include <QFont>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace switchyard::ui {
namespace {
int deviceOrder(const std::string& device) {
    static const std::vector<std::string> order{"cpu", "cuda", "opencl", "vulkan"};
    const auto it = std::find(order.begin(), order.end(), device);
    return it == order.end() ? int(order.size()) : int(it - order.begin());
}

int archOrder(const std::string& device, const std::string& arch) {
    std::vector<std::string> ladder;
    try {
        ladder = arch_ladder(device);
    } catch (...) {
    }
    const auto it = std::find(ladder.begin(), ladder.end(), arch);
    return it == ladder.end() ? -1 : int(it - ladder.begin()); // unknown arches first
}
} // namespace

KernelMatrixModel::KernelMatrixModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelMatrixModel::setResults(CatalogPtr catalog) {
    m_catalog = std::move(catalog);
    rebuild();
}

void KernelMatrixModel::rebuild() {
    beginResetModel();
    m_ops.clear();
    m_columns.clear();
    m_columnIndex.clear();
    m_opIndex.clear();
    m_grid.clear();
    if (m_catalog) {
        // Ops and columns found by hashing (100,000 cells, 3,000 columns), then sorted once.
        const auto& kernels = m_catalog->kernels;
        std::unordered_map<std::string, int> opIds, columnIds; // -> first-seen ids
        std::vector<Column> seen;
        std::vector<std::pair<int, int>> cellIds(kernels.size(), {-1, -1}); // (op, column)
        std::string joined;
        auto columnId = [&](const std::string& device, const std::string& arch,
                            const std::string& variant) {
            joined.assign(device).append(1, '\0').append(arch).append(1, '\0').append(variant);
            const auto [it, fresh] = columnIds.try_emplace(joined, int(seen.size()));
            if (fresh)
                seen.push_back({device, arch, variant});
            return it->second;
        };
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            const auto& k = kernels[i];
            if (k.key.size() != 4)
                continue;
            const auto op = opIds.try_emplace(k.key[0], int(opIds.size())).first->second;
            cellIds[i] = {op, columnId(k.key[1], k.key[2], k.key[3])};
        }
        // The target's chain rungs get a column even where no backend declares a cell, so
        // a what-if target shows every rung it walks.
        if (m_resolution)
            for (const auto& r : m_resolution->resolutions)
                if (opIds.count(r.op))
                    for (const auto& rung : r.rungs)
                        columnId(rung.key[1], rung.key[2], rung.key[3]);
        std::vector<std::pair<std::string, int>> ops(opIds.begin(), opIds.end());
        std::sort(ops.begin(), ops.end());
        std::vector<int> opRow(ops.size());
        for (std::size_t r = 0; r < ops.size(); ++r) {
            opRow[std::size_t(ops[r].second)] = int(r);
            m_ops.push_back(ops[r].first);
        }
        // Each column's order computed once (an arch's place on its device's ladder), then
        // sorted: not a ladder per comparison. Columns are distinct, so the order is total.
        struct Ordered {
            int device;
            int arch;
            int id; // first-seen id
        };
        std::map<std::string, int> deviceRank;
        std::map<std::pair<std::string, std::string>, int> archRank;
        std::vector<Ordered> ordered;
        ordered.reserve(seen.size());
        for (int id = 0; id < int(seen.size()); ++id) {
            const Column& c = seen[std::size_t(id)];
            auto d = deviceRank.try_emplace(c[0], 0);
            if (d.second)
                d.first->second = deviceOrder(c[0]);
            auto a = archRank.try_emplace({c[0], c[1]}, 0);
            if (a.second)
                a.first->second = archOrder(c[0], c[1]);
            ordered.push_back({d.first->second, a.first->second, id});
        }
        std::sort(ordered.begin(), ordered.end(), [&](const Ordered& a, const Ordered& b) {
            const Column& ca = seen[std::size_t(a.id)];
            const Column& cb = seen[std::size_t(b.id)];
            return std::tie(a.device, ca[0], a.arch, ca[1], ca[2]) <
                   std::tie(b.device, cb[0], b.arch, cb[1], cb[2]);
        });
        std::vector<int> columnOfId(seen.size());
        m_columns.reserve(ordered.size());
        for (const auto& o : ordered) {
            columnOfId[std::size_t(o.id)] = int(m_columns.size());
            m_columns.push_back(std::move(seen[std::size_t(o.id)]));
        }
        for (int i = 0; i < int(m_ops.size()); ++i)
            m_opIndex.emplace(m_ops[std::size_t(i)], i);
        for (int i = 0; i < int(m_columns.size()); ++i)
            m_columnIndex.emplace(m_columns[std::size_t(i)], i);
        m_grid.assign(m_ops.size() * m_columns.size(), -1);
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            const auto [op, column] = cellIds[i];
            if (op < 0)
                continue;
            m_grid[std::size_t(opRow[std::size_t(op)]) * m_columns.size() +
                   std::size_t(columnOfId[std::size_t(column)])] = int(i);
        }
    }
    m_selectedRow = rowOfOp(m_selectedOp);
    m_winner.assign(m_ops.size(), -1);
    m_rung.assign(m_columns.size(), 0);
    updateRegret();
    updateTuned();
    endResetModel();
    updateMarks();
}

void KernelMatrixModel::setResolution(TargetResolutionPtr resolution) {
    m_resolution = std::move(resolution);
    bool missing = false;
    if (m_resolution)
        for (const auto& r : m_resolution->resolutions)
            if (rowOfOp(qs(r.op)) >= 0)
                for (const auto& rung : r.rungs)
                    missing = missing || columnOf(rung.key[1], rung.key[2], rung.key[3]) < 0;
    if (missing)
        rebuild();
    else
        updateMarks();
}

void KernelMatrixModel::setSelectedOp(const QString& op) {
    m_selectedOp = op;
    m_selectedRow = rowOfOp(op);
    updateMarks();
}

QString KernelMatrixModel::opAt(int row) const {
    return row >= 0 && row < int(m_ops.size()) ? qs(m_ops[std::size_t(row)]) : QString();
}

int KernelMatrixModel::rowOfOp(const QString& op) const {
    const auto it = m_opIndex.find(op.toStdString());
    return it == m_opIndex.end() ? -1 : it->second;
}

int KernelMatrixModel::columnOf(const std::string& device, const std::string& arch,
                                const std::string& variant) const {
    const auto it = m_columnIndex.find(Column{device, arch, variant});
    return it == m_columnIndex.end() ? -1 : it->second;
}

void KernelMatrixModel::updateMarks() {
    m_winner.assign(m_ops.size(), -1);
    m_rung.assign(m_columns.size(), 0);
    if (m_resolution) {
        for (const auto& r : m_resolution->resolutions) {
            const int row = rowOfOp(qs(r.op));
            if (row < 0)
                continue;
            if (r.winner) {
                const auto& key = r.rungs[*r.winner].key;
                m_winner[std::size_t(row)] = columnOf(key[1], key[2], key[3]);
            }
            if (row == m_selectedRow)
                for (std::size_t i = 0; i < r.rungs.size(); ++i) {
                    const auto& key = r.rungs[i].key;
                    const int col = columnOf(key[1], key[2], key[3]);
                    if (col >= 0 && m_rung[std::size_t(col)] == 0)
                        m_rung[std::size_t(col)] = int(i) + 1;
                }
        }
    }
    if (rowCount() > 0 && columnCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    if (columnCount() > 0)
        emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
}

const CellRow* KernelMatrixModel::cellAt(int row, int column) const {
    if (row < 0 || column < 0 || row >= rowCount() || column >= columnCount())
        return nullptr;
    const int i = m_grid[std::size_t(row) * m_columns.size() + std::size_t(column)];
    return i < 0 ? nullptr : &m_catalog->kernels[std::size_t(i)];
}

int KernelMatrixModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_ops.size());
}

int KernelMatrixModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_columns.size());
}

void KernelMatrixModel::setDispatch(const std::vector<DispatchFinding>& findings) {
    m_dispatch = findings;
    updateRegret();
    updateTuned();
    if (rowCount() > 0 && columnCount() > 0)
        emit dataChanged(this->index(0, 0), this->index(rowCount() - 1, columnCount() - 1));
}

void KernelMatrixModel::updateRegret() {
    m_regret.clear();
    for (const auto& f : m_dispatch) {
        if (!f.regret())
            continue;
        const auto slash = f.resolved.find('/');
        if (slash == std::string::npos)
            continue;
        const int row = rowOfOp(qs(f.op));
        const int column = columnOf(f.device.substr(0, f.device.find(':')),
                                    f.resolved.substr(0, slash), f.resolved.substr(slash + 1));
        if (row >= 0 && column >= 0)
            m_regret[{row, column}] << qs(f.message());
    }
}

void KernelMatrixModel::setTunings(const std::vector<TuningStanding>& standings) {
    m_standings = standings;
    updateTuned();
    if (rowCount() > 0 && columnCount() > 0)
        emit dataChanged(this->index(0, 0), this->index(rowCount() - 1, columnCount() - 1));
}

void KernelMatrixModel::updateTuned() {
    m_tuned.clear();
    m_chosen.clear();
    for (const auto& s : m_standings) {
        if (!s.applies)
            continue;
        const auto& e = s.entry;
        const QString sizes = qs(e.sizes_text());
        const int row = rowOfOp(qs(e.op));
        auto column = [&](const TunedCell& cell) {
            return cell.arch().empty() ? -1 : columnOf(e.device, cell.arch(), cell.variant());
        };
        if (row < 0)
            continue;
        if (const int c = column(e.chosen); c >= 0) {
            m_tuned[{row, c}] << tr("⚙ tuned: chosen for %1 instead of %2 (%3, %4)")
                                     .arg(sizes, qs(e.overrides.cell), qs(s.file),
                                          qs(e.date.substr(0, 10)));
            m_chosen.insert({row, c});
        }
        if (const int c = column(e.overrides); c >= 0)
            m_tuned[{row, c}] << tr("tuned away from for %1: %2 is used instead (%3)")
                                     .arg(sizes, qs(e.chosen.cell), qs(s.file));
    }
}

QVariant KernelMatrixModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.model() != this)
        return {};
    const CellRow* cell = cellAt(index.row(), index.column());
    const bool winner = m_winner[std::size_t(index.row())] == index.column();
    const int rung = index.row() == m_selectedRow ? m_rung[std::size_t(index.column())] : 0;
    const CellState state = !cell ? Empty : cell->available ? Available : Unavailable;
    const auto regret = m_regret.find({index.row(), index.column()});
    const bool regretted = regret != m_regret.end();
    const auto tuned = m_tuned.find({index.row(), index.column()});
    const bool chosen = m_chosen.count({index.row(), index.column()}) > 0;
    switch (role) {
    case RegretRole:
        return regretted ? regret->second.join(QLatin1Char('\n')) : QString();
    case TunedRole:
        return tuned != m_tuned.end() ? tuned->second.join(QLatin1Char('\n')) : QString();
    case Qt::DisplayRole: {
        QString text = state == Empty       ? QString()
                       : state == Available ? QStringLiteral("✓")
                                            : QStringLiteral("✗");
        if (winner)
            text = QStringLiteral("★");
        if (rung > 0)
            text =
                QStringLiteral("%1 %2").arg(rung).arg(text.isEmpty() ? QStringLiteral("–") : text);
        if (regretted)
            text += QStringLiteral(" ⚑");
        if (chosen)
            text += QStringLiteral(" ⚙");
        return text;
    }
    case SortRole:
    case CellStateRole:
        return int(state);
    case WinnerRole:
        return winner;
    case RungRole:
        return rung;
    case BackendRole:
        return cell ? qs(cell->backend) : QString();
    case KeyRole: {
        const auto& c = m_columns[std::size_t(index.column())];
        return QStringLiteral("(%1, %2, %3, %4)")
            .arg(opAt(index.row()), qs(c[0]), qs(c[1]), qs(c[2]));
    }
    case Qt::TextAlignmentRole:
        return int(Qt::AlignCenter);
    case Qt::BackgroundRole:
        if (regretted)
            return QBrush(toneColor(Tone::Warning, true));
        if (winner)
            return QBrush(toneColor(Tone::Winner, true));
        if (state == Available)
            return QBrush(toneColor(Tone::Good, true));
        if (state == Unavailable)
            return QBrush(toneColor(Tone::Warning, true));
        if (rung > 0)
            return QBrush(toneColor(Tone::Muted, true));
        return {};
    case Qt::FontRole:
        if (rung > 0 || winner) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::ToolTipRole: {
        QString tip = data(index, KeyRole).toString();
        if (!cell)
            return tip + tr("\nnot declared by any backend") +
                   (rung > 0 ? tr("\nrung %1 of the fallback chain").arg(rung) : QString());
        tip += tr("\nsource: %1\nbackend: %2\nworkspace_bytes: %3")
                   .arg(qs(cell->source), qs(cell->backend))
                   .arg(cell->workspace_bytes);
        tip += cell->loaded ? tr("\nregistered by the library")
                            : tr("\ndeclared by the manifest (library not loaded yet)");
        if (!cell->available) {
            const BackendInfo* b = m_catalog->backend(cell->backend);
            const QString why = b ? qs(explain(*b).summary) : QString();
            tip += tr("\nunavailable: %1")
                       .arg(why.isEmpty() ? tr("its availability check says no on this machine")
                                          : why);
        }
        if (winner)
            tip += tr("\nresolved winner for %1")
                       .arg(m_resolution ? qs(m_resolution->target) : QString());
        if (rung > 0)
            tip += tr("\nrung %1 of the fallback chain").arg(rung);
        if (regretted)
            tip += tr("\n⚑ the last profile run found a faster cell:\n%1")
                       .arg(regret->second.join(QLatin1Char('\n')));
        if (tuned != m_tuned.end())
            tip += QLatin1Char('\n') + tuned->second.join(QLatin1Char('\n'));
        return tip;
    }
    }
    return {};
}

QVariant KernelMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Vertical) {
        if (role == Qt::DisplayRole)
            return opAt(section);
        return {};
    }
    if (section < 0 || section >= columnCount())
        return {};
    const auto& c = m_columns[std::size_t(section)];
    if (role == Qt::DisplayRole)
        return QStringLiteral("%1\n%2\n%3").arg(qs(c[0]), qs(c[1]), qs(c[2]));
    if (role == Qt::ToolTipRole)
        return QStringLiteral("device %1, arch %2, variant %3").arg(qs(c[0]), qs(c[1]), qs(c[2]));
    if (role == Qt::FontRole && m_rung[std::size_t(section)] > 0) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

ChainModel::ChainModel(QObject* parent) : QAbstractTableModel(parent) {}

void ChainModel::setResolution(std::optional<Resolution> resolution) {
    beginResetModel();
    m_resolution = std::move(resolution);
    endResetModel();
}

int ChainModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_resolution ? 0 : int(m_resolution->rungs.size());
}

int ChainModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ChainModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.model() != this || !m_resolution)
        return {};
    const auto& rung = m_resolution->rungs[std::size_t(index.row())];
    const bool winner = m_resolution->winner && *m_resolution->winner == std::size_t(index.row());
    if (role == WinnerRole)
        return winner;
    if (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case RungColumn:
            return role == SortRole ? QVariant(index.row() + 1)
                                    : QVariant(QString::number(index.row() + 1));
        case KeyColumn:
            return qs(rung.key.to_string());
        case DeclaredColumn:
            return rung.declared ? tr("declared") : tr("not declared");
        case AvailableColumn:
            return winner           ? tr("★ wins")
                   : rung.available ? tr("available")
                   : rung.declared  ? tr("unavailable")
                                    : QString();
        case BackendColumn:
            return qs(rung.backend);
        case WhyColumn:
            return qs(rung.why_not);
        }
    }
    if (role == Qt::BackgroundRole) {
        if (winner)
            return QBrush(toneColor(Tone::Winner, true));
        if (rung.declared && !rung.available)
            return QBrush(toneColor(Tone::Warning, true));
        if (rung.available)
            return QBrush(toneColor(Tone::Good, true));
    }
    if (role == Qt::FontRole && winner) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

QVariant ChainModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case RungColumn:
        return tr("Rung");
    case KeyColumn:
        return tr("Key");
    case DeclaredColumn:
        return tr("Declared");
    case AvailableColumn:
        return tr("Here");
    case BackendColumn:
        return tr("Backend");
    case WhyColumn:
        return tr("Why not");
    }
    return {};
}

} // namespace switchyard::ui
