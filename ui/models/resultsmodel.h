// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/profiling/profilerow.h>

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <vector>

namespace switchyard::ui {

/// How a row's status reads: "ok", "FAIL", "error", "crashed (SIGSEGV)", "timed out".
QString rowStatusText(const ProfileRow& row);
/// "12.3 µs", "4.56 ms": a time in seconds with a unit that keeps 3 significant digits.
QString formatSeconds(double seconds);
/// The row's arithmetic intensity (FLOP/byte): ProfileRow::intensity, else flops / bytes.
double rowIntensity(const ProfileRow& row);
/// "78% L3" (ProfileRow::ceiling_fraction and ::level); "12% peak BW" from the older
/// bandwidth fraction when the row has no ceiling; empty when neither is known.
QString ceilingText(const ProfileRow& row);
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

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<ProfileRow> m_rows;
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

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool m_problemsOnly = false;
};

/// A table model as CSV (the header first; display texts; quoted where needed).
QString modelToCsv(const QAbstractItemModel* model);

} // namespace switchyard::ui
