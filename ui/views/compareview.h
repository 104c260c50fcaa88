// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/report/report.h>

#include <QStringList>
#include <QWidget>

#include <vector>

class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

namespace switchyard::ui {

class AbView;
class CompareModel;
class MultiCompareModel;

/// Reports compared: two side by side (verdicts, ratio, p-value, unmatched rows, a
/// warning when the machines' ceilings differ) and N as columns (one line per kernel cell
/// and size).
class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    /// Two or more reports, named by `names` (file names). The first two fill the pairwise
    /// table, all of them the N-report table.
    void setReports(const std::vector<Report>& reports, const QStringList& names);

    CompareModel* pairModel() const { return m_pair; }
    MultiCompareModel* multiModel() const { return m_multi; }
    /// "A/B in one run": two builds measured in paired turns (its controller injected).
    AbView* abView() const { return m_ab; }
    /// The tabs: the two tables, and the A/B run.
    enum Pane { PairPane, AllPane, AbPane };
    void showPane(Pane pane);

private:
    void showRule(const Report& baseline);
    CompareModel* m_pair;
    MultiCompareModel* m_multi;
    QSortFilterProxyModel* m_pairProxy;
    QSortFilterProxyModel* m_multiProxy;
    QTableView* m_pairTable;
    QTableView* m_multiTable;
    QLabel* m_summary;
    QLabel* m_rule; // the verdict rule, its calibration on this machine, what more runs would do
    QLabel* m_warning;
    QTabWidget* m_tabs;
    AbView* m_ab;
};

} // namespace switchyard::ui
