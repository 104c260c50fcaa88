// SPDX-License-Identifier: MIT
#include "views/profileview.h"

#include "controllers/profilecontroller.h"
#include "models/qtstring.h"
#include "models/resultscontext.h"
#include "models/resultsmodel.h"
#include "views/plotsview.h"
#include "views/viewsupport.h"

#include <switchyard/profiling/ceilingtext.h>
#include <switchyard/profiling/ops.h>

#include <iterator>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <stdexcept>

namespace switchyard::ui {

namespace {

QStringList checkedItems(const QListWidget* list) {
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->checkState() == Qt::Checked)
            out << list->item(i)->data(Qt::UserRole).toString();
    return out;
}

void addCheckable(QListWidget* list, const QString& id, const QString& text) {
    auto* item = new QListWidgetItem(text, list);
    item->setData(Qt::UserRole, id);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Unchecked);
}

QString etaText(double s) {
    if (s < 0)
        return QObject::tr("ETA —");
    if (s < 60)
        return QObject::tr("ETA %1 s").arg(int(s + 0.5));
    return QObject::tr("ETA %1 min %2 s").arg(int(s) / 60).arg(int(s) % 60);
}

} // namespace

ProfileView::ProfileView(ProfileController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_model(new ResultsModel(this)),
      m_proxy(new ResultsFilterProxy(this)), m_plots(new PlotsView), m_table(new QTableView),
      m_filter(new QLineEdit), m_problemsOnly(new QCheckBox(tr("Problems onl&y"))),
      m_ops(new QListWidget), m_devices(new QListWidget), m_variants(new QComboBox),
      m_sizeMode(new QComboBox), m_sizes(new QLineEdit),
      m_cold(new QCheckBox(tr("Co&ld cache (evict before each sample)"))),
      m_budget(new QDoubleSpinBox), m_referenceBudget(new QDoubleSpinBox),
      m_noise(new QDoubleSpinBox), m_timeout(new QDoubleSpinBox), m_repeat(new QSpinBox),
      m_slices(new QSpinBox), m_run(new QPushButton(tr("&Run"))),
      m_cancel(new QPushButton(tr("&Cancel"))), m_progress(new QProgressBar), m_eta(new QLabel),
      m_origin(new QLabel), m_noiseBanner(makeBanner(Tone::Warning)), m_log(new QPlainTextEdit),
      m_contextView(new QTextBrowser), m_bottom(new QTabWidget), m_plotTimer(new QTimer(this)) {
    identify(this, "profileView", tr("Profiler"),
             tr("What to run, the results table, its plots, log and context"));
    identify(m_table, "resultsTable", tr("Results"),
             tr("One row per measured kernel, size and device; sortable"));
    identify(m_filter, "resultsFilter", tr("Filter rows"),
             tr("Shows only the rows whose op, device, variant or status contain this text; "
                "the plots follow"));
    identify(m_problemsOnly, "problemsOnly", tr("Problems only"),
             tr("Shows only the rows that failed, crashed, timed out or carry a warning"));
    identify(m_plots, "plotsView", tr("Plots"));
    identify(m_log, "profileLog", tr("Log"), tr("Warnings and failures of the run"));
    identify(m_contextView, "runContext", tr("Context"),
             tr("The machine, devices, ceilings and settings of the shown run"));
    identify(m_bottom, "profileBottomTabs", tr("Plots, log and context"));
    identify(m_origin, "resultsOrigin", tr("Where the rows come from"));
    identify(m_noiseBanner, "noiseBanner", tr("Noisy machine"));
    m_proxy->setSourceModel(m_model);
    m_table->setModel(m_proxy);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder); // run order
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->setDefaultSectionSize(22);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    const int widths[] = {110, 110, 70, 80, 150, 74, 76, 62, 110, 62, 70, 100, 64, 56, 190, 120};
    static_assert(std::size(widths) == ResultsModel::ColumnCount, "one width per column");
    for (int c = 0; c < ResultsModel::ColumnCount; ++c)
        m_table->setColumnWidth(c, widths[c]);
    m_filter->setPlaceholderText(tr("Filter rows (op, device, variant, status…)"));
    m_filter->setClearButtonEnabled(true);
    m_log->setReadOnly(true);
    m_contextView->setOpenLinks(false);
    m_origin->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_origin->setWordWrap(true);
    m_plotTimer->setSingleShot(true);
    m_plotTimer->setInterval(120);

    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_problemsOnly);
    auto* tableBox = new QWidget;
    auto* tl = new QVBoxLayout(tableBox);
    tl->setContentsMargins(0, 0, 0, 0);
    tl->addWidget(m_origin);
    // One banner for a machine too noisy for the target, instead of a yellow cell per row.
    tl->addWidget(m_noiseBanner);
    tl->addLayout(filterRow);
    tl->addWidget(m_table, 1);

    m_bottom->addTab(m_plots, tr("Plots"));
    m_bottom->addTab(m_log, tr("Log"));
    m_bottom->addTab(m_contextView, tr("Context"));
    auto* right = new QSplitter(Qt::Vertical);
    right->setObjectName(QStringLiteral("profileResultsSplitter"));
    right->addWidget(tableBox);
    right->addWidget(m_bottom);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    auto* split = new QSplitter(Qt::Horizontal);
    split->setObjectName(QStringLiteral("profileSplitter"));
    split->addWidget(buildRunPanel());
    split->addWidget(right);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setSizes({270, 1000});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &ResultsFilterProxy::setFilterFixedString);
    connect(m_problemsOnly, &QCheckBox::toggled, m_proxy, &ResultsFilterProxy::setProblemsOnly);
    // The plots follow what the table shows (coalesced: rows arrive in bursts).
    for (auto sig : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(m_proxy, sig, this, &ProfileView::schedulePlots);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &ProfileView::schedulePlots);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &ProfileView::schedulePlots);
    connect(m_plotTimer, &QTimer::timeout, this, [this] {
        m_plots->setRows(m_proxy->visibleRows(), m_proxy->visibleSourceRows());
        updateNoiseBanner();
    });
    // A click on a roofline point selects its row in the table.
    connect(m_plots, &PlotsView::rowClicked, this, [this](int sourceRow) {
        if (sourceRow < 0 || sourceRow >= m_model->rowCount())
            return;
        const QModelIndex at = m_proxy->mapFromSource(m_model->index(sourceRow, 0));
        if (!at.isValid())
            return;
        m_table->selectRow(at.row());
        m_table->scrollTo(at);
    });

    connect(m_run, &QPushButton::clicked, this, [this] { run(); });
    connect(m_cancel, &QPushButton::clicked, this, &ProfileView::cancel);
    connect(m_controller, &ProfileController::contextArrived, this, [this](const RunContext& c) {
        m_context = c;
        m_plots->setContext(m_context);
        m_contextView->setHtml(contextHtml(c));
        for (const auto& w : c.warnings)
            appendLog(tr("warning: %1").arg(qs(w)));
    });
    connect(m_controller, &ProfileController::planArrived, this, [this](int total) {
        m_progress->setRange(0, std::max(total, 1));
        appendLog(tr("%1 rows planned").arg(total));
    });
    connect(m_controller, &ProfileController::preparing, this, [this](const QString& step) {
        m_progress->setFormat(step);
        m_eta->setToolTip(tr("Measuring the ceilings every row is judged against, before the "
                             "first row: %1")
                              .arg(step));
    });
    connect(m_controller, &ProfileController::rowStarted, this,
            [this](int index, const QString& label) {
                m_eta->setToolTip(tr("running row %1: %2").arg(index + 1).arg(label));
            });
    connect(m_controller, &ProfileController::rowFinished, this, [this](const ProfileRow& row) {
        m_model->addRow(row);
        logRow(row);
    });
    connect(m_controller, &ProfileController::progressChanged, this,
            [this](int done, int total, double eta) {
                m_progress->setRange(0, std::max(total, 1));
                m_progress->setValue(done);
                m_progress->setFormat(tr("%1 / %2 rows").arg(done).arg(total));
                m_eta->setText(etaText(eta));
            });
    connect(m_controller, &ProfileController::logLine, this, &ProfileView::appendLog);
    connect(m_controller, &ProfileController::finished, this,
            [this](const Report& report, bool cancelled) {
                if (!m_context) {
                    m_context = report.context;
                    m_plots->setContext(m_context);
                    m_contextView->setHtml(contextHtml(*m_context));
                }
                int bad = 0;
                for (const auto& r : report.rows)
                    bad += r.status != RowStatus::Ok;
                m_model->setDispatch(report.dispatch);
                for (const auto& f : report.dispatch)
                    if (f.regret())
                        appendLog(tr("dispatch: %1").arg(qs(f.message())));
                appendLog(cancelled
                              ? tr("Cancelled: %1 rows kept.").arg(m_model->rowCount())
                              : tr("Done: %1 rows, %2 not ok.").arg(report.rows.size()).arg(bad));
                if (!cancelled) {
                    // A sliced run's progress follows its slices: full once it is done.
                    m_progress->setValue(m_progress->maximum());
                    m_progress->setFormat(
                        tr("%1 / %2 rows").arg(report.rows.size()).arg(report.rows.size()));
                    m_eta->setText(tr("done"));
                } else
                    m_eta->setText(tr("cancelled"));
                setRunning(false);
                emit runFinished(cancelled);
            });
    connect(m_controller, &ProfileController::failed, this, [this](const QString& error) {
        appendLog(tr("error: %1").arg(error));
        m_progress->setFormat(tr("failed — see the log"));
        m_eta->setText(error.left(120));
        m_bottom->setCurrentWidget(m_log);
        setRunning(m_controller->isRunning());
        if (!m_controller->isRunning())
            emit runFinished(true);
    });
    setRunning(false);
}

