// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/report/abreport.h>

#include <QAbstractTableModel>

#include <vector>

namespace switchyard::ui {

/// A paired A/B run's rows (the core's AbReport): one line per row with both sides' medians,
/// the pairs, the median ratio B/A and its 90 % interval, q and the verdict, coloured as the
/// Compare tab colours compare's. Rows arrive one by one while the run goes (addRow(), each
/// judged alone), then setReport() puts the run's verdicts (the false-discovery control over
/// all rows) in their place.
class AbModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        OpColumn,
        SizeColumn,
        DeviceColumn,
        CellColumn,
        MedianAColumn,
        MedianBColumn,
        PairsColumn,
        RatioColumn,
        IntervalColumn,
        QColumn,
        VerdictColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, VerdictRole };

    explicit AbModel(QObject* parent = nullptr);

    void setReport(const AbReport& report);
    void addRow(const AbRow& row);
    void clear();
    const std::vector<AbRow>& rows() const { return m_rows; }
    /// "SAME", "FASTER", "SLOWER" or "AMBIGUOUS" for row `row`.
    QString verdictAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<AbRow> m_rows;
};

} // namespace switchyard::ui
