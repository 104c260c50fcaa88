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
/// baseline report (the first unless setBaseline()), coloured by the core's verdict against
/// it (MultiComparison: the CLI's `compare` verdicts); OutlierRole marks a cell far from the
/// other machines (bold, with the reason in its tooltip).
class MultiCompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum FixedColumns { OpColumn, SizeColumn, DeviceColumn, VariantColumn, FixedColumnCount };
    enum Roles { SortRole = Qt::UserRole, VerdictRole, OutlierRole };

    explicit MultiCompareModel(QObject* parent = nullptr);

    /// `names` label the columns (file names, or the machines' host names); one per
    /// report. `files`, when given, name the reports in the comparison itself (its notes
    /// and to_text(), as the CLI names them) and in the column's tooltip. `baseline` is the
    /// reference column (0-based).
    void setReports(std::vector<Report> reports, QStringList names,
                    const CompareOptions& options = {}, int baseline = 0, QStringList files = {});
    /// Judges every column against report `baseline` instead (resets the model).
    void setBaseline(int baseline);
    int baseline() const { return m_comparison ? int(m_comparison->baseline()) : 0; }
    int reportCount() const { return int(m_reports.size()); }
    const std::vector<Report>& reports() const { return m_reports; }
    QString reportName(int report) const { return m_names.value(report); }
    QString reportFile(int report) const { return m_files.value(report); }
    /// The comparison shown (nullptr with fewer than two reports).
    const MultiComparison* comparison() const { return m_comparison ? &*m_comparison : nullptr; }
    /// The column of report `report`, and back (-1: not a report column).
    static int columnOf(int report) { return FixedColumnCount + report; }
    static int reportOf(int column) {
        return column >= FixedColumnCount ? column - FixedColumnCount : -1;
    }
    /// Why the cell is an outlier ("" when it is not): how far its median is from the
    /// line's median over the machines.
    QString outlierReason(int row, int report) const;
    /// The verdict of report `report` against the baseline in line `row` ("" for the
    /// baseline itself or when the row is missing).
    QString verdictAt(int row, int report) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void compare(int baseline);
    QString cellToolTip(int row, int report) const;

    std::vector<Report> m_reports;
    QStringList m_names;
    QStringList m_files; // the names the comparison itself uses (m_names when not given)
    CompareOptions m_options;
    std::optional<MultiComparison> m_comparison; // points into m_reports
};

/// The colour of a verdict (FASTER green, SLOWER red, AMBIGUOUS amber; SAME none).
QVariant verdictBackground(const QString& verdict);

} // namespace switchyard::ui
