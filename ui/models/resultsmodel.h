// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/profiling/profilerow.h>
#include <switchyard/report/dispatch.h>

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <map>
#include <string>
#include <vector>

namespace switchyard::ui {

/// How a row's status reads: "ok", "FAIL", "error", "crashed (SIGSEGV)", "timed out".
QString rowStatusText(const ProfileRow& row);
/// "12.3 µs", "4.56 ms": a time in seconds with a unit that keeps 3 significant digits.
QString formatSeconds(double seconds);
/// The row's arithmetic intensity (FLOP/byte): ProfileRow::intensity, else flops / bytes.
double rowIntensity(const ProfileRow& row);
/// "78% L3" (ProfileRow::ceiling_fraction and ::level); the level alone ("cache: no
/// ceiling") when the row has none that bounds it; empty for rows not measured.
QString ceilingText(const ProfileRow& row);
/// "4.04×", "30×": a speedup over the CPU reference as the ×ref column shows it.
QString speedupText(double speedup);
/// A row in a few lines, as the table shows it: op, size, device, backend, arch/variant;
/// GFLOP/s, GB/s, arithmetic intensity and median; the level and fraction of its ceiling
/// (ceilingText). The plots' tooltips.
QString rowSummary(const ProfileRow& row);
/// The row's element count (the product of its dims): how sizes sort, as numbers.
double rowElements(const ProfileRow& row);

/// The first five columns of the results and compare tables name the row: op, size,
/// device, backend, arch/variant (column numbers 0..4 in both models).
constexpr int kRowIdentityColumns = 5;
QString rowIdentityHeader(int column);
/// Display text of identity column `column`; as a number for the size when `forSort`.
QVariant rowIdentityData(const ProfileRow& row, int column, bool forSort);

/// The rows of a profile run or a report, one line each. Rows are appended as they finish.
class ResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        OpColumn,
        SizeColumn,
        DeviceColumn,
        BackendColumn,
        VariantColumn, // arch/variant
        MedianColumn,
        NoiseColumn,
        SamplesColumn,
        StopColumn,
        GbpsColumn,
        GflopsColumn,
        CeilingColumn, // fraction of the row's ceiling, with its level
        SpeedupColumn, // the CPU reference's median over the row's ("×ref")
        ClockColumn,   // the effective clock during the samples (GHz), "!" when throttled
        ParityColumn,
        StatusColumn,
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole, // numbers for numeric columns
        StatusRole,              // the RowStatus id ("ok", "crashed", ...)
        RowRole,                 // int: the row's position in rows()
    };

    explicit ResultsModel(QObject* parent = nullptr);

    void clear();
    void setRows(std::vector<ProfileRow> rows);
    void addRow(const ProfileRow& row);
    const std::vector<ProfileRow>& rows() const { return m_rows; }
    const ProfileRow& row(int i) const { return m_rows[std::size_t(i)]; }
    /// The reference's median over row `i`'s: ProfileRow::reference_speedup, else from the
    /// measured reference row of the same (op, size) among the rows (0: none).
    double speedup(int i) const;
    /// The dispatch findings of the run (Report::dispatch): the resolved row of a "regret"
    /// is marked, and its tooltip says which cell is faster.
    void setDispatch(std::vector<DispatchFinding> findings);
    const std::vector<DispatchFinding>& dispatch() const { return m_dispatch; }
    /// The finding whose resolved row is row `i` (nullptr: none).
    const DispatchFinding* findingFor(int i) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void indexRow(std::size_t i);

    std::vector<ProfileRow> m_rows;
    std::map<std::string, std::size_t> m_references; // "op|size" -> the reference row
    std::vector<DispatchFinding> m_dispatch;
    std::map<std::int64_t, std::size_t> m_findingByIndex; // row index -> finding
};

/// Sorting and filtering for the results: a text filter over every column (op, device,
/// variant, status...) and "problems only" (rows that are not ok or carry warnings).
/// The plots draw what this proxy lets through.
class ResultsFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit ResultsFilterProxy(QObject* parent = nullptr);

    void setProblemsOnly(bool on);
    bool problemsOnly() const { return m_problemsOnly; }
    /// The rows that pass the filter, in the proxy's order.
    std::vector<const ProfileRow*> visibleRows() const;
    /// The source model's row numbers of the rows that pass the filter, in the proxy's order.
    std::vector<int> visibleSourceRows() const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool m_problemsOnly = false;
};

/// A table model as CSV (the header first; display texts; quoted where needed).
QString modelToCsv(const QAbstractItemModel* model);

} // namespace switchyard::ui
