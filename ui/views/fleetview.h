// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/fleetloader.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTextBrowser;

namespace switchyard::ui {

class MultiCompareModel;

/// A fleet folder as one table: one column per machine (its host name; the file
/// in the tooltip), one line per kernel cell and size, each cell coloured by the core's
/// verdict against the baseline column (MultiComparison, the CLI's `compare FOLDER`),
/// outliers framed; the files that could not be read listed with their errors; beside the
/// table, the selected machine's context and how its fingerprint differs from the
/// baseline's. The baseline is chosen in the combo box or from a column header's menu.
class FleetView : public QWidget {
    Q_OBJECT
public:
    explicit FleetView(QWidget* parent = nullptr);

    /// "Reading FOLDER…" until the fleet arrives.
    void setLoading(const QString& folder);
    /// Shows `fleet`: its reports move into the model (the fleet keeps the rest).
    void setFleet(Fleet& fleet);
    /// Judges every column against report `report` (0-based).
    void setBaseline(int report);
    /// The machine whose context the side panel shows.
    void showMachine(int report);
    int shownMachine() const { return m_shown; }
    /// MultiComparison::to_text() of what is shown ("" with fewer than two reports).
    QString comparisonText() const;
    /// Puts comparisonText() on the clipboard.
    void copyAsText();

    QString folder() const { return m_folder; }
    MultiCompareModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }

signals:
    /// The table shows a new fleet, or the same against another baseline.
    void fleetShown();

private:
    void showHeaderMenu(const QPoint& pos);
    void updateSummary();

    MultiCompareModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
    QLabel* m_title;
    QLabel* m_summary;
    QComboBox* m_baselineBox;
    QPushButton* m_copy;
    QPlainTextEdit* m_issues;
    QTextBrowser* m_details;
    QString m_folder;
    double m_seconds = 0;
    int m_shown = -1;
};

} // namespace switchyard::ui
