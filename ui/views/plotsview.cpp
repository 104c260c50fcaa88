// SPDX-License-Identifier: MIT
#include "views/plotsview.h"

#include "models/qtstring.h"
#include "models/resultsmodel.h"

#include <qcustomplot.h>

#include <QFileInfo>
#include <QTabWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

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

void setLogAxis(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("eb")); // 10ⁿ
    axis->setNumberPrecision(0);
}

void showMessage(QCustomPlot* p, const QString& text) {
    auto* item = new QCPItemText(p);
    item->position->setType(QCPItemPosition::ptAxisRectRatio);
    item->position->setCoords(0.5, 0.5);
    item->setText(text);
    item->setColor(p->palette().color(QPalette::PlaceholderText));
}

QString variantKey(const ProfileRow& r) {
    return QStringLiteral("%1 %2 %3/%4")
        .arg(qs(r.spec.op), qs(r.spec.device), qs(r.spec.arch), qs(r.spec.variant));
}

bool isReference(const ProfileRow& r) {
    return r.spec.device == "cpu" && r.spec.variant == "reference";
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
    p->legend->setBrush(pal.brush(QPalette::Base));
    p->legend->setTextColor(fg);
    p->legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    QFont small = p->font();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
    p->legend->setFont(small);
}

} // namespace

