// SPDX-License-Identifier: MIT
#include "views/plotsview.h"

#include "models/qtstring.h"
#include "models/resultsmodel.h"
#include "views/rooflinepoints.h"
#include "views/viewsupport.h"

#include <switchyard/profiling/profiler.h>

#include <qcustomplot.h>

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QToolTip>
#include <QVBoxLayout>
#ifdef SWITCHYARD_HAVE_QT_SVG
#include <QSvgGenerator>
#endif

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace switchyard::ui {

namespace {

QColor seriesColor(int i) {
    static const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                    QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                                    QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                    QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f),
                                    QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf)};
    return colors[std::size_t(i) % (sizeof(colors) / sizeof(colors[0]))];
}

// A roof's colour by its level: muted, so the rows' colours (by op) stand out.
QColor roofColor(const RooflineCeiling& c) {
    if (c.isCompute())
        return QColor(0x60, 0x60, 0x60);
    static const std::map<QString, QColor> byLevel = {
        {QStringLiteral("L1"), QColor(0x3a, 0x8a, 0x5a)},
        {QStringLiteral("L2"), QColor(0x3a, 0x6e, 0xa5)},
        {QStringLiteral("L3"), QColor(0x7a, 0x5a, 0xa5)},
        {QStringLiteral("DRAM"), QColor(0xa5, 0x45, 0x45)},
        {QStringLiteral("HBM"), QColor(0xa5, 0x45, 0x45)},
        {QStringLiteral("device"), QColor(0x8a, 0x6a, 0x3a)}};
    const auto it = byLevel.find(c.level);
    return it == byLevel.end() ? QColor(0x80, 0x60, 0x40) : it->second;
}

// The roofline's levels, innermost first: the key a roof is "best of".
QString levelKey(const RooflineCeiling& c) {
    return c.isCompute() ? QStringLiteral("compute") : c.level;
}

// A bandwidth level past the caches (DRAM, HBM, a device's memory): where the profiler's
// ridge between memory- and compute-bound lies.
bool isMemoryLevel(const QString& level) {
    return !(level.size() == 2 && level.startsWith(QLatin1Char('L')));
}

void setLogAxis(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("eb")); // 10ⁿ
    axis->setNumberPrecision(0);
}

QString variantKey(const ProfileRow& r) {
    return QStringLiteral("%1 %2 %3/%4")
        .arg(qs(r.spec.op), qs(r.spec.device), qs(r.spec.arch), qs(r.spec.variant));
}

void styleAxes(QCustomPlot* p) {
    const QPalette pal = p->palette();
    const QColor fg = pal.color(QPalette::WindowText);
    p->setBackground(pal.brush(QPalette::Base));
    for (auto* axis : {p->xAxis, p->yAxis}) {
        axis->setBasePen(QPen(fg));
        axis->setTickPen(QPen(fg));
        axis->setSubTickPen(QPen(fg));
        axis->setTickLabelColor(fg);
        axis->setLabelColor(fg);
        axis->grid()->setSubGridVisible(true);
    }
    p->legend->setBrush(QColor(pal.color(QPalette::Base).red(), pal.color(QPalette::Base).green(),
                               pal.color(QPalette::Base).blue(), 225));
    p->legend->setTextColor(fg);
    p->legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    QFont small = p->font();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
    p->legend->setFont(small);
}

void showAxes(QCustomPlot* p, bool on) {
    for (auto* axis : {p->xAxis, p->yAxis}) {
        axis->setVisible(on);
        axis->grid()->setVisible(on);
    }
}

} // namespace

