// SPDX-License-Identifier: MIT
#include "views/rooflinepoints.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace switchyard::ui {

namespace {

bool inDomain(double v, QCP::SignDomain domain) {
    return domain == QCP::sdBoth || (domain == QCP::sdPositive && v > 0) ||
           (domain == QCP::sdNegative && v < 0);
}

} // namespace

RooflinePoints::RooflinePoints(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : QCPAbstractPlottable(keyAxis, valueAxis) {
    setSelectable(QCP::stNone);
}

void RooflinePoints::setPoints(std::vector<Point> points) {
    std::stable_sort(points.begin(), points.end(),
                     [](const Point& a, const Point& b) { return a.size > b.size; });
    m_points = std::move(points);
}

QPointF RooflinePoints::pixelOf(int i) const {
    const auto& p = m_points[std::size_t(i)];
    return coordsToPixels(p.x, p.y);
}

int RooflinePoints::pointAt(const QPointF& pixel, double tolerance) const {
    int best = -1;
    double bestDistance = std::numeric_limits<double>::max();
    // Later points are drawn on top (the smaller ones): they win ties.
    for (int i = int(m_points.size()) - 1; i >= 0; --i) {
        const QPointF d = pixelOf(i) - pixel;
        const double distance = std::hypot(d.x(), d.y());
        const double reach = m_points[std::size_t(i)].size / 2 + tolerance;
        if (distance <= reach && distance < bestDistance) {
            best = i;
            bestDistance = distance;
        }
    }
    return best;
}

double RooflinePoints::selectTest(const QPointF& pos, bool onlySelectable,
                                  QVariant* details) const {
    Q_UNUSED(details)
    if (onlySelectable && !selectable())
        return -1;
    const int i = pointAt(pos);
    if (i < 0)
        return -1;
    const QPointF d = pixelOf(i) - pos;
    return std::hypot(d.x(), d.y());
}

QCPRange RooflinePoints::getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain) const {
    QCPRange range(std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest());
    foundRange = false;
    for (const auto& p : m_points)
        if (inDomain(p.x, inSignDomain)) {
            range.lower = std::min(range.lower, p.x);
            range.upper = std::max(range.upper, p.x);
            foundRange = true;
        }
    return foundRange ? range : QCPRange();
}

QCPRange RooflinePoints::getValueRange(bool& foundRange, QCP::SignDomain inSignDomain,
                                       const QCPRange& inKeyRange) const {
    const bool anyKey = inKeyRange == QCPRange();
    QCPRange range(std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest());
    foundRange = false;
    for (const auto& p : m_points)
        if (inDomain(p.y, inSignDomain) && (anyKey || inKeyRange.contains(p.x))) {
            range.lower = std::min(range.lower, p.y);
            range.upper = std::max(range.upper, p.y);
            foundRange = true;
        }
    return foundRange ? range : QCPRange();
}

void RooflinePoints::draw(QCPPainter* painter) {
    for (int i = 0; i < int(m_points.size()); ++i) {
        const auto& p = m_points[std::size_t(i)];
        const QPointF at = pixelOf(i);
        if (!std::isfinite(at.x()) || !std::isfinite(at.y()))
            continue;
        QColor fill = p.color;
        fill.setAlpha(200);
        const QCPScatterStyle style(p.shape, p.color.darker(140), fill, p.size);
        style.applyTo(painter, QPen(p.color.darker(140), 1.2));
        style.drawShape(painter, at);
    }
}

void RooflinePoints::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    Q_UNUSED(painter)
    Q_UNUSED(rect) // not in the legend: the ops' and devices' entries say what a point means
}

} // namespace switchyard::ui
