// SPDX-License-Identifier: MIT
#pragma once

#include "controllers/fleetloader.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace switchyard::ui {

class MultiCompareModel;
class RegretMapModel;

/// A fleet folder as one table: one column per machine (its host name; the file
/// in the tooltip), one line per kernel cell and size, each cell coloured by the core's
/// verdict against the baseline column (MultiComparison, the CLI's `compare FOLDER`),
/// outliers framed; the files that could not be read listed with their errors; beside the
/// table, the selected machine's context and how its fingerprint differs from the
/// baseline's. The baseline is chosen in the combo box or from a column header's menu.
/// The Tuning page: the tuning per machine class (the entries all its nodes agree on, the
/// CLI's `fleet collect --tune`), a button that writes them, and the regret map as a table
/// with Copy as text.
class FleetView : public QWidget {
    Q_OBJECT
public:
    enum Page { ComparisonPage, TuningPage };

    explicit FleetView(QWidget* parent = nullptr);

    /// The loader that writes the tunings off the GUI thread (the window's FleetLoader).
    void setLoader(FleetLoader* loader);
    void showPage(Page page);

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

    /// The fleet's tuning and regret map as last computed or written.
    const fleet::FleetTuning& tuning() const { return m_tuning; }
    RegretMapModel* regretModel() const { return m_regretModel; }
    QSortFilterProxyModel* regretProxy() const { return m_regretProxy; }
    /// fleet::FleetTuning::regret_map_text(): the CLI's text.
    QString regretMapText() const;
    /// Puts regretMapText() on the clipboard.
    void copyRegretMap();
    /// Writes one tuning file per machine class into the folder the page names (by default
    /// FOLDER/tuning), through the loader; tuningsWritten() follows.
    void writeTunings();

signals:
    /// The table shows a new fleet, or the same against another baseline.
    void fleetShown();
    /// writeTunings() finished: `ok` false when a file could not be written (the page says why).
    void tuningsWritten(bool ok);

private:
    void showHeaderMenu(const QPoint& pos);
    void updateSummary();
    void showTuning();
    void onTuningsWritten(const TuningsWrittenPtr& result);

    MultiCompareModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
    QLabel* m_title;
    QLabel* m_summary;
    QComboBox* m_baselineBox;
    QPushButton* m_copy;
    QPlainTextEdit* m_issues;
    QTextBrowser* m_details;
    QTabWidget* m_pages;
    RegretMapModel* m_regretModel;
    QSortFilterProxyModel* m_regretProxy;
    QTableView* m_regretTable;
    QPlainTextEdit* m_tuningSummary;
    QLineEdit* m_tuningDir;
    QPushButton* m_writeTunings;
    QPushButton* m_copyRegret;
    QLabel* m_tuningStatus;
    FleetLoader* m_loader = nullptr;
    fleet::FleetTuning m_tuning;
    QString m_folder;
    double m_seconds = 0;
    int m_shown = -1;
};

} // namespace switchyard::ui
