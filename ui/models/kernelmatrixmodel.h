// SPDX-License-Identifier: MIT
#pragma once

#include "models/catalog.h"

#include <switchyard/report/dispatch.h>
#include <switchyard/tuning/tunedresolve.h>

#include <QAbstractTableModel>

#include <array>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace switchyard::ui {

/// The kernel matrix: ops as rows, (device, arch, variant) as columns grouped by device
/// (most specific arch first). A cell is empty, available, declared but unavailable, or
/// the winner of its op's resolution for the current target; the selected op's fallback
/// chain is marked rung by rung. Flat vectors, no per-cell objects: smooth at 100,000 cells.
class KernelMatrixModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Roles {
        SortRole = Qt::UserRole,
        CellStateRole, // CellState
        WinnerRole,    // bool: the resolved winner of this op for the target
        RungRole,      // 1-based rung of the selected op's chain; 0 when not on it
        BackendRole,
        KeyRole,    // "(op, device, arch, variant)"
        RegretRole, // QString: the last profile run's dispatch-regret messages for this cell
        TunedRole,  // QString: what the tuning files that apply here do to this cell
    };
    enum CellState { Empty, Available, Unavailable };

    explicit KernelMatrixModel(QObject* parent = nullptr);

    void setResults(CatalogPtr catalog);
    void setResolution(TargetResolutionPtr resolution);
    /// Highlights `op`'s chain (empty: none).
    void setSelectedOp(const QString& op);
    QString opAt(int row) const;
    int rowOfOp(const QString& op) const;
    /// The column of (device, arch, variant); -1 when no cell has it.
    int columnOf(const std::string& device, const std::string& arch,
                 const std::string& variant) const;
    const TargetResolutionPtr& resolution() const { return m_resolution; }
    /// The dispatch findings of the last profile run (ResultsModel::dispatch()): the cell
    /// of each "regret" (the one dispatch picked there) is flagged, its tooltip says which
    /// cell is faster at which size.
    void setDispatch(const std::vector<DispatchFinding>& findings);
    /// The tuning files' entries as they stand here (tuning_standings()): the cell each one
    /// that applies chooses is marked ⚙, and both it and the cell it overrides say so in
    /// their tooltips. Empty: none (Profile ▸ Follow tuning files off).
    void setTunings(const std::vector<TuningStanding>& standings);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    const CellRow* cellAt(int row, int column) const;
    void rebuild();
    void updateMarks();

    using Column = std::array<std::string, 3>; // device, arch, variant
    CatalogPtr m_catalog;
    TargetResolutionPtr m_resolution;
    std::vector<std::string> m_ops;
    std::vector<Column> m_columns;
    std::map<Column, int> m_columnIndex;            // column -> its index in m_columns
    std::unordered_map<std::string, int> m_opIndex; // op -> its row
    std::vector<int> m_grid;   // row * columns + column -> index into kernels, or -1
    std::vector<int> m_winner; // per row: the winning column, or -1
    std::vector<int> m_rung;   // per column: the selected op's rung (1-based), 0 if none
    int m_selectedRow = -1;
    QString m_selectedOp;
    std::vector<DispatchFinding> m_dispatch;
    std::map<std::pair<int, int>, QStringList> m_regret; // (row, column) -> messages
    void updateRegret();
    std::vector<TuningStanding> m_standings;
    std::map<std::pair<int, int>, QStringList> m_tuned; // (row, column) -> what tunings do
    std::set<std::pair<int, int>> m_chosen;             // ... cells a tuning chooses
    void updateTuned();
};

/// The rungs of one op's fallback chain for the target: declared, available, who wins.
class ChainModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        RungColumn,
        KeyColumn,
        DeclaredColumn,
        AvailableColumn,
        BackendColumn,
        WhyColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, WinnerRole };

    explicit ChainModel(QObject* parent = nullptr);
    /// nullopt clears it.
    void setResolution(std::optional<Resolution> resolution);
    const std::optional<Resolution>& resolution() const { return m_resolution; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::optional<Resolution> m_resolution;
};

} // namespace switchyard::ui