PlotsView::PlotsView(QWidget* parent)
    : QWidget(parent), m_tabs(new QTabWidget), m_allCeilings(new QCheckBox(tr("&All ceilings"))),
      m_export(new QPushButton(tr("E&xport…"))) {
    identify(m_tabs, "plots.tabs", tr("Plots"));
    identify(m_allCeilings, "plots.allCeilings", tr("All ceilings"),
             tr("Draws every ceiling of every device on the roofline, not only the best roof "
                "of each level for the shown rows' thread counts"));
    identify(m_export, "plots.export", tr("Export plot"),
             tr("Saves the current plot as PNG, PDF or SVG, with its labels"));
    static const char* const ids[PlotCount] = {"plots.time", "plots.speedup", "plots.roofline"};
    static const char* const emptyIds[PlotCount] = {"plots.time.empty", "plots.speedup.empty",
                                                    "plots.roofline.empty"};
    const QString names[PlotCount] = {tr("Time vs size"), tr("Speedup vs CPU reference"),
                                      tr("Roofline")};
    for (int i = 0; i < PlotCount; ++i) {
        auto* p = m_plots[i] = new QCustomPlot;
        identify(p, ids[i], names[i]);
        p->setMinimumSize(320, 220);
        p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        styleAxes(p);
        // The empty state: a centred message over the plot (whose axes are then hidden),
        // laid out by the plot's own layout so it stays centred at any size.
        m_empty[i] = new QLabel;
        identify(m_empty[i], emptyIds[i], tr("%1: nothing to draw").arg(names[i]));
        m_empty[i]->setAlignment(Qt::AlignCenter);
        m_empty[i]->setWordWrap(true);
        m_empty[i]->setForegroundRole(QPalette::PlaceholderText);
        m_empty[i]->setContentsMargins(24, 24, 24, 24);
        m_empty[i]->setAttribute(Qt::WA_TransparentForMouseEvents);
        auto* overlay = new QVBoxLayout(p);
        overlay->addWidget(m_empty[i]);
        m_tabs->addTab(p, names[i]);
    }
    // Legends inside the axis rect: a legend in a cell of the plot's layout grid takes its
    // minimum width from the longest entry and squeezed the axes of a narrow plot to a strip.
    m_plots[TimePlot]->axisRect()->insetLayout()->setInsetAlignment(0,
                                                                    Qt::AlignTop | Qt::AlignLeft);
    m_plots[SpeedupPlot]->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop |
                                                                              Qt::AlignLeft);
    // The roofline's top left (above every roof) is the one region no row can reach.
    m_plots[RooflinePlot]->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop |
                                                                               Qt::AlignLeft);
    auto* corner = new QWidget;
    auto* cl = new QHBoxLayout(corner);
    cl->setContentsMargins(4, 0, 4, 2);
    cl->addWidget(m_allCeilings);
    cl->addWidget(m_export);
    m_tabs->setCornerWidget(corner, Qt::TopRightCorner);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);

    connect(m_tabs, &QTabWidget::currentChanged, this,
            [this](int i) { m_allCeilings->setEnabled(i == RooflinePlot); });
    m_allCeilings->setEnabled(false);
    connect(m_allCeilings, &QCheckBox::toggled, this, [this] { drawRoofline(); });
    connect(m_export, &QPushButton::clicked, this, &PlotsView::exportCurrentPlot);

    auto* roof = m_plots[RooflinePlot];
    roof->setMouseTracking(true);
    connect(roof, &QCustomPlot::afterLayout, this, &PlotsView::placeRoofLabels);
    connect(roof, &QCustomPlot::mouseMove, this, [this, roof](QMouseEvent* e) {
        const QString tip = rooflineToolTipAt(e->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(roof->mapToGlobal(e->pos()), tip, roof);
    });
    connect(roof, &QCustomPlot::mousePress, this,
            [this](QMouseEvent* e) { m_pressedAt = e->pos(); });
    connect(roof, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if (!m_points || (e->pos() - m_pressedAt).manhattanLength() > 3)
            return; // a drag, not a click
        const int i = m_points->pointAt(e->pos());
        if (i >= 0)
            emit rowClicked(m_points->points()[std::size_t(i)].row);
    });
    redraw();
}

QString PlotsView::plotName(Plot which) {
    switch (which) {
    case TimePlot:
        return QStringLiteral("time");
    case SpeedupPlot:
        return QStringLiteral("speedup");
    case RooflinePlot:
        return QStringLiteral("roofline");
    default:
        return {};
    }
}

PlotsView::Plot PlotsView::currentPlot() const {
    return Plot(std::clamp(m_tabs->currentIndex(), 0, PlotCount - 1));
}

void PlotsView::setCurrentPlot(Plot which) {
    m_tabs->setCurrentIndex(which);
}

void PlotsView::replot() {
    for (auto* p : m_plots)
        p->replot();
}

void PlotsView::setRows(const std::vector<const ProfileRow*>& rows, const std::vector<int>& ids) {
    m_rows.clear();
    m_rows.reserve(rows.size());
    for (const auto* r : rows)
        m_rows.push_back(*r);
    m_ids = ids;
    for (std::size_t i = m_ids.size(); i < m_rows.size(); ++i)
        m_ids.push_back(int(i));
    redraw();
}

void PlotsView::setContext(const std::optional<RunContext>& context) {
    m_context = context;
    m_ceilings = context ? ceilingsOf(*context) : std::vector<RooflineCeiling>();
    redraw();
}

void PlotsView::redraw() {
    drawTime();
    drawSpeedup();
    drawRoofline();
}

void PlotsView::setEmptyMessage(Plot which, const QString& message) {
    auto* p = m_plots[which];
    showAxes(p, message.isEmpty());
    m_empty[which]->setText(message);
    m_empty[which]->setVisible(!message.isEmpty());
    if (!message.isEmpty())
        p->legend->setVisible(false);
}

