// SPDX-License-Identifier: MIT
#pragma once

#include <qcustomplot.h>

#include <QColor>
#include <QString>

#include <vector>

namespace switchyard::ui {

/// The roofline's rows as one QCustomPlot plottable: each point with its own colour (the
/// op), shape (the device) and size (its share of the shown rows' time), which a QCPGraph,
/// one scatter style per graph, cannot draw. Finds the point under the mouse for the
/// tooltip and the click.
class RooflinePoints : public QCPAbstractPlottable {
    Q_OBJECT
public:
    struct Point {
        double x = 0, y = 0; // FLOP/byte, GFLOP/s
        double size = 8;     // pixels across
        QColor color;
        QCPScatterStyle::ScatterShape shape = QCPScatterStyle::ssDisc;
        int row = -1;    // what PlotsView::rowClicked says
        QString toolTip; // the row, as the table shows it
    };

    RooflinePoints(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setPoints(std::vector<Point> points);
    const std::vector<Point>& points() const { return m_points; }
    /// The point drawn nearest to `pixel` within its radius plus `tolerance` pixels (the
    /// smallest on top wins a tie), or -1.
    int pointAt(const QPointF& pixel, double tolerance = 3) const;
    /// Where point `i` is drawn, in the plot's pixels.
    QPointF pixelOf(int i) const;

    double selectTest(const QPointF& pos, bool onlySelectable,
                      QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange,
                         QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    std::vector<Point> m_points; // drawn largest first, so small points stay visible
};

} // namespace switchyard::ui