ProfileView::~ProfileView() = default;

QWidget* ProfileView::buildRunPanel() {
    auto* panel = new QWidget;
    identify(panel, "runPanel", tr("Run settings"));
    identify(m_ops, "opList", tr("Ops"), tr("The ops to profile; none checked: every op"));
    identify(m_devices, "deviceList", tr("Devices"),
             tr("The devices to profile on; none checked: every device"));
    identify(m_variants, "variantBox", tr("Variants"),
             tr("The resolved cell only, or every available variant (dispatch regret)"));
    identify(m_sizeMode, "sizeModeBox", tr("Sizes"), tr("The default sweep or a custom list"));
    identify(m_sizes, "sizesEdit", tr("Custom sizes"),
             tr("Comma- or space-separated sizes; OP:SIZE applies to one op only."));
    identify(m_cold, "coldCacheBox", tr("Cold cache"), tr("Evicts the caches before each sample"));
    identify(m_budget, "budgetBox", tr("Budget per row"), tr("Sampling time per row"));
    identify(m_referenceBudget, "referenceBudget", tr("Reference budget"));
    identify(m_noise, "noiseBox", tr("Noise target"),
             tr("Stop a row early once its relative noise is under this"));
    identify(m_timeout, "timeoutBox", tr("Row timeout"),
             tr("A row silent this long is killed and marked timed out"));
    identify(m_repeat, "repeat", tr("Runs per row"));
    identify(m_slices, "slicesBox", tr("Slices per row"),
             tr("Each row's budget is spent in at least this many slices spread over the run, "
                "pass after pass (the same total budget), so every row carries its variation "
                "between slices; 1: one stretch a row"));
    identify(m_run, "runButton", tr("Run"), tr("Starts a profile run with these settings"));
    identify(m_cancel, "cancelButton", tr("Cancel"),
             tr("Stops the run; the rows measured so far stay"));
    identify(m_progress, "runProgress", tr("Progress"));
    identify(m_eta, "runEta", tr("Time left"));
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(4, 4, 4, 4);
    for (const auto& op : switchyard::ops())
        addCheckable(m_ops, qs(op.name), qs(op.name));
    m_ops->setMaximumHeight(90);
    m_devices->setMaximumHeight(70);
    for (auto* list : {m_ops, m_devices}) {
        list->setTextElideMode(Qt::ElideRight);
        list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    }
    m_eta->setWordWrap(true);
    auto* what = new QGroupBox(tr("What to run"));
    auto* wf = new QFormLayout(what);
    wf->addRow(tr("&Ops"), m_ops);
    wf->addRow(tr("&Devices"), m_devices);
    m_variants->addItem(tr("Resolved cell only"), false);
    m_variants->addItem(tr("All available variants"), true);
    wf->addRow(tr("V&ariants"), m_variants);
    m_sizeMode->addItem(tr("Default sweep"));
    m_sizeMode->addItem(tr("Custom list"));
    m_sizes->setPlaceholderText(tr("1048576, 4096x4096, gemm:512x512x512"));
    m_sizes->setEnabled(false);
    connect(m_sizeMode, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_sizes->setEnabled(i == 1); });
    connect(m_sizes, &QLineEdit::textChanged, this, [this](const QString& t) {
        if (!t.isEmpty())
            m_sizeMode->setCurrentIndex(1);
    });
    wf->addRow(tr("Si&zes"), m_sizeMode);
    wf->addRow(QString(), m_sizes);
    auto* how = new QGroupBox(tr("How"));
    auto* hf = new QFormLayout(how);
    const ProfileSettings defaults;
    m_budget->setRange(0.001, 600);
    m_budget->setDecimals(3);
    m_budget->setSuffix(tr(" s"));
    m_budget->setValue(defaults.time_budget_s);
    m_referenceBudget->setRange(0, 60);
    m_referenceBudget->setDecimals(3);
    m_referenceBudget->setSuffix(tr(" s"));
    m_referenceBudget->setValue(defaults.reference_budget_s);
    m_referenceBudget->setToolTip(
        tr("Sampling time of the CPU reference of each op and size, which every row's speedup "
           "(×ref) is measured against. 0: only “all variants” runs time it."));
    m_noise->setRange(0, 100);
    m_noise->setDecimals(2);
    m_noise->setSuffix(tr(" %"));
    m_noise->setValue(defaults.max_noise * 100);
    m_timeout->setRange(0.1, 3600);
    m_timeout->setSuffix(tr(" s"));
    m_timeout->setValue(defaults.row_timeout_s);
    hf->addRow(tr("&Budget per row"), m_budget);
    hf->addRow(tr("Reference budget"), m_referenceBudget);
    hf->addRow(tr("&Noise target"), m_noise);
    m_repeat->setRange(1, int(ProfileSettings::kMaxRepeat));
    m_repeat->setValue(int(defaults.repeat));
    m_repeat->setToolTip(
        tr("Independent runs of every row, pass after pass over the plan. Comparing reports "
           "rests on the variation between runs: use 3 or more for reports you will compare."));
    hf->addRow(tr("Row &timeout"), m_timeout);
    m_slices->setRange(1, int(ProfileSettings::kMaxRepeat));
    m_slices->setValue(int(defaults.slices));
    // Runs and slices on one line: the window's first size still fits a 1366x768 screen.
    auto* runs = new QHBoxLayout;
    runs->addWidget(m_repeat, 1);
    auto* slicesLabel = new QLabel(tr("s&lices"));
    slicesLabel->setBuddy(m_slices);
    runs->addWidget(slicesLabel);
    runs->addWidget(m_slices, 1);
    auto* runsLabel = new QLabel(tr("R&uns per row"));
    runsLabel->setBuddy(m_repeat);
    hf->addRow(runsLabel, runs);
    hf->addRow(m_cold);
    auto* buttons = new QHBoxLayout;
    m_run->setDefault(true);
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("no run"));
    m_progress->setValue(0);
    layout->addWidget(what);
    layout->addWidget(how);
    layout->addLayout(buttons);
    layout->addWidget(m_progress);
    layout->addWidget(m_eta);
    layout->addStretch(1);
    return panel;
}

