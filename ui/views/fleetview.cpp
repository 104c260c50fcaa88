// SPDX-License-Identifier: MIT
#include "views/fleetview.h"
#include "views/viewsupport.h"

#include "models/comparemodel.h"
#include "models/qtstring.h"
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
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
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
      m_details(new QTextBrowser) {
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
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(m_issues);
    layout->addWidget(legend);
    layout->addWidget(split, 1);

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
    m_model->setReports(std::move(fleet.reports), fleet.hosts, {}, 0, fleet.files);
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
    emit fleetShown();
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
    std::size_t counts[4] = {0, 0, 0, 0};
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
        html += tr("<p>%1 SAME · %2 FASTER · %3 SLOWER · %4 AMBIGUOUS</p>")
                    .arg(counts[int(Verdict::Same)])
                    .arg(counts[int(Verdict::Faster)])
                    .arg(counts[int(Verdict::Slower)])
                    .arg(counts[int(Verdict::Ambiguous)]);
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
