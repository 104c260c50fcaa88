// SPDX-License-Identifier: MIT
#include "views/fleetview.h"
#include "views/viewsupport.h"

#include "models/comparemodel.h"
#include "models/qtstring.h"
#include "models/regretmapmodel.h"
#include "models/resultscontext.h"
#include "models/tone.h"
#include "views/outlierdelegate.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace switchyard::ui {

namespace {

QString esc(const QString& s) {
    return s.toHtmlEscaped();
}
QString esc(const std::string& s) {
    return qs(s).toHtmlEscaped();
}

QString list(const std::vector<std::string>& items) {
    QString html = QStringLiteral("<ul style='margin-left:-20px'>");
    for (const auto& i : items)
        html += QStringLiteral("<li>%1</li>").arg(esc(i));
    return html + QStringLiteral("</ul>");
}

} // namespace

FleetView::FleetView(QWidget* parent)
    : QWidget(parent), m_model(new MultiCompareModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_table(new QTableView), m_title(new QLabel),
      m_summary(new QLabel), m_baselineBox(new QComboBox),
      m_copy(new QPushButton(tr("Co&py as text"))), m_issues(new QPlainTextEdit),
      m_details(new QTextBrowser), m_pages(new QTabWidget), m_regretModel(new RegretMapModel(this)),
      m_regretProxy(new QSortFilterProxyModel(this)), m_regretTable(new QTableView),
      m_tuningSummary(new QPlainTextEdit), m_tuningDir(new QLineEdit),
      m_writeTunings(new QPushButton(tr("&Write tunings"))),
      m_copyRegret(new QPushButton(tr("Copy regret &map as text"))), m_tuningStatus(new QLabel) {
    identify(this, "fleetView", tr("Fleet"),
             tr("A folder of reports from many machines, one column per machine"));
    identify(m_table, "fleetTable", tr("Fleet comparison"),
             tr("One row per kernel cell and size, one column per machine; the verdict of each "
                "against the baseline"));
    identify(m_title, "fleetTitle", tr("Fleet folder"));
    identify(m_summary, "fleetSummary", tr("Fleet summary"));
    identify(m_baselineBox, "baselineBox", tr("Baseline"),
             tr("The report every other column is judged against"));
    identify(m_copy, "fleetCopy", tr("Copy as text"),
             tr("Copy the comparison as switchyard-cli compare prints it"));
    identify(m_issues, "fleetIssues", tr("Fleet problems"),
             tr("Reports that could not be read and jobs that did not finish"));
    identify(m_details, "fleetDetails", tr("Machine details"));
    identify(m_pages, "fleetPages", tr("Fleet pages"));
    identify(m_regretTable, "regretTable", tr("Regret map"),
             tr("Per machine class, each op, size and device where the chain's pick was slower "
                "than another cell: by how much, and on how many of the class's nodes"));
    identify(m_tuningSummary, "tuningSummary", tr("Tuning per machine class"),
             tr("The entries all nodes of a machine class agree on, and what was dropped"));
    identify(m_tuningDir, "tuningDir", tr("Tuning folder"),
             tr("Where Write tunings puts one MACHINE_ID.tuning file per machine class"));
    identify(m_writeTunings, "tuningWrite", tr("Write tunings"),
             tr("Write one tuning file per machine class (as switchyard-cli fleet collect "
                "--tune does)"));
    identify(m_copyRegret, "regretCopy", tr("Copy regret map as text"),
             tr("Copy the regret map as switchyard-cli fleet collect --regret-map prints it"));
    identify(m_tuningStatus, "tuningStatus", tr("Tuning status"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(MultiCompareModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setItemDelegate(new OutlierDelegate(MultiCompareModel::OutlierRole, m_table));
    m_table->setSortingEnabled(true);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(22);
    m_table->setWordWrap(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setText(tr("Open a folder of reports (File ▸ Open fleet folder…, or drop the folder "
                        "on the window): one column per machine, the verdicts of "
                        "<tt>switchyard-cli compare FOLDER</tt>."));
    m_title->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    m_baselineBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_baselineBox->setEnabled(false);
    m_copy->setEnabled(false);
    m_issues->setReadOnly(true);
    m_issues->setMaximumHeight(90);
    m_issues->hide();
    m_details->setOpenLinks(false);
    m_details->setMinimumWidth(260);

    auto* top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    auto* baselineLabel = new QLabel(tr("&Baseline:"));
    baselineLabel->setBuddy(m_baselineBox);
    top->addWidget(baselineLabel);
    top->addWidget(m_baselineBox);
    top->addWidget(m_copy);
    auto* legend = new QLabel(
        tr("<span style='background:%1'>&nbsp;FASTER&nbsp;</span> "
           "<span style='background:%2'>&nbsp;SLOWER&nbsp;</span> "
           "<span style='background:%3'>&nbsp;AMBIGUOUS&nbsp;</span> "
           "&nbsp;SAME uncoloured · <span style='border:2px solid %4; color:%4'><b>&nbsp;framed, "
           "bold&nbsp;</b></span>: an outlier (far from the other machines) · cell = median "
           "(ratio to the baseline) · hover a cell for q, threshold and runs")
            .arg(toneColor(Tone::Good, true).name(), toneColor(Tone::Bad, true).name(),
                 toneColor(Tone::Warning, true).name(), OutlierDelegate::frameColor().name()));
    legend->setWordWrap(true);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_table);
    split->addWidget(m_details);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({900, 320});
    auto* comparison = new QWidget;
    auto* comparisonLayout = new QVBoxLayout(comparison);
    comparisonLayout->setContentsMargins(0, 0, 0, 0);
    comparisonLayout->addWidget(legend);
    comparisonLayout->addWidget(split, 1);

    // The Tuning page: the tuning per machine class, the folder it goes to, the regret map.
    m_regretProxy->setSourceModel(m_regretModel);
    m_regretProxy->setSortRole(RegretMapModel::SortRole);
    m_regretTable->setModel(m_regretProxy);
    m_regretTable->setSortingEnabled(true);
    m_regretTable->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_regretTable->verticalHeader()->hide();
    m_regretTable->verticalHeader()->setDefaultSectionSize(22);
    m_regretTable->setWordWrap(false);
    m_tuningSummary->setReadOnly(true);
    m_tuningSummary->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_tuningSummary->setPlaceholderText(tr("Open a fleet folder: its reports are grouped by "
                                           "machine class and tuned here."));
    m_writeTunings->setEnabled(false);
    m_copyRegret->setEnabled(false);
    m_tuningStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tuningStatus->setWordWrap(true);
    auto* tuningBar = new QHBoxLayout;
    auto* dirLabel = new QLabel(tr("Tuning &folder:"));
    dirLabel->setBuddy(m_tuningDir);
    tuningBar->addWidget(dirLabel);
    tuningBar->addWidget(m_tuningDir, 1);
    tuningBar->addWidget(m_writeTunings);
    tuningBar->addWidget(m_copyRegret);
    auto* tuningSplit = new QSplitter(Qt::Vertical);
    tuningSplit->addWidget(m_tuningSummary);
    tuningSplit->addWidget(m_regretTable);
    tuningSplit->setStretchFactor(0, 1);
    tuningSplit->setStretchFactor(1, 3);
    tuningSplit->setSizes({140, 600}); // the summary's few lines, the map below
    auto* tuningPage = new QWidget;
    auto* tuningLayout = new QVBoxLayout(tuningPage);
    tuningLayout->setContentsMargins(0, 0, 0, 0);
    tuningLayout->addLayout(tuningBar);
    tuningLayout->addWidget(m_tuningStatus);
    tuningLayout->addWidget(tuningSplit, 1);
    m_pages->addTab(comparison, tr("Comparison"));
    m_pages->addTab(tuningPage, tr("Tuning and regret map"));

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(m_issues);
    layout->addWidget(m_pages, 1);

    connect(m_writeTunings, &QPushButton::clicked, this, &FleetView::writeTunings);
    connect(m_copyRegret, &QPushButton::clicked, this, &FleetView::copyRegretMap);

    connect(m_baselineBox, &QComboBox::activated, this, [this](int i) { setBaseline(i); });
    connect(m_copy, &QPushButton::clicked, this, &FleetView::copyAsText);
    connect(m_table->horizontalHeader(), &QHeaderView::customContextMenuRequested, this,
            &FleetView::showHeaderMenu);
    connect(m_table->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int section) {
        if (const int r = MultiCompareModel::reportOf(section); r >= 0)
            showMachine(r);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                if (const int r = MultiCompareModel::reportOf(current.column()); r >= 0)
                    showMachine(r);
            });
}

void FleetView::setLoading(const QString& folder) {
    m_title->setText(tr("Reading <b>%1</b>…").arg(esc(folder)));
}

void FleetView::setFleet(Fleet& fleet) {
    m_folder = fleet.folder;
    m_seconds = fleet.seconds;
    QStringList issues;
    if (!fleet.error.isEmpty())
        issues << fleet.error;
    int failed = 0;
    for (const auto& i : fleet.issues) {
        failed += i.fatal;
        issues
            << (i.fatal ? tr("%1: cannot read: %2") : tr("%1: warning: %2")).arg(i.file, i.error);
    }
    if (fleet.error.isEmpty() && fleet.reports.size() < 2)
        issues << tr("%1 report(s) could be read: a comparison needs two or more")
                      .arg(fleet.reports.size());
    m_issues->setPlainText(issues.join(QLatin1Char('\n')));
    m_issues->setMaximumHeight(fontMetrics().lineSpacing() *
                                   int(std::min<qsizetype>(issues.size(), 5)) +
                               2 * m_issues->frameWidth() + 10);
    m_issues->setVisible(!issues.isEmpty());
    m_issues->setToolTip(
        failed ? tr("%1 file(s) could not be read; they are not in the table").arg(failed)
               : QString());
    // A fleet's nodes run one build: comparing them judges the machines (the environment),
    // so identical code is FASTER or SLOWER here, not MACHINE.
    CompareOptions options;
    options.judge_environment = true;
    m_model->setReports(std::move(fleet.reports), fleet.hosts, options, 0, fleet.files);
    fleet.reports.clear();
    m_baselineBox->clear();
    for (int r = 0; r < m_model->reportCount(); ++r) {
        m_baselineBox->addItem(m_model->reportName(r));
        m_baselineBox->setItemData(r, m_model->reportFile(r), Qt::ToolTipRole);
    }
    m_baselineBox->setEnabled(m_model->comparison() != nullptr);
    m_copy->setEnabled(m_model->comparison() != nullptr);
    m_title->setText(tr("<b>%1</b> — %2 reports, %3 lines, read in %4 s%5")
                         .arg(esc(m_folder))
                         .arg(m_model->reportCount())
                         .arg(m_model->rowCount())
                         .arg(m_seconds, 0, 'f', 2)
                         .arg(failed ? tr(" · <span style='color:%1'><b>%2 file(s) could not be "
                                          "read</b></span>")
                                           .arg(toneColor(Tone::Bad).name())
                                           .arg(failed)
                                     : QString()));
    m_table->resizeColumnsToContents();
    // The side panel starts on the odd one out: the machine with the most outlier cells
    // (the baseline when there is none).
    int first = m_model->comparison() ? 0 : -1, most = 0;
    if (const MultiComparison* m = m_model->comparison())
        for (int r = 0; r < m_model->reportCount(); ++r) {
            int n = 0;
            for (const auto& line : m->lines())
                n += line.cells[std::size_t(r)].outlier;
            if (n > most)
                most = n, first = r;
        }
    m_shown = -1;
    showMachine(first);
    updateSummary();
    m_tuning = std::move(fleet.tuning);
    m_tuningDir->setText(m_folder + QStringLiteral("/tuning"));
    m_tuningStatus->clear();
    showTuning();
    emit fleetShown();
}

void FleetView::setLoader(FleetLoader* loader) {
    if (m_loader)
        disconnect(m_loader, &FleetLoader::tuningsWritten, this, nullptr);
    m_loader = loader;
    if (m_loader)
        connect(m_loader, &FleetLoader::tuningsWritten, this, &FleetView::onTuningsWritten);
    showTuning();
}

void FleetView::showPage(Page page) {
    m_pages->setCurrentIndex(int(page));
}

void FleetView::showTuning() {
    std::size_t tunable = 0;
    for (const auto& c : m_tuning.classes)
        tunable += c.tunable();
    QString text = qs(m_tuning.summary());
    if (m_tuning.classes.empty() && m_tuning.notes.empty())
        text.clear();
    else if (tunable == 0)
        text += tr("\nNo report has dispatch findings, so there is nothing to tune: profile the "
                   "fleet with every variant (fleet submit ... -- --all-variants --repeat 3).");
    m_tuningSummary->setPlainText(text);
    m_regretModel->setResults(m_tuning.regrets);
    m_regretTable->resizeColumnsToContents();
    m_writeTunings->setEnabled(tunable > 0 && m_loader != nullptr);
    m_copyRegret->setEnabled(!m_tuning.classes.empty());
}

QString FleetView::regretMapText() const {
    return m_tuning.classes.empty() ? QString() : qs(m_tuning.regret_map_text());
}

void FleetView::copyRegretMap() {
    if (const QString text = regretMapText(); !text.isEmpty())
        QApplication::clipboard()->setText(text);
}

void FleetView::writeTunings() {
    const QString folder = m_tuningDir->text().trimmed();
    if (!m_loader || folder.isEmpty()) {
        m_tuningStatus->setText(tr("Name the folder the tunings go to."));
        return;
    }
    m_writeTunings->setEnabled(false);
    m_tuningStatus->setText(tr("Writing the tunings to %1…").arg(folder));
    m_loader->writeTunings(m_tuning, folder);
}

void FleetView::onTuningsWritten(const TuningsWrittenPtr& result) {
    if (!result->error.isEmpty()) {
        m_tuningStatus->setText(tr("<span style='color:%1'><b>Cannot write the tunings:</b> "
                                   "%2</span>")
                                    .arg(toneColor(Tone::Bad).name(), esc(result->error)));
        m_writeTunings->setEnabled(true);
        emit tuningsWritten(false);
        return;
    }
    m_tuning = result->tuning;
    int files = 0;
    for (const auto& c : m_tuning.classes)
        files += !c.file.empty();
    showTuning();
    m_tuningStatus->setText(tr("Wrote %n tuning file(s) to %1; resolve and profile follow them "
                               "where SWITCHYARD_TUNING names the folder (or copy them to "
                               "~/.local/share/switchyard/tuning)",
                               nullptr, files)
                                .arg(esc(result->folder)));
    emit tuningsWritten(true);
}

void FleetView::setBaseline(int report) {
    if (!m_model->comparison() || report < 0 || report >= m_model->reportCount())
        return;
    m_model->setBaseline(report);
    m_baselineBox->setCurrentIndex(m_model->baseline());
    m_table->resizeColumnsToContents();
    const int shown = m_shown;
    m_shown = -1;
    showMachine(shown);
    updateSummary();
    emit fleetShown();
}

void FleetView::updateSummary() {
    const MultiComparison* m = m_model->comparison();
    if (!m) {
        m_summary->clear();
        return;
    }
    int outliers = 0;
    for (const auto& line : m->lines())
        for (const auto& c : line.cells)
            outliers += c.outlier;
    m_summary->setText(
        tr("Verdicts against <b>%1</b>: %2 SAME · <span style='color:%7'>%3 FASTER</span> · "
           "<span style='color:%8'>%4 SLOWER</span> · %5 AMBIGUOUS · %6 outlier cells "
           "— %9%10")
            .arg(esc(m_model->reportName(m_model->baseline())))
            .arg(m->count(Verdict::Same))
            .arg(m->count(Verdict::Faster))
            .arg(m->count(Verdict::Slower))
            .arg(m->count(Verdict::Ambiguous))
            .arg(outliers)
            .arg(toneColor(Tone::Good).name(), toneColor(Tone::Bad).name(),
                 esc(m->options().describe()),
                 m->same_machine() ? tr(" · every report from the same machine") : QString()));
}

void FleetView::showMachine(int report) {
    const MultiComparison* m = m_model->comparison();
    if (report == m_shown)
        return;
    m_shown = report;
    if (!m || report < 0 || report >= m_model->reportCount()) {
        m_details->setHtml(m_model->reportCount() == 1
                               ? contextHtml(m_model->reports().front().context)
                               : QString());
        return;
    }
    const auto& report_ = m_model->reports()[std::size_t(report)];
    const auto& src = m->sources()[std::size_t(report)];
    const int base = int(m->baseline());
    QString html = QStringLiteral("<h3>%1</h3><p><tt>%2</tt></p><table cellspacing='2'>")
                       .arg(esc(m_model->reportName(report)), esc(m_model->reportFile(report)));
    for (const auto& [k, v] : machineFacts(report_.context))
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(esc(k), esc(v));
    html += QStringLiteral("</table>");
    // The column's own verdicts.
    std::size_t counts[kVerdictCount] = {};
    int outliers = 0, missing = 0;
    for (const auto& line : m->lines()) {
        const auto& c = line.cells[std::size_t(report)];
        counts[int(c.result.verdict)] += c.judged;
        outliers += c.outlier;
        missing += c.row == nullptr;
    }
    if (report == base) {
        html += tr("<h4>The baseline</h4><p>Every other column is judged against this one.</p>");
    } else {
        html += tr("<h4>Against the baseline, %1</h4>").arg(esc(m_model->reportName(base)));
        html += tr("<p>%1 SAME · %2 FASTER · %3 SLOWER · %4 AMBIGUOUS · %5 MACHINE</p>")
                    .arg(counts[int(Verdict::Same)])
                    .arg(counts[int(Verdict::Faster)])
                    .arg(counts[int(Verdict::Slower)])
                    .arg(counts[int(Verdict::Ambiguous)])
                    .arg(counts[int(Verdict::Machine)]);
        if (src.same_machine && src.fingerprint_differences.empty())
            html += tr("<p>The same machine, the same software (fingerprints match).</p>");
        else if (src.same_machine)
            html +=
                tr("<p>The same machine, other software:</p>") + list(src.fingerprint_differences);
        else
            html += tr("<p style='color:%1'><b>Not the same machine as the baseline:</b></p>")
                        .arg(toneColor(Tone::Bad).name()) +
                    list(src.fingerprint_differences);
        if (!src.ceiling_differences.empty())
            html += tr("<p><b>Ceilings differ:</b></p>") + list(src.ceiling_differences);
    }
    if (outliers || missing)
        html += tr("<p>%1 outlier cell(s)%2</p>")
                    .arg(outliers)
                    .arg(missing ? tr(", %1 line(s) without a row here").arg(missing) : QString());
    m_details->setHtml(html);
}

QString FleetView::comparisonText() const {
    const MultiComparison* m = m_model->comparison();
    return m ? qs(m->to_text()) : QString();
}

void FleetView::copyAsText() {
    if (const QString text = comparisonText(); !text.isEmpty())
        QApplication::clipboard()->setText(text);
}

void FleetView::showHeaderMenu(const QPoint& pos) {
    const int section = m_table->horizontalHeader()->logicalIndexAt(pos);
    const int report = MultiCompareModel::reportOf(section);
    if (report < 0 || report >= m_model->reportCount())
        return;
    QMenu menu(this);
    auto* base = menu.addAction(tr("Use %1 as the baseline").arg(m_model->reportName(report)), this,
                                [this, report] { setBaseline(report); });
    base->setEnabled(report != m_model->baseline());
    menu.addAction(tr("Show %1's context").arg(m_model->reportName(report)), this,
                   [this, report] { showMachine(report); });
    menu.exec(m_table->horizontalHeader()->mapToGlobal(pos));
}

} // namespace switchyard::ui