void ProfileView::setDevices(const std::vector<DeviceInfo>& devices) {
    const QStringList checked = checkedItems(m_devices);
    m_devices->clear();
    for (const auto& d : devices) {
        addCheckable(m_devices, qs(d.id), QStringLiteral("%1 — %2").arg(qs(d.id), qs(d.name)));
        m_devices->item(m_devices->count() - 1)->setToolTip(qs(d.name));
        if (checked.contains(qs(d.id)))
            m_devices->item(m_devices->count() - 1)->setCheckState(Qt::Checked);
    }
}

void ProfileView::setChoices(const QStringList& ops, const QStringList& devices, bool allVariants) {
    for (int i = 0; i < m_ops->count(); ++i)
        m_ops->item(i)->setCheckState(ops.contains(m_ops->item(i)->data(Qt::UserRole).toString())
                                          ? Qt::Checked
                                          : Qt::Unchecked);
    for (const auto& d : devices)
        if (m_devices->findItems(d, Qt::MatchStartsWith).isEmpty())
            addCheckable(m_devices, d, d);
    for (int i = 0; i < m_devices->count(); ++i) {
        const QString id = m_devices->item(i)->data(Qt::UserRole).toString();
        const QString kind = id.section(QLatin1Char(':'), 0, 0);
        m_devices->item(i)->setCheckState(
            devices.contains(id) || devices.contains(kind) ? Qt::Checked : Qt::Unchecked);
    }
    m_variants->setCurrentIndex(allVariants ? 1 : 0);
}