void PlotsView::drawTime() {
    auto* p = m_plots[TimePlot];
    p->clearPlottables();
    p->clearItems();
    setLogAxis(p->xAxis);
    setLogAxis(p->yAxis);
    p->xAxis->setLabel(tr("problem size (bytes moved per launch)"));
    p->yAxis->setLabel(tr("median time per launch (s)"));
    std::map<QString, std::vector<std::pair<double, double>>> series;
    for (const auto& r : m_rows)
        if (r.measured() && r.stats.median > 0 && r.bytes > 0)
            series[variantKey(r)].emplace_back(r.bytes, r.stats.median);
    static const QCPScatterStyle::ScatterShape shapes[] = {
        QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle,
        QCPScatterStyle::ssDiamond, QCPScatterStyle::ssCross};
    std::map<QString, int> opShape;
    int i = 0;
    for (auto& [name, pts] : series) {
        const QString op = name.section(QLatin1Char(' '), 0, 0);
        const int shape = opShape.emplace(op, int(opShape.size())).first->second % 5;
        std::sort(pts.begin(), pts.end());
        QVector<double> x, y;
        for (const auto& [a, b] : pts)
            x << a, y << b;
        auto* g = p->addGraph();
        g->setName(name);
        g->setData(x, y, true);
        const QColor c = seriesColor(i++);
        g->setPen(QPen(c, 1.6));
        g->setScatterStyle(QCPScatterStyle(shapes[shape], c, c, 6));
    }
    if (series.empty()) {
        p->xAxis->setRange(1e3, 1e9);
        p->yAxis->setRange(1e-6, 1);
        setEmptyMessage(TimePlot, m_rows.empty()
                                      ? tr("No rows yet: run a profile (Ctrl+R) or open a report.")
                                      : tr("None of the shown rows was measured."));
    } else {
        setEmptyMessage(TimePlot, {});
        p->legend->setVisible(true);
        p->rescaleAxes();
        p->xAxis->setRange(p->xAxis->range().lower / 2, p->xAxis->range().upper * 2);
        // The legend in up to three columns across the top, and room above the data for it.
        const int columns = series.size() <= 4 ? 1 : series.size() <= 10 ? 2 : 3;
        const int rows = (int(series.size()) + columns - 1) / columns;
        p->legend->setWrap(columns);
        p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
        const double decades = std::log10(p->yAxis->range().upper / p->yAxis->range().lower) + 0.6;
        // The legend's rows take about 6 % of the height each: leave that much above.
        const double share = std::min(0.6, 0.06 * rows + 0.04);
        p->yAxis->setRange(p->yAxis->range().lower / 2,
                           p->yAxis->range().upper * 2 *
                               std::pow(10.0, decades * share / (1 - share)));
    }
    p->replot(QCustomPlot::rpQueuedReplot);
}

