// SPDX-License-Identifier: MIT
#include "views/compareview.h"

#include "views/abview.h"

#include "models/comparemodel.h"
#include "models/qtstring.h"
#include "models/resultscontext.h"
#include "models/tone.h"
#include "views/viewsupport.h"

#include <switchyard/tuning/calibration.h>

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTabWidget>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

QTableView* makeTable(QSortFilterProxyModel* proxy) {
    auto* t = new QTableView;
    t->setModel(proxy);
    t->setSortingEnabled(true);
    t->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(22);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setWordWrap(false);
    return t;
}

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), m_pair(new CompareModel(this)), m_multi(new MultiCompareModel(this)),
      m_pairProxy(new QSortFilterProxyModel(this)), m_multiProxy(new QSortFilterProxyModel(this)),
      m_pairTable(nullptr), m_multiTable(nullptr), m_summary(new QLabel), m_rule(new QLabel),
      m_warning(makeBanner(Tone::Warning)), m_tabs(new QTabWidget), m_ab(new AbView) {
    identify(this, "compareView", tr("Compare reports"));
    identify(m_summary, "compareSummary", tr("Compared reports"));
    identify(m_rule, "compareRule", tr("Verdict rule"),
             tr("How verdicts are made, how often the rule was wrong on identical code on this "
                "machine (compare --calibrate), and what more runs would settle"));
    identify(m_warning, "compareWarning", tr("Ceiling differences"));
    identify(m_tabs, "compareTabs", tr("Comparison tables"));
    m_pairProxy->setSourceModel(m_pair);
    m_pairProxy->setSortRole(CompareModel::SortRole);
    m_multiProxy->setSourceModel(m_multi);
    m_multiProxy->setSortRole(MultiCompareModel::SortRole);
    m_pairTable = makeTable(m_pairProxy);
    m_multiTable = makeTable(m_multiProxy);
    identify(m_pairTable, "comparePairTable", tr("A vs B"),
             tr("The first two reports row by row: verdict, ratio B/A, p-value"));
    identify(m_multiTable, "compareAllTable", tr("All reports"),
             tr("Every report as a column, each against the first report that has the row"));
    const int widths[] = {110, 110, 70, 80, 150, 90, 90, 80, 80, 100};
    for (int c = 0; c < CompareModel::ColumnCount; ++c)
        m_pairTable->setColumnWidth(c, widths[c]);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    m_summary->setText(tr("Open two or more reports to compare them (File ▸ Compare reports…, or "
                          "drop the files on the window)."));
    m_rule->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_rule->setWordWrap(true);
    m_rule->hide();
    m_tabs->addTab(m_pairTable, tr("A vs B"));
    m_tabs->addTab(m_multiTable, tr("All reports"));
    m_tabs->addTab(m_ab, tr("A/B in one run"));
    auto* legend =
        new QLabel(tr("<span style='background:%1'>&nbsp;FASTER&nbsp;</span> "
                      "<span style='background:%2'>&nbsp;SLOWER&nbsp;</span> "
                      "<span style='background:%3'>&nbsp;AMBIGUOUS&nbsp;</span> "
                      "&nbsp;SAME uncoloured · MACHINE: identical code, the difference is the "
                      "machine's · ratio = B/A (under 1: B is faster)")
                       .arg(toneColor(Tone::Good, true).name(), toneColor(Tone::Bad, true).name(),
                            toneColor(Tone::Warning, true).name()));
    legend->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_rule);
    layout->addWidget(m_warning);
    layout->addWidget(legend);
    layout->addWidget(m_tabs, 1);
}

void CompareView::showPane(Pane pane) {
    m_tabs->setCurrentIndex(int(pane));
}

void CompareView::showRule(const Report& baseline) {
    const auto& comparison = m_pair->comparison();
    QString rule = tr("Verdict rule: %1.").arg(qs(comparison.options().describe()).toHtmlEscaped());
    if (const auto c = find_calibration(baseline.context.fingerprint.machine_id))
        rule += "<br>" + qs(c->beside_the_rule()).toHtmlEscaped() + ".";
    else
        rule += tr("<br>Not calibrated on this machine: <code>switchyard-cli compare --calibrate "
                   "--runs 3</code> measures how often the rule calls identical code "
                   "different here.");
    if (const auto advice = comparison.advice().text(); !advice.empty())
        rule += "<br>" + qs(advice).toHtmlEscaped() + ".";
    m_rule->setText(rule);
    m_rule->show();
}

void CompareView::setReports(const std::vector<Report>& reports, const QStringList& names) {
    if (reports.size() < 2)
        return;
    // The baseline machine's calibration, where one is kept, is part of the rule (as in the
    // CLI's compare).
    CompareOptions options;
    if (const auto c = find_calibration(reports[0].context.fingerprint.machine_id))
        c->apply_to(options);
    m_pair->setReports(reports[0], reports[1], options);
    m_multi->setReports(reports, names, options);
    m_multiTable->resizeColumnsToContents();
    std::map<QString, int> counts;
    for (int r = 0; r < m_pair->rowCount(); ++r)
        ++counts[m_pair->verdictAt(r)];
    QStringList parts;
    for (const auto& [v, n] : counts)
        parts << QStringLiteral("%1 %2").arg(n).arg(v);
    QString summary =
        tr("<b>A</b> = %1 (%2)<br><b>B</b> = %3 (%4)<br>%5 paired rows: %6")
            .arg(names.value(0).toHtmlEscaped(), machineName(reports[0].context).toHtmlEscaped(),
                 names.value(1).toHtmlEscaped(), machineName(reports[1].context).toHtmlEscaped())
            .arg(m_pair->pairCount())
            .arg(parts.join(QStringLiteral(", ")));
    if (reports.size() > 2)
        summary += tr("<br>%1 reports in “All reports”; each column against the first report "
                      "that has the row.")
                       .arg(reports.size());
    m_summary->setText(summary);
    showRule(reports.front());
    QStringList diffs;
    for (std::size_t i = 1; i < reports.size(); ++i)
        for (const auto& d : ceiling_differences(reports[0].context, reports[i].context))
            diffs << (reports.size() > 2 ? QStringLiteral("%1: %2").arg(names.value(int(i)), qs(d))
                                         : qs(d));
    if (diffs.isEmpty()) {
        m_warning->hide();
    } else {
        const int shown = std::min<int>(int(diffs.size()), 6);
        m_warning->setText(
            tr("⚠ The machines' ceilings differ, so times are not comparable as-is: %1%2")
                .arg(diffs.mid(0, shown).join(QStringLiteral("; ")))
                .arg(diffs.size() > shown ? tr(" (and %1 more)").arg(diffs.size() - shown)
                                          : QString()));
        m_warning->show();
    }
}

} // namespace switchyard::ui