void ProfileView::setSizes(const QString& sizes) {
    m_sizes->setText(sizes);
}

void ProfileView::setBudget(double seconds) {
    m_budget->setValue(seconds);
}

void ProfileView::showPane(Pane pane) {
    m_bottom->setCurrentIndex(int(pane));
}

QString ProfileView::noiseBanner() const {
    return m_noiseBanner->isHidden() ? QString() : m_noiseBanner->text();
}

void ProfileView::updateNoiseBanner() {
    // The target the shown rows were held to: the run's (or the report's) settings.
    double target = m_noise->value() / 100.0;
    if (m_context)
        target = m_context->settings.max_noise;
    const auto verdict = noise_verdict(m_model->rows(), target);
    m_noiseBanner->setText(qs(verdict.message()));
    m_noiseBanner->setVisible(verdict.noisy_machine());
}

ProfileSettings ProfileView::settings() const {
    ProfileSettings s;
    for (const auto& op : checkedItems(m_ops))
        s.ops.push_back(op.toStdString());
    for (const auto& d : checkedItems(m_devices))
        s.devices.push_back(d.toStdString());
    s.all_variants = m_variants->currentData().toBool();
    s.cold = m_cold->isChecked();
    s.time_budget_s = m_budget->value();
    s.reference_budget_s = m_referenceBudget->value();
    s.max_noise = m_noise->value() / 100.0;
    s.row_timeout_s = m_timeout->value();
    s.repeat = m_repeat->value();
    s.slices = m_slices->value();
    s.use_tuning = m_followTuning;
    if (m_sizeMode->currentIndex() == 1) {
        const auto tokens = m_sizes->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")),
                                                  Qt::SkipEmptyParts);
        if (tokens.isEmpty())
            throw std::invalid_argument(
                "Sizes: the custom list is empty; enter sizes such as 1048576 or 512x512x512, "
                "or choose the default sweep");
        // The core's grammar, as --sizes reads it: a typo or a size too large is named here.
        std::vector<std::string> list;
        for (const auto& t : tokens)
            list.push_back(t.toStdString());
        try {
            s.sizes = parse_size_tokens(list, s.ops);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("Sizes: " + std::string(e.what()));
        }
    }
    return s;
}