void PlotsView::drawSpeedup() {
    auto* p = m_plots[SpeedupPlot];
    p->clearPlottables();
    p->clearItems();
    setLogAxis(p->yAxis);
    p->yAxis->setNumberFormat(QStringLiteral("g"));
    p->yAxis->setNumberPrecision(6);
    p->yAxis->setLabel(tr("speedup over the CPU reference (×, log)"));
    p->xAxis->setLabel(QString());
    p->xAxis->setScaleType(QCPAxis::stLinear);
    // A row's speedup is the one it carries (the run timed the reference once per op and
    // size); an older report's is computed from the shown reference row of its op and size.
    std::map<std::pair<std::string, std::string>, double> referenceMedian, elements;
    for (const auto& r : m_rows)
        if (r.spec.is_reference() && r.measured() && r.stats.median > 0)
            referenceMedian[{r.spec.op, r.spec.size}] = r.stats.median;
    std::map<QString, std::map<std::pair<std::string, std::string>, double>> series;
    for (const auto& r : m_rows) {
        if (!r.measured() || r.spec.is_reference())
            continue;
        double s = r.reference_speedup;
        if (!(s > 0) && r.stats.median > 0)
            if (const auto it = referenceMedian.find({r.spec.op, r.spec.size});
                it != referenceMedian.end())
                s = it->second / r.stats.median;
        if (!(s > 0))
            continue;
        series[QStringLiteral("%1 %2/%3")
                   .arg(qs(r.spec.device), qs(r.spec.arch), qs(r.spec.variant))]
              [{r.spec.op, r.spec.size}] = s;
        elements[{r.spec.op, r.spec.size}] = rowElements(r);
    }
    // Categories: by op, then by size (as numbers).
    std::vector<std::pair<std::string, std::string>> categories;
    for (const auto& [k, v] : elements)
        categories.push_back(k);
    std::sort(categories.begin(), categories.end(), [&](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : elements[a] < elements[b];
    });
    std::map<std::pair<std::string, std::string>, int> position;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t i = 0; i < categories.size(); ++i) {
        position[categories[i]] = int(i) + 1;
        ticker->addTick(double(i + 1), QStringLiteral("%1\n%2").arg(qs(categories[i].first),
                                                                    qs(categories[i].second)));
    }
    p->xAxis->setTicker(ticker);
    p->xAxis->setSubTicks(false);
    p->xAxis->grid()->setVisible(false);
    qDeleteAll(p->findChildren<QCPBarsGroup*>()); // the last redraw's (its bars are gone)
    auto* group = new QCPBarsGroup(p);
    group->setSpacingType(QCPBarsGroup::stAbsolute);
    group->setSpacing(1);
    const double width = series.empty() ? 0.8 : 0.8 / double(series.size());
    int i = 0;
    double lo = 1, hi = 1;
    for (const auto& [name, values] : series) {
        auto* bars = new QCPBars(p->xAxis, p->yAxis);
        bars->setName(name);
        QVector<double> keys, vals;
        for (const auto& [category, v] : values) {
            keys << position[category], vals << v;
            lo = std::min(lo, v), hi = std::max(hi, v);
        }
        bars->setData(keys, vals);
        // The bar's height is the speedup itself: on the log axis a base of 0 starts the
        // bars below the axis rect (a base of 1 would draw 1 + speedup).
        bars->setBaseValue(0);
        bars->setWidth(width);
        const QColor c = seriesColor(i++);
        bars->setPen(QPen(c.darker(130)));
        bars->setBrush(c);
        bars->setBarsGroup(group);
        // Each bar's value on top of it, as the table's ×ref column reads (a bar below the
        // reference line grows from the axis too: its label says it is slower).
        const double offset = (double(i - 1) - double(series.size() - 1) / 2) * width;
        for (int k = 0; k < keys.size(); ++k) {
            auto* text = new QCPItemText(p);
            text->setObjectName(QStringLiteral("barLabel"));
            text->position->setCoords(keys[k] + offset, vals[k]);
            text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            text->setText(speedupText(vals[k]));
            text->setColor(c.darker(150));
            text->setClipToAxisRect(true);
        }
    }
    p->xAxis->setRange(0.4, double(categories.size()) + 0.6);
    p->yAxis->setRange(lo / 2, hi * std::pow(2.5, 1 + double(series.size()) / 3));
    const QColor fg = p->palette().color(QPalette::WindowText);
    auto* one = new QCPItemStraightLine(p);
    one->point1->setCoords(0, 1);
    one->point2->setCoords(1, 1);
    one->setPen(QPen(fg, 1.2, Qt::DashLine));
    auto* oneLabel = new QCPItemText(p);
    oneLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    oneLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    oneLabel->position->setCoords(0.995, 1);
    oneLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    oneLabel->setText(tr("CPU reference 1×"));
    oneLabel->setColor(fg);
    if (series.empty())
        setEmptyMessage(SpeedupPlot,
                        m_rows.empty()
                            ? tr("No rows yet: run a profile (Ctrl+R) or open a report.")
                            : tr("No speedups to draw: the shown rows carry none and no CPU "
                                 "reference row of their op and size is shown (the run set "
                                 "the reference budget to 0, or the filter hides it)."));
    else {
        setEmptyMessage(SpeedupPlot, {});
        p->legend->setVisible(true);
    }
    p->replot(QCustomPlot::rpQueuedReplot);
}

int PlotsView::rowThreads(const ProfileRow& row) const {
    // The thread count of the ceiling the row was judged against; -1: not judged.
    for (const auto& c : m_ceilings)
        if (c.device == qs(row.spec.device) && c.id == qs(row.ceiling_id))
            return c.threads;
    return -1;
}

