// SPDX-License-Identifier: MIT
#include "views/abview.h"

#include "controllers/abruncontroller.h"
#include "models/abmodel.h"
#include "models/qtstring.h"
#include "views/viewsupport.h"

#include <switchyard/report/paired.h>
#include <switchyard/worker/abcontroller.h>

#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

std::vector<std::string> listOf(const QString& text) {
    std::vector<std::string> out;
    for (const auto& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty())
            out.push_back(part.trimmed().toStdString());
    return out;
}

} // namespace

AbView::AbView(QWidget* parent)
    : QWidget(parent), m_model(new AbModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_a(new QLineEdit), m_b(new QLineEdit), m_ops(new QLineEdit), m_sizes(new QLineEdit),
      m_cells(new QLineEdit), m_devices(new QLineEdit(QStringLiteral("cpu"))),
      m_budget(new QDoubleSpinBox), m_pairs(new QSpinBox), m_run(new QPushButton(tr("Run A/B"))),
      m_progress(new QProgressBar), m_status(new QLabel), m_table(new QTableView) {
    identify(this, "abView", tr("A/B in one run"));
    identify(m_a, "abSideA", tr("Side A's plugin folder"));
    identify(m_b, "abSideB", tr("Side B's plugin folder"));
    identify(m_ops, "abOps", tr("Ops"), tr("Comma-separated; empty: every op"));
    identify(m_sizes, "abSizes", tr("Sizes"), tr("As profile --sizes; empty: each op's sweep"));
    identify(m_cells, "abCells", tr("Cells"),
             tr("As profile --cells (arch/variant or variant); empty: the resolved cells"));
    identify(m_devices, "abDevices", tr("Devices"));
    identify(m_budget, "abBudget", tr("Budget per row and side, seconds"));
    identify(m_pairs, "abPairs", tr("Pairs of turns per row"));
    identify(m_run, "abRunButton", tr("Run A/B"));
    identify(m_progress, "abProgress", tr("A/B progress"));
    identify(m_status, "abStatus", tr("A/B status"));
    identify(m_table, "abTable", tr("A/B verdicts"),
             tr("Each row's paired verdict: the median of B/A over pairs of turns measured "
                "next to each other"));
    m_budget->setRange(0.01, 3600);
    m_budget->setDecimals(2);
    m_budget->setValue(ProfileSettings{}.time_budget_s);
    m_pairs->setRange(int(PairedComparison::kMinPairs), 1000);
    m_pairs->setValue(int(AbController::kDefaultPairs));
    m_a->setPlaceholderText(tr("the default plugins"));
    m_b->setPlaceholderText(tr("the default plugins"));
    auto side = [this](QLineEdit* field, const char* id) {
        auto* row = new QHBoxLayout;
        auto* pick = new QPushButton(tr("Browse…"));
        identify(pick, id, tr("Choose a plugin folder"));
        connect(pick, &QPushButton::clicked, this, [this, field] { browse(field); });
        row->addWidget(field, 1);
        row->addWidget(pick);
        return row;
    };
    auto* form = new QFormLayout;
    form->addRow(tr("&A (baseline)"), side(m_a, "abBrowseA"));
    form->addRow(tr("&B"), side(m_b, "abBrowseB"));
    form->addRow(tr("&Ops"), m_ops);
    form->addRow(tr("&Sizes"), m_sizes);
    form->addRow(tr("&Cells"), m_cells);
    form->addRow(tr("&Devices"), m_devices);
    auto* numbers = new QHBoxLayout;
    numbers->addWidget(new QLabel(tr("Budget (s)")));
    numbers->addWidget(m_budget);
    numbers->addWidget(new QLabel(tr("Pairs")));
    numbers->addWidget(m_pairs);
    numbers->addStretch(1);
    numbers->addWidget(m_run);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(AbModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setText(tr("Two builds of a plugin, measured in one run: each row in short turns "
                         "that alternate A B B A on the same CPU and the same memory, judged on "
                         "the pairs."));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(numbers);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    connect(m_run, &QPushButton::clicked, this, [this] {
        if (m_controller && m_controller->isRunning())
            m_controller->cancel();
        else
            run();
    });
}

void AbView::setController(AbRunController* controller) {
    m_controller = controller;
    connect(controller, &AbRunController::planArrived, this, [this](int rows) {
        m_rows = rows;
        m_progress->setRange(0, std::max(1, rows * int(m_pairs->value()) * 2));
        m_progress->setValue(0);
    });
    connect(controller, &AbRunController::sliceStarted, this,
            [this](int index, QChar side, int pair, int pairs) {
                m_progress->setValue(index * pairs * 2 + pair * 2 + (side == QLatin1Char('B')));
                m_status->setText(tr("Row %1 of %2, pair %3 of %4: side %5")
                                      .arg(index + 1)
                                      .arg(m_rows)
                                      .arg(pair + 1)
                                      .arg(pairs)
                                      .arg(side));
            });
    connect(controller, &AbRunController::rowFinished, m_model, &AbModel::addRow);
    connect(controller, &AbRunController::finished, this, &AbView::onFinished);
    connect(controller, &AbRunController::failed, this, &AbView::showError);
}

void AbView::setSides(const QString& a, const QString& b) {
    m_a->setText(a);
    m_b->setText(b);
}

void AbView::setSelection(const QString& ops, const QString& sizes, const QString& cells,
                          const QString& devices) {
    m_ops->setText(ops);
    m_sizes->setText(sizes);
    m_cells->setText(cells);
    m_devices->setText(devices);
}

void AbView::setBudget(double seconds) {
    m_budget->setValue(seconds);
}

void AbView::setPairs(int pairs) {
    m_pairs->setValue(pairs);
}

QString AbView::status() const {
    return m_status->text();
}

void AbView::browse(QLineEdit* field) {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Plugin folder"), field->text());
    if (!dir.isEmpty())
        field->setText(dir);
}

void AbView::showError(const QString& error) {
    m_status->setText(tr("The A/B run failed: %1").arg(error));
    m_run->setText(tr("Run A/B"));
}

bool AbView::run() {
    if (!m_controller)
        return false;
    ProfileSettings settings;
    settings.ops = listOf(m_ops->text());
    settings.devices = listOf(m_devices->text());
    settings.cells = listOf(m_cells->text());
    settings.time_budget_s = m_budget->value();
    try {
        // The core's one grammar for sizes, as the Profiler tab and the CLI read them.
        settings.sizes = parse_size_tokens(listOf(m_sizes->text()), settings.ops);
    } catch (const std::exception& e) {
        showError(tr("Sizes: %1").arg(qs(e.what())));
        return false;
    }
    AbSide a, b;
    a.plugin_dir = m_a->text().trimmed().toStdString();
    b.plugin_dir = m_b->text().trimmed().toStdString();
    m_model->clear();
    if (!m_controller->start(settings, a, b, m_pairs->value()))
        return false;
    m_run->setText(tr("Cancel"));
    m_status->setText(tr("Starting a worker for each side…"));
    return true;
}

void AbView::onFinished(const AbReport& report, bool cancelled) {
    m_model->setReport(report);
    m_run->setText(tr("Run A/B"));
    m_progress->setValue(m_progress->maximum());
    m_status->setText(tr("%1%2 same, %3 faster, %4 slower, %5 ambiguous (B against A). %6.")
                          .arg(cancelled ? tr("Cancelled: ") : QString())
                          .arg(report.count(Verdict::Same))
                          .arg(report.count(Verdict::Faster))
                          .arg(report.count(Verdict::Slower))
                          .arg(report.count(Verdict::Ambiguous))
                          .arg(qs(paired_rule(report.options))));
}

} // namespace switchyard::ui
