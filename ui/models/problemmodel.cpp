// SPDX-License-Identifier: MIT
#include "models/problemmodel.h"

#include "models/qtstring.h"

#include <QApplication>
#include <QStyle>

namespace switchyard::ui {

ProblemModel::ProblemModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProblemModel::setResults(std::vector<DoctorProblem> problems) {
    beginResetModel();
    m_problems = std::move(problems);
    endResetModel();
}

const DoctorProblem* ProblemModel::problemAt(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this || index.row() >= rowCount())
        return nullptr;
    return &m_problems[static_cast<std::size_t>(index.row())];
}

int ProblemModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_problems.size());
}

int ProblemModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProblemModel::data(const QModelIndex& index, int role) const {
    const DoctorProblem* p = problemAt(index);
    if (!p)
        return {};
    if (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case SeverityColumn:
            if (role == SortRole)
                return static_cast<int>(p->severity);
            return qs(to_string(p->severity));
        case SubjectColumn:
            return qs(p->subject);
        case CauseColumn:
            return p->cause == BackendCause::None ? QString() : qs(to_string(p->cause));
        case ProblemColumn:
            return qs(p->problem);
        case FixColumn:
            return qs(p->fix);
        }
    }
    if (role == Qt::DecorationRole && index.column() == SeverityColumn) {
        const auto icon =
            p->severity == DoctorProblem::Severity::Error     ? QStyle::SP_MessageBoxCritical
            : p->severity == DoctorProblem::Severity::Warning ? QStyle::SP_MessageBoxWarning
                                                              : QStyle::SP_MessageBoxInformation;
        return QApplication::style()->standardIcon(icon);
    }
    if (role == SubjectRole)
        return qs(p->subject);
    if (role == CauseRole)
        return qs(to_string(p->cause));
    return {};
}

QVariant ProblemModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeverityColumn:
        return tr("Severity");
    case SubjectColumn:
        return tr("Subject");
    case CauseColumn:
        return tr("Cause");
    case ProblemColumn:
        return tr("Problem");
    case FixColumn:
        return tr("Fix");
    }
    return {};
}

} // namespace switchyard::ui