void PlotsView::chooseRoofs() {
    m_drawn.clear();
    if (m_allCeilings->isChecked()) {
        m_drawn = m_ceilings;
        return;
    }
    // The devices and thread counts of the shown rows (none shown: every device, all threads).
    std::map<QString, std::set<int>> threads;
    for (const auto& r : m_rows) {
        if (!r.measured())
            continue;
        auto& t = threads[qs(r.spec.device)];
        if (const int n = rowThreads(r); n >= 0)
            t.insert(n);
    }
    std::set<QString> devices;
    for (const auto& c : m_ceilings)
        if (threads.empty() || threads.count(c.device))
            devices.insert(c.device);
    // Also the roofs the shown rows are judged against where those are not the level's
    // best (a copy-like row at DRAM: the copy under the triad), so each row's "of
    // ceiling" has its roof on the plot. A CPU OpenCL device's rows name the host's
    // ceilings ("cpu:dram.copy.all").
    std::set<std::pair<QString, QString>> judged;
    for (const auto& r : m_rows) {
        if (!r.measured() || r.ceiling_id.empty())
            continue;
        const QString id = qs(r.ceiling_id);
        if (id.startsWith(QLatin1String("cpu:")))
            judged.emplace(QStringLiteral("cpu"), id.mid(4));
        else
            judged.emplace(qs(r.spec.device), id);
    }
    for (const auto& device : devices) {
        std::set<int> want = threads[device];
        if (want.empty())
            want.insert(0);
        // (level, threads) -> the best roof
        std::map<std::pair<QString, int>, const RooflineCeiling*> best;
        for (const auto& c : m_ceilings) {
            if (c.device != device || !want.count(c.threads) || !(c.value > 0))
                continue;
            auto& b = best[{levelKey(c), c.threads}];
            if (!b || preferred_ceiling(c.source, b->source))
                b = &c;
        }
        if (best.empty()) // the rows' thread counts have no ceilings here: every level's best
            for (const auto& c : m_ceilings)
                if (c.device == device && c.value > 0) {
                    auto& b = best[{levelKey(c), 0}];
                    if (!b || preferred_ceiling(c.source, b->source))
                        b = &c;
                }
        for (const auto& c : m_ceilings) { // in the context's order
            bool drawn = judged.count({c.device, c.id}) > 0;
            for (const auto& [k, b] : best)
                drawn = drawn || b == &c;
            if (drawn && c.device == device)
                m_drawn.push_back(c);
        }
    }
}

