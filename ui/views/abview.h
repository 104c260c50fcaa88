// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/report/abreport.h>

#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace switchyard::ui {

class AbModel;
class AbRunController;

/// The Compare tab's "A/B in one run": two plugin folders (or builds of one plugin), what to
/// run, live progress (row, side, pair), and the paired verdicts as the rows come in
/// (`switchyard-cli ab` in the GUI).
class AbView : public QWidget {
    Q_OBJECT
public:
    explicit AbView(QWidget* parent = nullptr);
    /// The controller that runs it (injected by the main window; tests give their own).
    void setController(AbRunController* controller);

    AbModel* model() const { return m_model; }
    /// The fields, for tests and the main window: side A's and B's folders, the ops, the
    /// sizes, the cells (as `--cells`), the devices.
    void setSides(const QString& a, const QString& b);
    void setSelection(const QString& ops, const QString& sizes, const QString& cells,
                      const QString& devices = QStringLiteral("cpu"));
    void setBudget(double seconds);
    void setPairs(int pairs);
    /// Starts the run as the fields say; false (and the reason shown) when they do not parse.
    bool run();
    QString status() const;

private:
    void browse(QLineEdit* field);
    void onFinished(const AbReport& report, bool cancelled);
    void showError(const QString& error);

    AbRunController* m_controller = nullptr;
    AbModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_a;
    QLineEdit* m_b;
    QLineEdit* m_ops;
    QLineEdit* m_sizes;
    QLineEdit* m_cells;
    QLineEdit* m_devices;
    QDoubleSpinBox* m_budget;
    QSpinBox* m_pairs;
    QPushButton* m_run;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTableView* m_table;
    int m_rows = 0;
};

} // namespace switchyard::ui