bool ProfileView::run(const std::function<void(ProfileSettings&)>& adjust) {
    if (m_controller->isRunning())
        return false;
    ProfileSettings s;
    try {
        s = settings();
        if (adjust)
            adjust(s);
    } catch (const std::exception& e) {
        appendLog(tr("error: %1").arg(qs(e.what())));
        m_bottom->setCurrentWidget(m_log);
        return false;
    }
    m_model->clear();
    m_context.reset();
    m_plots->setContext(m_context);
    m_contextView->clear();
    m_origin->setText(tr("Live run"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setFormat(tr("planning…"));
    m_eta->setText(etaText(-1));
    if (!m_controller->start(s))
        return false;
    setRunning(true);
    emit reportChanged();
    return true;
}

void ProfileView::cancel() {
    m_controller->cancel();
}

bool ProfileView::isRunning() const {
    return m_controller->isRunning();
}

void ProfileView::setRunning(bool running) {
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
}

void ProfileView::setReport(const Report& report, const QString& origin) {
    m_model->setRows(report.rows);
    m_model->setDispatch(report.dispatch);
    m_context = report.context;
    m_plots->setContext(m_context);
    m_contextView->setHtml(contextHtml(report.context));
    m_origin->setText(tr("%1 — measured on %2").arg(origin, machineName(report.context)));
    m_progress->setRange(0, std::max<int>(1, int(report.rows.size())));
    m_progress->setValue(int(report.rows.size()));
    m_progress->setFormat(tr("%1 rows (report)").arg(report.rows.size()));
    m_eta->clear();
    for (const auto& r : report.rows)
        logRow(r);
    emit reportChanged();
}

Report ProfileView::report() const {
    Report r;
    if (m_context)
        r.context = *m_context;
    r.rows = m_model->rows();
    r.annotate();
    return r;
}

bool ProfileView::hasRows() const {
    return m_model->rowCount() > 0;
}

QString ProfileView::exportCsv(const QString& path) const {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text))
        return tr("Cannot write %1: %2").arg(path, f.errorString());
    f.write(modelToCsv(m_proxy).toUtf8());
    if (!f.commit())
        return tr("Cannot write %1: %2").arg(path, f.errorString());
    return {};
}

void ProfileView::appendLog(const QString& line) {
    m_log->appendPlainText(line);
}

void ProfileView::logRow(const ProfileRow& r) {
    const QString label = qs(r.spec.label() + " [" + r.spec.backend + "]");
    if (r.status != RowStatus::Ok)
        appendLog(
            tr("%1: %2%3")
                .arg(label, rowStatusText(r),
                     r.reason.empty() ? QString() : QStringLiteral(": ") + qs(r.reason).left(300)));
    for (const auto& w : r.warnings)
        appendLog(tr("warning: %1: %2").arg(label, qs(w)));
    if (memory_busy(r))
        appendLog(tr("note: %1: %2").arg(label, qs(memory_text(r))));
}

void ProfileView::schedulePlots() {
    if (!m_plotTimer->isActive())
        m_plotTimer->start();
}

} // namespace switchyard::ui