void PlotsView::drawRoofline() {
    auto* p = m_plots[RooflinePlot];
    p->clearPlottables();
    p->clearItems();
    m_roofLabels.clear();
    m_points = nullptr;
    setLogAxis(p->xAxis);
    setLogAxis(p->yAxis);
    p->xAxis->setNumberFormat(QStringLiteral("g"));
    p->xAxis->setNumberPrecision(6);
    p->xAxis->setLabel(tr("arithmetic intensity (FLOP/byte)"));
    p->yAxis->setLabel(tr("achieved GFLOP/s"));
    chooseRoofs();

    // The rows: coloured by op, shaped by device, sized by their share of the shown time.
    static const QCPScatterStyle::ScatterShape shapes[] = {
        QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle,
        QCPScatterStyle::ssDiamond, QCPScatterStyle::ssTriangleInverted};
    std::map<QString, int> opIndex, deviceIndex;
    double totalTime = 0, maxTime = 0;
    std::vector<std::size_t> drawable;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        const auto& r = m_rows[i];
        if (!r.measured() || rowIntensity(r) <= 0 || r.gflops <= 0)
            continue;
        drawable.push_back(i);
        opIndex.emplace(qs(r.spec.op), 0);
        deviceIndex.emplace(qs(r.spec.device), 0);
        totalTime += r.stats.median;
        maxTime = std::max(maxTime, r.stats.median);
    }
    int n = 0;
    for (auto& [op, index] : opIndex)
        index = n++;
    n = 0;
    for (auto& [device, index] : deviceIndex)
        index = n++;
    std::vector<RooflinePoints::Point> points;
    double xlo = std::numeric_limits<double>::max(), xhi = 0;
    double ylo = xlo, yhi = 0;
    for (const std::size_t i : drawable) {
        const auto& r = m_rows[i];
        const double share = totalTime > 0 ? r.stats.median / totalTime : 0;
        RooflinePoints::Point pt;
        pt.x = rowIntensity(r);
        pt.y = r.gflops;
        // Area in proportion to the time: 6 px across for the quickest, 26 for the slowest.
        pt.size = 6 + 20 * std::sqrt(maxTime > 0 ? r.stats.median / maxTime : 0);
        pt.color = seriesColor(opIndex[qs(r.spec.op)]);
        pt.shape = shapes[std::size_t(deviceIndex[qs(r.spec.device)]) % std::size(shapes)];
        pt.row = m_ids[i];
        pt.toolTip =
            rowSummary(r) + QLatin1Char('\n') +
            tr("%1% of the shown rows' time").arg(share * 100, 0, 'f', share < 0.1 ? 1 : 0);
        points.push_back(pt);
        xlo = std::min(xlo, pt.x), xhi = std::max(xhi, pt.x);
        ylo = std::min(ylo, pt.y), yhi = std::max(yhi, pt.y);
    }

    // Per device: the highest compute roof and bandwidth roof drawn, and the memory's.
    struct Top {
        double compute = 0, bandwidth = 0, memory = 0;
    };
    std::map<QString, Top> top;
    for (const auto& c : m_drawn) {
        auto& t = top[c.device];
        if (c.isCompute())
            t.compute = std::max(t.compute, c.value);
        else {
            t.bandwidth = std::max(t.bandwidth, c.value);
            if (isMemoryLevel(c.level))
                t.memory = std::max(t.memory, c.value);
        }
    }
    for (auto& [device, t] : top)
        if (!(t.memory > 0))
            t.memory = t.bandwidth;
    double computeMax = 0, bandwidthMin = std::numeric_limits<double>::max();
    for (const auto& c : m_drawn) {
        const auto& t = top[c.device];
        if (c.isCompute()) {
            computeMax = std::max(computeMax, c.value);
            ylo = std::min(ylo, c.value / 1e3);
            if (t.memory > 0)
                xhi = std::max(xhi, c.value / t.memory);
        } else {
            bandwidthMin = std::min(bandwidthMin, c.value);
        }
    }
    const bool empty = points.empty() && m_drawn.empty();
    if (xhi <= 0)
        xlo = 0.01, xhi = 100;
    xlo = std::min(xlo, 0.05) / 3;
    xhi = std::max(xhi * 6, xlo * 1000);
    yhi = std::max(yhi, computeMax);
    if (yhi <= 0)
        ylo = 0.1, yhi = 1000;
    if (bandwidthMin < std::numeric_limits<double>::max())
        ylo = std::min(ylo, bandwidthMin * xlo * 3);
    ylo = std::max(ylo / 3, yhi * 1e-6);
    yhi *= 4; // room above the top roof for its label and the legend

    // The zones, shaded under the roof: memory-bound left of the ridge of the top compute
    // roof with the memory's bandwidth (where the profiler starts judging rows against the
    // compute ceiling), compute-bound right of it.
    // One device's zones (the one with the most rows shown; two devices' overlapping shades
    // read as a third zone).
    std::map<QString, int> pointsPerDevice;
    for (const std::size_t i : drawable)
        ++pointsPerDevice[qs(m_rows[i].spec.device)];
    QString zoneDevice;
    for (const auto& [device, t] : top)
        if (t.compute > 0 && t.bandwidth > 0 &&
            (zoneDevice.isEmpty() || pointsPerDevice[device] > pointsPerDevice[zoneDevice]))
            zoneDevice = device;
    if (!zoneDevice.isEmpty()) {
        const Top& t = top[zoneDevice];
        const double ridge = t.compute / t.memory, bend = t.compute / t.bandwidth;
        auto zone = [&](QVector<double> x, QVector<double> y, QColor color, const QString& name) {
            auto* g = p->addGraph();
            g->setName(name);
            g->setData(x, y, true);
            g->setPen(Qt::NoPen);
            color.setAlpha(28);
            g->setBrush(color);
            g->removeFromLegend();
        };
        QVector<double> mx{xlo}, my{t.bandwidth * xlo};
        if (bend < ridge)
            mx << bend, my << t.compute;
        mx << ridge, my << std::min(t.bandwidth * ridge, t.compute);
        zone(mx, my, QColor(0x3a, 0x6e, 0xa5), tr("memory-bound"));
        zone({ridge, xhi}, {t.compute, t.compute}, QColor(0xe0, 0x80, 0x20), tr("compute-bound"));
        const std::pair<double, QString> names[] = {{std::sqrt(xlo * ridge), tr("memory-bound")},
                                                    {std::sqrt(ridge * xhi), tr("compute-bound")}};
        for (const auto& [x, text] : names) {
            auto* label = new QCPItemText(p);
            label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            label->position->setCoords(x, 0.985);
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            label->setText(text);
            label->setColor(p->palette().color(QPalette::PlaceholderText));
        }
    }

    // The roofs: each a line (dashed for one thread, dotted when theoretical), labelled on
    // itself, no legend entry.
    std::set<QString> drawnDevices;
    std::map<QString, std::set<int>> drawnThreads;
    for (const auto& c : m_drawn) {
        drawnDevices.insert(c.device);
        drawnThreads[c.device].insert(c.threads);
    }
    QFont labelFont = p->font();
    labelFont.setPointSizeF(std::max(7.0, labelFont.pointSizeF() - 1));
    QColor labelBack = p->palette().color(QPalette::Base);
    labelBack.setAlpha(215);
    for (const auto& c : m_drawn) {
        const auto& t = top[c.device];
        RoofLabel label;
        label.value = c.value;
        label.compute = c.isCompute();
        QVector<double> x, y;
        if (label.compute) {
            label.x0 = t.bandwidth > 0 ? std::max(c.value / t.bandwidth, xlo) : xlo;
            label.x1 = xhi;
            x << label.x0 << label.x1;
            y << c.value << c.value;
        } else {
            label.x0 = xlo;
            label.x1 = t.compute > 0 ? std::min(t.compute / c.value, xhi) : xhi;
            x << label.x0 << label.x1;
            y << c.value * label.x0 << c.value * label.x1;
        }
        auto* g = p->addGraph();
        g->setName(c.label());
        g->setData(x, y, true);
        QPen pen(roofColor(c), 1.6);
        if (!c.measured)
            pen.setStyle(Qt::DotLine);
        else if (c.threads == 1)
            pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->removeFromLegend();
        QString text = c.roofLabel();
        if (drawnDevices.size() > 1)
            text = c.device + QLatin1Char(' ') + text;
        if (c.threads == 1 && drawnThreads[c.device].size() > 1)
            text += tr(", 1 thread");
        label.item = new QCPItemText(p);
        label.item->setObjectName(QStringLiteral("roofLabel"));
        label.item->setProperty("device", c.device);
        label.item->setProperty("level", levelKey(c));
        label.item->setProperty("ceiling", c.id);
        label.item->setProperty("threads", c.threads);
        label.item->setText(text);
        label.item->setFont(labelFont);
        label.item->setColor(roofColor(c).darker(125));
        label.item->setBrush(labelBack);
        label.item->setPadding(QMargins(3, 1, 3, 1));
        label.item->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        label.item->setClipToAxisRect(true);
        label.item->position->setCoords(label.x1, label.compute ? c.value : c.value * label.x1);
        m_roofLabels.push_back(label);
    }
    // Compute roofs are placed first, then the bandwidth roofs from the highest: when two
    // close roofs' labels cannot both fit, the lower one's is the one dropped.
    std::stable_sort(m_roofLabels.begin(), m_roofLabels.end(),
                     [](const RoofLabel& a, const RoofLabel& b) {
                         if (a.compute != b.compute)
                             return a.compute;
                         return a.value > b.value;
                     });

    // The points over the roofs, with a legend of what their colours and shapes mean.
    m_points = new RooflinePoints(p->xAxis, p->yAxis);
    m_points->setObjectName(QStringLiteral("roofPoints"));
    m_points->setName(tr("rows"));
    m_points->removeFromLegend();
    m_points->setPoints(std::move(points));
    const QColor legendShape = p->palette().color(QPalette::WindowText);
    for (const auto& [op, index] : opIndex) {
        auto* g = p->addGraph();
        g->setName(op);
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, seriesColor(index), 8));
    }
    if (deviceIndex.size() > 1)
        for (const auto& [device, index] : deviceIndex) {
            auto* g = p->addGraph();
            g->setName(device);
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(shapes[std::size_t(index) % std::size(shapes)],
                                               legendShape, Qt::transparent, 8));
        }
    p->xAxis->setRange(xlo, xhi);
    p->yAxis->setRange(ylo, yhi);
    if (empty)
        setEmptyMessage(RooflinePlot,
                        !m_context && m_rows.empty()
                            ? tr("No rows yet: run a profile (Ctrl+R) or open a report.")
                            : tr("No rows with FLOPs and no ceilings to draw."));
    else {
        setEmptyMessage(RooflinePlot, {});
        p->legend->setVisible(!opIndex.empty());
    }
    p->replot(QCustomPlot::rpQueuedReplot);
}

