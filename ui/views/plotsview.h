// SPDX-License-Identifier: MIT
#pragma once

#include "models/resultscontext.h"

#include <switchyard/profiling/profilerow.h>

#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

class QCheckBox;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTabWidget;

namespace switchyard::ui {

class RooflinePoints;

/// The profiler's plots (QCustomPlot), drawn from the rows the results table shows:
/// time against problem size per variant (log-log), the speedup over the CPU reference
/// (bars grouped by op and size) and the roofline (arithmetic intensity against achieved
/// GFLOP/s: each roof labelled on its line, by default only the best roof of each level per
/// device for the thread counts of the shown rows, "All ceilings" for every one; the rows
/// as points coloured by op, shaped by device and sized by their share of the time; the
/// memory- and compute-bound zones shaded). A plot with nothing to draw says why instead.
/// Controls (objectNames): plots.tabs, plots.time, plots.speedup, plots.roofline,
/// plots.allCeilings, plots.export; plots.time.empty etc. are the empty-state messages.
class PlotsView : public QWidget {
    Q_OBJECT
public:
    enum Plot { TimePlot, SpeedupPlot, RooflinePlot, PlotCount };

    explicit PlotsView(QWidget* parent = nullptr);

    /// Redraws every plot from `rows` (pointers into the caller's model, used at once).
    /// `ids[i]` is what rowClicked() says for rows[i] (default: i).
    void setRows(const std::vector<const ProfileRow*>& rows, const std::vector<int>& ids = {});
    void setContext(const std::optional<RunContext>& context);

    Plot currentPlot() const;
    void setCurrentPlot(Plot which);
    /// Redraws the plots at their current size (before a screenshot).
    void replot();

    /// The roofs the roofline draws now: the best of each level per device and thread count
    /// of the shown rows, or every ceiling of the report with "All ceilings".
    const std::vector<RooflineCeiling>& drawnCeilings() const { return m_drawn; }
    /// The tooltip of the roofline point at `pos` (the roofline's pixels); empty if none.
    QString rooflineToolTipAt(const QPoint& pos) const;

    /// PNG, PDF or SVG (canExportSvg()) by the file's suffix, labels included; false when
    /// it could not be written.
    bool exportPlot(Plot which, const QString& path, int width = 1000, int height = 640) const;
    /// Asks for a file name, then exports the current plot (exportFailed() on an error).
    void exportCurrentPlot();
    /// Whether this build writes SVG (Qt SVG was found at configure time).
    static bool canExportSvg();
    static QString plotName(Plot which);

signals:
    /// A roofline point was clicked: the id its row was given in setRows().
    void rowClicked(int id);
    void exportFailed(const QString& error);

private:
    // A roof's label and the span of its line it may sit on (plot coordinates).
    struct RoofLabel {
        QCPItemText* item = nullptr;
        double value = 0; // GB/s (y = value * x) or GFLOP/s (y = value)
        bool compute = false;
        double x0 = 0, x1 = 0;
    };

    void redraw();
    void drawTime();
    void drawSpeedup();
    void drawRoofline();
    void chooseRoofs();
    void placeRoofLabels();
    /// Shows `message` instead of plot `which` (empty: shows the plot).
    void setEmptyMessage(Plot which, const QString& message);
    int rowThreads(const ProfileRow& row) const;

    QTabWidget* m_tabs;
    QCustomPlot* m_plots[PlotCount];
    QLabel* m_empty[PlotCount];
    QCheckBox* m_allCeilings;
    QPushButton* m_export;
    RooflinePoints* m_points = nullptr;
    std::vector<ProfileRow> m_rows; // copies: the model may change before a redraw
    std::vector<int> m_ids;
    std::optional<RunContext> m_context;
    std::vector<RooflineCeiling> m_ceilings; // every ceiling of the context
    std::vector<RooflineCeiling> m_drawn;
    std::vector<RoofLabel>
        m_roofLabels; // in placing order: compute roofs, then bandwidth, highest first
    QPoint m_pressedAt;
};

} // namespace switchyard::ui
