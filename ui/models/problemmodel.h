// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/doctor/doctor.h>

#include <QAbstractTableModel>

#include <vector>

namespace switchyard::ui {

/// Every problem on the machine (the doctor's rules), each with its fix: the support
/// person's first screen.
class ProblemModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        SeverityColumn,
        SubjectColumn,
        CauseColumn,
        ProblemColumn,
        FixColumn,
        ColumnCount
    };
    enum Roles { SortRole = Qt::UserRole, SubjectRole, CauseRole };

    explicit ProblemModel(QObject* parent = nullptr);

    void setResults(std::vector<DoctorProblem> problems);
    const DoctorProblem* problemAt(const QModelIndex& index) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<DoctorProblem> m_problems;
};

} // namespace switchyard::ui