PlotsView::PlotsView(QWidget* parent) : QWidget(parent), m_tabs(new QTabWidget) {
    for (int i = 0; i < PlotCount; ++i) {
        m_plots[i] = new QCustomPlot;
        m_plots[i]->setObjectName(plotName(Plot(i)));
        m_plots[i]->setMinimumSize(320, 220);
        m_plots[i]->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        m_plots[i]->legend->setVisible(true);
        styleAxes(m_plots[i]);
    }
    // The time plot's and the roofline's legends go beside the axes: inside, they cover
    // data (the roofline's right side is where compute-bound rows such as gemm sit).
    for (auto* plot : {m_plots[TimePlot], m_plots[RooflinePlot]}) {
        plot->axisRect()->insetLayout()->take(plot->legend);
        plot->plotLayout()->addElement(0, 1, plot->legend);
        plot->plotLayout()->setColumnStretchFactor(1, 0.001);
        plot->legend->setMargins(QMargins(4, 4, 4, 4));
        plot->legend->setLayer(QStringLiteral("legend"));
    }
    m_tabs->addTab(m_plots[TimePlot], tr("Time vs size"));
    m_tabs->addTab(m_plots[SpeedupPlot], tr("Speedup vs CPU reference"));
    m_tabs->addTab(m_plots[RooflinePlot], tr("Roofline"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);
    auto* roof = m_plots[RooflinePlot];
    roof->setMouseTracking(true);
    connect(roof, &QCustomPlot::mouseMove, this, [this, roof](QMouseEvent* e) {
        const QString label = rooflineLabelAt(e->pos());
        if (label.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(roof->mapToGlobal(e->pos()), label, roof);
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

void PlotsView::setRows(const std::vector<const ProfileRow*>& rows) {
    m_rows.clear();
    m_rows.reserve(rows.size());
    for (const auto* r : rows)
        m_rows.push_back(*r);
    redraw();
}

void PlotsView::setContext(const nlohmann::json& context) {
    m_context = context;
    m_ceilings = ceilingsOf(context);
    redraw();
}

void PlotsView::redraw() {
    drawTime();
    drawSpeedup();
    drawRoofline();
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
    p->legend->setVisible(!series.empty());
    if (series.empty()) {
        p->xAxis->setRange(1e3, 1e9);
        p->yAxis->setRange(1e-6, 1);
        showMessage(p, tr("No measured rows to draw."));
    } else {
        p->rescaleAxes();
        p->xAxis->setRange(p->xAxis->range().lower / 2, p->xAxis->range().upper * 2);
        p->yAxis->setRange(p->yAxis->range().lower / 2, p->yAxis->range().upper * 2);
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
    // (op, size) -> the reference's median; categories in op order, then by size.
    std::map<std::pair<std::string, std::string>, double> reference;
    std::map<std::pair<std::string, std::string>, double> order;
    for (const auto& r : m_rows)
        if (r.measured() && r.stats.median > 0 && isReference(r)) {
            reference[{r.spec.op, r.spec.size}] = r.stats.median;
            order[{r.spec.op, r.spec.size}] = rowElements(r);
        }
    std::vector<std::pair<std::string, std::string>> categories;
    for (const auto& [k, v] : reference)
        categories.push_back(k);
    std::sort(categories.begin(), categories.end(), [&](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : order[a] < order[b];
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
    std::map<QString, std::map<int, double>> series; // variant -> category -> speedup
    for (const auto& r : m_rows) {
        if (!r.measured() || r.stats.median <= 0 || isReference(r))
            continue;
        const auto it = position.find({r.spec.op, r.spec.size});
        if (it == position.end())
            continue;
        series[QStringLiteral("%1 %2/%3")
                   .arg(qs(r.spec.device), qs(r.spec.arch), qs(r.spec.variant))][it->second] =
            reference[{r.spec.op, r.spec.size}] / r.stats.median;
    }
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
        for (const auto& [k, v] : values) {
            keys << k, vals << v;
            lo = std::min(lo, v), hi = std::max(hi, v);
        }
        bars->setData(keys, vals, true);
        bars->setBaseValue(1); // bars grow up for faster, down for slower than the reference
        bars->setWidth(width);
        const QColor c = seriesColor(i++);
        bars->setPen(QPen(c.darker(130)));
        bars->setBrush(c);
        bars->setBarsGroup(group);
    }
    p->xAxis->setRange(0.4, double(categories.size()) + 0.6);
    p->yAxis->setRange(lo / 1.6, hi * 1.6);
    auto* one = new QCPItemStraightLine(p);
    one->point1->setCoords(0, 1);
    one->point2->setCoords(1, 1);
    one->setPen(QPen(p->palette().color(QPalette::WindowText), 1, Qt::DashLine));
    p->legend->setVisible(!series.empty());
    if (series.empty())
        showMessage(p, categories.empty()
                           ? tr("No CPU reference rows to compare with: the run set the "
                                "reference budget to 0, or the report is older than the "
                                "reference timing (run it again).")
                           : tr("Only the CPU reference was measured."));
    p->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    p->replot(QCustomPlot::rpQueuedReplot);
}

void PlotsView::drawRoofline() {
    auto* p = m_plots[RooflinePlot];
    p->clearPlottables();
    p->clearItems();
    m_points.clear();
    setLogAxis(p->xAxis);
    setLogAxis(p->yAxis);
    p->xAxis->setNumberFormat(QStringLiteral("g"));
    p->xAxis->setNumberPrecision(6);
    p->xAxis->setLabel(tr("arithmetic intensity (FLOP/byte)"));
    p->yAxis->setLabel(tr("achieved GFLOP/s"));
    std::map<QString, std::vector<Point>> byDevice;
    double xlo = std::numeric_limits<double>::max(), xhi = 0, ylo = xlo, yhi = 0;
    for (const auto& r : m_rows) {
        const double ai = rowIntensity(r);
        if (!r.measured() || ai <= 0 || r.gflops <= 0)
            continue;
        QString label = QStringLiteral("%1 [%2]\nAI %3 FLOP/B · %4 GFLOP/s · %5 GB/s")
                            .arg(qs(r.spec.label()), qs(r.spec.backend))
                            .arg(ai, 0, 'g', 3)
                            .arg(r.gflops, 0, 'g', 3)
                            .arg(r.gbps, 0, 'g', 3);
        if (const QString c = ceilingText(r); !c.isEmpty())
            label += QStringLiteral(" · %1 of %2").arg(c, qs(r.ceiling_id));
        byDevice[qs(r.spec.device + " " + r.spec.op)].push_back({ai, r.gflops, label});
        xlo = std::min(xlo, ai), xhi = std::max(xhi, ai);
        ylo = std::min(ylo, r.gflops), yhi = std::max(yhi, r.gflops);
    }
    // Per device: the highest compute ceiling and bandwidth (where the roof bends).
    std::map<QString, double> maxCompute, maxBandwidth;
    for (const auto& c : m_ceilings) {
        auto& m = c.kind == QLatin1String("compute") ? maxCompute : maxBandwidth;
        m[c.device] = std::max(m[c.device], c.value);
    }
    for (const auto& c : m_ceilings) {
        if (c.kind == QLatin1String("compute")) {
            yhi = std::max(yhi, c.value);
            ylo = std::min(ylo, c.value);
            if (maxBandwidth.count(c.device))
                xhi = std::max(xhi, c.value / maxBandwidth[c.device]);
        } else {
            ylo = std::min(ylo, c.value * 0.05);
        }
    }
    if (xhi <= 0) {
        xlo = 0.01, xhi = 100;
    }
    xlo = std::min(xlo, 0.05) / 2;
    xhi = std::max(xhi * 4, xlo * 100);
    if (yhi <= 0)
        ylo = 0.1, yhi = 1000;
    ylo = std::max(ylo / 4, yhi * 1e-6);
    yhi *= 3;
    int colour = 0;
    for (const auto& c : m_ceilings) {
        QVector<double> x, y;
        if (c.kind == QLatin1String("compute")) {
            const double from =
                maxBandwidth.count(c.device) ? c.value / maxBandwidth[c.device] : xlo;
            x << std::max(from, xlo) << xhi;
            y << c.value << c.value;
        } else {
            const double roof = maxCompute.count(c.device) ? maxCompute[c.device] : 0;
            const double to = roof > 0 ? std::min(roof / c.value, xhi) : xhi;
            x << xlo << to;
            y << c.value * xlo << c.value * to;
        }
        auto* g = p->addGraph();
        g->setName(c.label());
        g->setData(x, y, true);
        QPen pen(seriesColor(colour++), 1.5);
        if (!c.measured)
            pen.setStyle(Qt::DashLine);
        g->setPen(pen);
    }
    int d = 0;
    for (const auto& [device, pts] : byDevice) {
        QVector<double> x, y;
        for (const auto& pt : pts) {
            x << pt.x, y << pt.y;
            m_points.push_back(pt);
        }
        auto* g = p->addGraph();
        g->setName(tr("%1 rows").arg(device));
        g->setData(x, y);
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = seriesColor(int(m_ceilings.size()) + d++);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c.darker(115), c, 7));
    }
    p->xAxis->setRange(xlo, xhi);
    p->yAxis->setRange(ylo, yhi);
    p->legend->setVisible(!m_ceilings.empty() || !byDevice.empty());
    if (m_ceilings.empty() && byDevice.empty())
        showMessage(p, tr("No rows with FLOPs and no ceilings to draw."));
    else if (m_ceilings.empty())
        showMessage(p, tr("The report has no ceilings for its devices."));
    p->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    p->replot(QCustomPlot::rpQueuedReplot);
}

QString PlotsView::rooflineLabelAt(const QPoint& pos) const {
    const auto* p = m_plots[RooflinePlot];
    double best = 8 * 8;
    QString label;
    for (const auto& pt : m_points) {
        const double dx = p->xAxis->coordToPixel(pt.x) - pos.x();
        const double dy = p->yAxis->coordToPixel(pt.y) - pos.y();
        if (dx * dx + dy * dy <= best) {
            best = dx * dx + dy * dy;
            label = pt.label;
        }
    }
    return label;
}

bool PlotsView::exportPlot(Plot which, const QString& path, int width, int height) const {
    auto* p = m_plots[which];
    if (QFileInfo(path).suffix().compare(QLatin1String("pdf"), Qt::CaseInsensitive) == 0)
        return p->savePdf(path, width, height);
    return p->savePng(path, width, height);
}

} // namespace switchyard::ui
