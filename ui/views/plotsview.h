// SPDX-License-Identifier: MIT
#pragma once

#include "models/resultscontext.h"

#include <switchyard/profiling/profilerow.h>

#include <nlohmann/json.hpp>

#include <QPointF>
#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QLabel;
class QTabWidget;

namespace switchyard::ui {

/// The profiler's plots (QCustomPlot), drawn from the rows the results table shows:
/// time against problem size per variant (log-log), the speedup over the CPU reference
/// (grouped bars per op and size) and the roofline (arithmetic intensity against achieved
/// GFLOP/s, every ceiling of every device as a line, each row a point labelled on hover).
class PlotsView : public QWidget {
    Q_OBJECT
public:
    enum Plot { TimePlot, SpeedupPlot, RooflinePlot, PlotCount };

    explicit PlotsView(QWidget* parent = nullptr);

    /// Redraws every plot from `rows` (pointers into the caller's model, used at once).
    void setRows(const std::vector<const ProfileRow*>& rows);
    void setContext(const nlohmann::json& context);

    QCustomPlot* plot(Plot which) const { return m_plots[which]; }
    QTabWidget* tabs() const { return m_tabs; }
    /// A roofline point: where it is drawn and what its tooltip says.
    struct Point {
        double x = 0, y = 0;
        QString label;
    };
    const std::vector<Point>& rooflinePoints() const { return m_points; }
    const std::vector<RooflineCeiling>& ceilings() const { return m_ceilings; }
    /// The label of the roofline point within a few pixels of `pos` (plot coordinates).
    QString rooflineLabelAt(const QPoint& pos) const;
    /// PNG or PDF by the file's suffix; false when it could not be written.
    bool exportPlot(Plot which, const QString& path, int width = 1000, int height = 640) const;
    static QString plotName(Plot which);

private:
    void redraw();
    void drawTime();
    void drawSpeedup();
    void drawRoofline();

    QTabWidget* m_tabs;
    QCustomPlot* m_plots[PlotCount];
    std::vector<ProfileRow> m_rows; // copies: the model may change before a redraw
    nlohmann::json m_context;
    std::vector<RooflineCeiling> m_ceilings;
    std::vector<Point> m_points;
};

} // namespace switchyard::ui
