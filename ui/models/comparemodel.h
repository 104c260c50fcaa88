// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/report/compare.h>
#include <switchyard/report/report.h>

#include <QAbstractTableModel>
#include <QStringList>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::ui {

/// Two reports side by side (core compare: Mann-Whitney verdicts): one line per paired row
/// with both medians, the ratio B/A, the p-value and SAME/FASTER/SLOWER/AMBIGUOUS coloured,
/// then the rows only one report has ("only in A" / "only in B").
class CompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        OpColumn,
        SizeColumn,
        DeviceColumn,
        BackendColumn,
        VariantColumn,
        MedianAColumn,
        MedianBColumn,
        RatioColumn,
        PValueColumn,
        VerdictColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, VerdictRole };

    explicit CompareModel(QObject* parent = nullptr);

    void setReports(const Report& a, const Report& b, const CompareOptions& options = {});
    void clear();
    const Comparison& comparison() const { return m_comparison; }
    int pairCount() const { return int(m_comparison.pairs().size()); }
    /// "SAME", "FASTER", ..., or "only in A" / "only in B" for row `row`.
    QString verdictAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    const ProfileRow& rowA(int row) const; // the row's own ProfileRow (A, or B when only in B)
    Comparison m_comparison;
};

/// N reports as columns ("the same kernel on five machines"): one line per kernel cell and
/// size (ProfileRow::key()), one column per report with its median and the ratio to the
/// first report (the baseline), coloured by the core's verdict against it
/// (MultiComparison: the CLI's `compare` verdicts); OutlierRole marks a cell far from the
/// other machines.
class MultiCompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum FixedColumns { OpColumn, SizeColumn, DeviceColumn, VariantColumn, FixedColumnCount };
    enum Roles { SortRole = Qt::UserRole, VerdictRole, OutlierRole };

    explicit MultiCompareModel(QObject* parent = nullptr);

    /// `names` label the columns (file names); one per report.
    void setReports(std::vector<Report> reports, QStringList names,
                    const CompareOptions& options = {});
    int reportCount() const { return int(m_reports.size()); }
    /// The verdict of report `report` against the baseline in line `row` ("" for the
    /// baseline itself or when the row is missing).
    QString verdictAt(int row, int report) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<Report> m_reports;
    QStringList m_names;
    std::optional<MultiComparison> m_comparison; // points into m_reports
};

/// The colour of a verdict (FASTER green, SLOWER red, AMBIGUOUS amber; SAME none).
QVariant verdictBackground(const QString& verdict);

} // namespace switchyard::ui
