// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/profiling/profilesettings.h>
#include <switchyard/report/report.h>
#include <switchyard/sdk/device.h>

#include <QWidget>

#include <functional>

#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QTabWidget;
class QTextBrowser;
class QTimer;

namespace switchyard::ui {

class PlotsView;
class ProfileController;
class ResultsFilterProxy;
class ResultsModel;

/// The profiler screen: what to run (ops, devices, variants, sizes, cold cache, budget,
/// noise target), Run/Cancel with progress and ETA, the results table (sortable,
/// filterable), the plots that follow its filter, the log of warnings and failures, and
/// the context of the run or the opened report.
class ProfileView : public QWidget {
    Q_OBJECT
public:
    /// `controller` runs the profiles this view starts (injected, as MainWindow does with the
    /// CatalogController; the view does not own it).
    explicit ProfileView(ProfileController* controller, QWidget* parent = nullptr);
    ~ProfileView() override;

    /// The devices offered in the run panel (the catalog's detected devices).
    void setDevices(const std::vector<DeviceInfo>& devices);
    /// Pre-fills the run choices (the matrix's "Profile"): empty lists leave all unchecked
    /// (meaning every op / every device).
    void setChoices(const QStringList& ops, const QStringList& devices, bool allVariants);
    /// The settings the panel describes; throws std::invalid_argument naming a bad field
    /// (an unreadable size) and what to do.
    ProfileSettings settings() const;

    /// Starts a run with the panel's settings (changed by `adjust` when given: Tune dispatch's
    /// run of every variant); false with the reason in the log when it cannot start.
    bool run(const std::function<void(ProfileSettings&)>& adjust = {});
    /// Whether runs follow the machine's tuning files (ProfileSettings::use_tuning;
    /// Profile ▸ Follow tuning files).
    void setFollowTuning(bool follow) { m_followTuning = follow; }
    bool followTuning() const { return m_followTuning; }
    void cancel();
    bool isRunning() const;

    /// Shows a report (opened from a file): its rows, plots and context.
    void setReport(const Report& report, const QString& origin);
    /// The shown rows and context, as a report to save.
    Report report() const;
    bool hasRows() const;
    /// Writes the filtered table as CSV; the error text, or empty on success.
    QString exportCsv(const QString& path) const;

    ProfileController* controller() const { return m_controller; }
    ResultsModel* model() const { return m_model; }
    ResultsFilterProxy* proxy() const { return m_proxy; }
    /// The plots, for the window's File ▸ Export plot and its screenshots.
    PlotsView* plots() const { return m_plots; }
    /// The sizes field (the GUI's --sizes): a non-empty text switches to the custom list.
    void setSizes(const QString& sizes);
    /// The sampling budget per row, in seconds (the GUI's --budget).
    void setBudget(double seconds);

    /// The tabs under the results table.
    enum Pane { PlotsPane, LogPane, ContextPane };
    void showPane(Pane pane);
    /// The noisy-machine banner's text, empty while it is hidden (more than a quarter of the
    /// shown rows missed the noise target: NoiseVerdict).
    QString noiseBanner() const;
    void appendLog(const QString& line);

signals:
    void runFinished(bool cancelled);
    /// The shown report changed (a run started or a report was opened).
    void reportChanged();

private:
    QWidget* buildRunPanel();
    void setRunning(bool running);
    void schedulePlots();
    void logRow(const ProfileRow& row);
    void updateNoiseBanner();

    ProfileController* m_controller;
    ResultsModel* m_model;
    ResultsFilterProxy* m_proxy;
    PlotsView* m_plots;
    QTableView* m_table;
    QLineEdit* m_filter;
    QCheckBox* m_problemsOnly;
    QListWidget* m_ops;
    QListWidget* m_devices;
    QComboBox* m_variants;
    QComboBox* m_sizeMode;
    QLineEdit* m_sizes;
    QCheckBox* m_cold;
    QDoubleSpinBox* m_budget;
    QDoubleSpinBox* m_referenceBudget;
    QDoubleSpinBox* m_noise;
    QDoubleSpinBox* m_timeout;
    QSpinBox* m_repeat;
    QSpinBox* m_slices;
    bool m_followTuning = true;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_eta;
    QLabel* m_origin;
    QLabel* m_noiseBanner;
    QPlainTextEdit* m_log;
    QTextBrowser* m_contextView;
    QTabWidget* m_bottom;
    QTimer* m_plotTimer;
    std::optional<RunContext> m_context; // the run's or the report's; none before either
};

} // namespace switchyard::ui