void PlotsView::placeRoofLabels() {
    auto* p = m_plots[RooflinePlot];
    const QRectF area = QRectF(p->axisRect()->rect()).adjusted(2, 2, -2, -2);
    const QCPRange xr = p->xAxis->range(), yr = p->yAxis->range();
    std::vector<QPolygonF> taken;
    // The legend's box is taken too (it sits in the top left, above the roofs).
    if (p->legend->visible())
        taken.push_back(QPolygonF(QRectF(p->legend->outerRect())));
    // The points too, so no label hides behind them (up to a few hundred: past that the
    // labels take what room is left).
    std::vector<QRectF> points;
    if (m_points && m_points->points().size() <= 400)
        for (int i = 0; i < int(m_points->points().size()); ++i) {
            const double d = m_points->points()[std::size_t(i)].size;
            points.emplace_back(m_points->pixelOf(i) - QPointF(d / 2, d / 2), QSizeF(d, d));
        }
    for (auto& l : m_roofLabels) {
        l.item->setVisible(false);
        // The part of the line inside the axis rect.
        double xa = std::max(l.x0, xr.lower), xb = std::min(l.x1, xr.upper);
        if (l.compute) {
            if (l.value < yr.lower || l.value > yr.upper)
                continue;
        } else {
            xa = std::max(xa, yr.lower / l.value);
            xb = std::min(xb, yr.upper / l.value);
        }
        if (!(xa < xb))
            continue;
        auto pixel = [&](double x) {
            return QPointF(p->xAxis->coordToPixel(x),
                           p->yAxis->coordToPixel(l.compute ? l.value : l.value * x));
        };
        const QPointF a = pixel(xa), b = pixel(xb);
        const double length = std::hypot(b.x() - a.x(), b.y() - a.y());
        const double angle = std::atan2(b.y() - a.y(), b.x() - a.x()) * 180 / M_PI;
        const QFontMetricsF fm(l.item->font());
        const QMargins pad = l.item->padding();
        const double w = fm.horizontalAdvance(l.item->text()) + pad.left() + pad.right() + 2;
        const double h = fm.height() + pad.top() + pad.bottom();
        if (length < w + 8)
            continue;
        // Candidates along the line, staggered until the label overlaps no label already
        // placed: a bandwidth roof's from a quarter short of its ridge leftwards (at the
        // ridge the roofs crowd under the compute roof), then the ridge; a compute roof's
        // from its right end.
        static const int bandwidthOrder[] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2, 1, 0};
        for (int k = 0; k < 13; ++k) {
            const int step = l.compute ? k : bandwidthOrder[k];
            const double along = length - 6 - (length - w - 12) * step / 12.0;
            const QPointF at = a + (b - a) * (along / length);
            QTransform t;
            t.translate(at.x(), at.y());
            t.rotate(angle);
            const QPolygonF box = t.map(QPolygonF(QRectF(-w, -h - 1, w, h)));
            if (!area.contains(box.boundingRect()))
                continue;
            if (std::any_of(taken.begin(), taken.end(),
                            [&](const QPolygonF& o) { return o.intersects(box); }))
                continue;
            const QRectF bounds = box.boundingRect();
            if (std::any_of(points.begin(), points.end(), [&](const QRectF& r) {
                    return bounds.intersects(r) && box.intersects(QPolygonF(r));
                }))
                continue;
            l.item->position->setPixelPosition(at);
            l.item->setRotation(angle);
            l.item->setVisible(true);
            taken.push_back(box);
            break;
        }
    }
}

QString PlotsView::rooflineToolTipAt(const QPoint& pos) const {
    if (!m_points)
        return {};
    const int i = m_points->pointAt(pos);
    return i < 0 ? QString() : m_points->points()[std::size_t(i)].toolTip;
}

bool PlotsView::canExportSvg() {
#ifdef SWITCHYARD_HAVE_QT_SVG
    return true;
#else
    return false;
#endif
}

bool PlotsView::exportPlot(Plot which, const QString& path, int width, int height) const {
    auto* p = m_plots[which];
    const QString suffix = QFileInfo(path).suffix().toLower();
    // An empty plot's message is a label over the widget: the picture gets it as an item.
    QCPItemText* message = nullptr;
    if (!m_empty[which]->isHidden()) {
        message = new QCPItemText(p);
        message->position->setType(QCPItemPosition::ptViewportRatio);
        message->position->setCoords(0.5, 0.5);
        message->setText(m_empty[which]->text());
        message->setColor(p->palette().color(QPalette::PlaceholderText));
    }
    bool ok = false;
    if (suffix == QLatin1String("pdf")) {
        ok = p->savePdf(path, width, height);
    } else if (suffix == QLatin1String("svg")) {
#ifdef SWITCHYARD_HAVE_QT_SVG
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(QSize(width, height));
        svg.setViewBox(QRect(0, 0, width, height));
        svg.setTitle(m_tabs->tabText(which));
        QCPPainter painter;
        if (painter.begin(&svg)) {
            p->toPainter(&painter, width, height);
            ok = painter.end() && QFileInfo(path).size() > 0;
        }
#endif
    } else {
        ok = p->savePng(path, width, height);
    }
    if (message)
        p->removeItem(message);
    // The export laid the plot out at its own size: lay it out again at the widget's.
    p->replot(QCustomPlot::rpQueuedReplot);
    return ok;
}

void PlotsView::exportCurrentPlot() {
    const Plot which = currentPlot();
    QString filters = tr("PNG image (*.png);;PDF document (*.pdf)");
    if (canExportSvg())
        filters += tr(";;SVG image (*.svg)");
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export plot"), plotName(which) + QStringLiteral(".png"), filters);
    if (!path.isEmpty() && !exportPlot(which, path))
        emit exportFailed(tr("Could not write the plot to %1").arg(path));
}

} // namespace switchyard::ui
