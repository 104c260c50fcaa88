// SPDX-License-Identifier: MIT
// The profiler's plots as a user checks them: a report of a default run on a 2-core CPU and
// PoCL (the CPU's read and triad ceilings per cache level and DRAM, 1 thread and all, the FMA
// peaks, the OpenCL device's copy and FMA), its roofline readable at a glance (one labelled
// roof per device and level for the shown rows' thread count, every label with its value, no
// roof in the legend, "All ceilings" for the rest), the points following the table's filter,
// a click that selects the row, the hover tooltip, the layout before any run, the speedup
// bars and the exports.
#include "controllers/profilecontroller.h"
#include "models/resultsmodel.h"
#include "support/findchild.h"
#include "support/profilerows.h"
#include "views/plotsview.h"
#include "views/profileview.h"
#include "views/rooflinepoints.h"

#include <switchyard/hardware/sdkjson.h>
#include <switchyard/profiling/ceilingtext.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QCheckBox>
#include <QFile>
#include <QImage>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>

#include <map>
#include <set>

using namespace switchyard;
using namespace switchyard::ui;
using switchyard::test::ceilingJson;
using switchyard::test::child;
using switchyard::test::makeRow;

namespace {

// The ceilings `switchyard-cli hardware` measures on a 2-core VM, and PoCL's.
nlohmann::json cpuCeilings() {
    nlohmann::json c = nlohmann::json::array();
    const struct {
        const char* level;
        double read1, triad1, readAll, triadAll;
    } levels[] = {{"L1", 146, 171, 254, 317},
                  {"L2", 87, 92, 167, 106},
                  {"L3", 67, 72, 69, 72},
                  {"DRAM", 21, 27, 28, 39}};
    for (const auto& l : levels) {
        const std::string id = QString::fromLatin1(l.level).toLower().toStdString();
        c.push_back(ceilingJson(id + ".read.1t", "bandwidth", l.level, l.read1, true, 1));
        c.push_back(ceilingJson(id + ".triad.1t", "bandwidth", l.level, l.triad1, true, 1));
        c.push_back(ceilingJson(id + ".read.all", "bandwidth", l.level, l.readAll, true, 0));
        c.push_back(ceilingJson(id + ".triad.all", "bandwidth", l.level, l.triadAll, true, 0));
    }
    c.push_back(ceilingJson("fma.fp32.1t", "compute", "", 100, true, 1));
    c.push_back(ceilingJson("fma.fp32.all", "compute", "", 229, true, 0));
    return c;
}

RunContext twoDeviceContext() {
    auto device = [](const char* id, const char* kind, nlohmann::json ceilings) {
        return nlohmann::json{{"id", id},
                              {"kind", kind},
                              {"name", id},
                              {"arch", "x86-64-v3"},
                              {"peak_bandwidth_gbs", 40.0},
                              {"peak_gflops", 400.0},
                              {"ceilings", std::move(ceilings)}};
    };
    return RunContext::from_json(
        {{"switchyard", {{"version", "0.1.0"}}},
         {"host", {{"hostname", "vm"}, {"os", "Linux"}}},
         {"cpu", {{"brand", "AMD EPYC"}, {"physical_cores", 2}, {"logical_cpus", 2}}},
         {"devices",
          nlohmann::json::array(
              {device("cpu", "cpu", cpuCeilings()),
               device("opencl:0", "opencl",
                      nlohmann::json::array({ceilingJson("device.copy", "bandwidth", "device", 20),
                                             ceilingJson("fma.fp32", "compute", "", 150)}))})},
         {"warnings", nlohmann::json::array()}});
}

// A row judged against `ceiling` (its level, value and fraction as the profiler sets them).
ProfileRow judged(ProfileRow r, const std::string& ceiling, const std::string& level, double value,
                  bool compute) {
    r.ceiling_id = ceiling;
    r.level = level;
    r.ceiling_value = value;
    r.ceiling_fraction = (compute ? r.gflops : r.gbps) / value;
    r.intensity = r.flops / r.bytes;
    return r;
}

ProfileRow onDevice(ProfileRow r, const std::string& device, const std::string& kind) {
    r.spec.device = device;
    r.spec.device_kind = kind;
    r.spec.backend = kind;
    return r;
}

// A default run: per (op, size) the CPU reference (1 thread), the CPU's resolved cell (all
// threads) and the OpenCL device's, each carrying its speedup over the reference.
Report defaultRun() {
    Report rep;
    rep.context = twoDeviceContext();
    struct Case {
        const char* op;
        std::int64_t n;
        double flopsPerElem, bytesPerElem, refTime;
    } cases[] = {{"rms_norm", 4096, 3, 8, 6e-6},
                 {"rms_norm", 1 << 20, 3, 8, 2.4e-3},
                 {"gemm", 256, 2 * 256 * 256.0 / 3, 12, 0.02}};
    for (const auto& c : cases) {
        const bool compute = std::string(c.op) == "gemm";
        const bool small = c.n == 4096;
        ProfileRow ref =
            makeRow(c.op, c.n, "generic", "reference", c.refTime, c.flopsPerElem, c.bytesPerElem);
        ref = compute ? judged(ref, "fma.fp32.1t", "compute", 100, true)
                      : judged(ref, small ? "l1.triad.1t" : "dram.triad.1t", small ? "L1" : "DRAM",
                               small ? 171 : 27, false);
        ref.reference_speedup = 1;
        rep.rows.push_back(ref);
        ProfileRow cpu = makeRow(c.op, c.n, "x86-64-v3", "threaded", c.refTime / 3.2,
                                 c.flopsPerElem, c.bytesPerElem);
        cpu = compute ? judged(cpu, "fma.fp32.all", "compute", 229, true)
                      : judged(cpu, small ? "l2.read.all" : "dram.triad.all", small ? "L2" : "DRAM",
                               small ? 167 : 39, false);
        cpu.reference_speedup = 3.2;
        rep.rows.push_back(cpu);
        ProfileRow cl = onDevice(
            makeRow(c.op, c.n, "pocl", "default", c.refTime / 1.7, c.flopsPerElem, c.bytesPerElem),
            "opencl:0", "opencl");
        cl = compute ? judged(cl, "fma.fp32", "compute", 150, true)
                     : judged(cl, "device.copy", "device", 20, false);
        cl.reference_speedup = 1.7;
        rep.rows.push_back(cl);
    }
    for (std::size_t i = 0; i < rep.rows.size(); ++i)
        rep.rows[i].spec.index = std::int64_t(i);
    return rep;
}

std::vector<const ProfileRow*> pointers(const std::vector<ProfileRow>& rows) {
    std::vector<const ProfileRow*> out;
    for (const auto& r : rows)
        out.push_back(&r);
    return out;
}

// The labels the roofline shows now (after a replot placed them).
std::vector<QCPItemText*> shownRoofLabels(QCustomPlot* roof) {
    std::vector<QCPItemText*> out;
    for (int i = 0; i < roof->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(roof->item(i));
            t && t->objectName() == QLatin1String("roofLabel") && t->visible())
            out.push_back(t);
    return out;
}

// Whether no two of `labels` overlap (their boxes as drawn, rotated with their line).
bool noOverlaps(const std::vector<QCPItemText*>& labels) {
    auto box = [](QCPItemText* t) {
        QPolygonF p;
        for (auto* anchor : {t->topLeft, t->topRight, t->bottomRight, t->bottomLeft})
            p << anchor->pixelPosition();
        return p;
    };
    for (std::size_t i = 0; i < labels.size(); ++i)
        for (std::size_t j = i + 1; j < labels.size(); ++j)
            if (box(labels[i]).intersects(box(labels[j]))) {
                qWarning("labels overlap: %s / %s", qPrintable(labels[i]->text()),
                         qPrintable(labels[j]->text()));
                return false;
            }
    return true;
}

RooflinePoints* pointsOf(QCustomPlot* roof) {
    return roof->findChild<RooflinePoints*>(QStringLiteral("roofPoints"));
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The plots alone, on screen at a panel's size.
struct ShownPlots {
    PlotsView plots;
    ShownPlots() {
        plots.resize(1000, 640);
        plots.show();
    }
    bool exposed() { return QTest::qWaitForWindowExposed(&plots); }
};

// The profiler screen at a desktop size, showing the plots pane (and `report`, if any).
struct ShownView {
    ProfileController controller;
    ProfileView view{&controller};
    ShownView() {
        view.resize(1400, 900);
        view.show();
        view.showPane(ProfileView::PlotsPane);
    }
    bool exposed() { return QTest::qWaitForWindowExposed(&view); }
    /// Shows `report` on the roofline tab; the roofline.
    QCustomPlot* showRoofline(const Report& report) {
        view.setReport(report, "default.json");
        child<QTabWidget>(&view, "plots.tabs")->setCurrentIndex(PlotsView::RooflinePlot);
        return child<QCustomPlot>(&view, "plots.roofline");
    }
};

} // namespace

class TestPlots : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void roofsReadableAtAGlance() {
        ShownPlots shown;
        QVERIFY(shown.exposed());
        PlotsView& plots = shown.plots;
        const Report rep = defaultRun();
        // The rows a filter "threaded" or "pocl" leaves: all threads on both devices.
        std::vector<ProfileRow> rows;
        for (const auto& r : rep.rows)
            if (!r.spec.is_reference())
                rows.push_back(r);
        plots.setContext(rep.context);
        plots.setRows(pointers(rows));
        plots.setCurrentPlot(PlotsView::RooflinePlot);
        auto* roof = child<QCustomPlot>(&plots, "plots.roofline");
        roof->replot();

        // One labelled roof per (device, level), the best of the all-thread ceilings.
        const std::set<std::pair<QString, QString>> expected = {
            {"cpu", "L1"},      {"cpu", "L2"},          {"cpu", "L3"},          {"cpu", "DRAM"},
            {"cpu", "compute"}, {"opencl:0", "device"}, {"opencl:0", "compute"}};
        std::map<std::pair<QString, QString>, int> labelled;
        for (auto* t : shownRoofLabels(roof)) {
            ++labelled[{t->property("device").toString(), t->property("level").toString()}];
            QCOMPARE(t->property("threads").toInt(), 0);
        }
        QCOMPARE(int(labelled.size()), int(expected.size()));
        for (const auto& key : expected)
            QVERIFY2(labelled[key] == 1, qPrintable(key.first + " " + key.second));
        QCOMPARE(plots.drawnCeilings().size(), expected.size());
        // Each label says its roof's name and value; L2's best is its read ceiling.
        std::map<QString, QString> byCeiling;
        for (auto* t : shownRoofLabels(roof)) {
            const auto& drawn = plots.drawnCeilings();
            const auto it = std::find_if(drawn.begin(), drawn.end(), [&](const RooflineCeiling& c) {
                return c.device == t->property("device").toString() &&
                       c.id == t->property("ceiling").toString();
            });
            QVERIFY(it != drawn.end());
            QVERIFY2(t->text().contains(QString::number(it->value, 'f', 0)), qPrintable(t->text()));
            byCeiling[it->device + "/" + it->id] = t->text();
        }
        QCOMPARE(byCeiling["cpu/l2.read.all"], QStringLiteral("cpu L2 read 167 GB/s"));
        QCOMPARE(byCeiling["cpu/fma.fp32.all"], QStringLiteral("cpu FMA fp32 229 GFLOP/s"));
        QCOMPARE(byCeiling["opencl:0/device.copy"], QStringLiteral("opencl:0 device copy 20 GB/s"));
        // No roof in the legend: it names the ops and the devices only.
        for (int i = 0; i < roof->legend->itemCount(); ++i) {
            auto* item = qobject_cast<QCPPlottableLegendItem*>(roof->legend->item(i));
            QVERIFY(item);
            const QString name = item->plottable()->name();
            QVERIFY2(!name.contains("GB/s") && !name.contains("GFLOP/s"), qPrintable(name));
        }
        // Labels do not overlap one another.
        QVERIFY(noOverlaps(shownRoofLabels(roof)));

        // All ceilings: every ceiling of the report, more labels.
        QCOMPARE(child<QCheckBox>(&plots, "plots.allCeilings")->isEnabled(), true);
        child<QCheckBox>(&plots, "plots.allCeilings")->click();
        roof->replot();
        QCOMPARE(plots.drawnCeilings().size(), std::size_t(18 + 2));
        QVERIFY(shownRoofLabels(roof).size() > expected.size());
        QVERIFY(noOverlaps(shownRoofLabels(roof)));
        for (auto* t : shownRoofLabels(roof))
            QVERIFY(t->text().contains("GB/s") || t->text().contains("GFLOP/s"));
        child<QCheckBox>(&plots, "plots.allCeilings")->click();
        roof->replot();
        QCOMPARE(shownRoofLabels(roof).size(), expected.size());

        // The points: one per row, coloured by op, shaped by device, sized by their time.
        auto* points = pointsOf(roof);
        QVERIFY(points);
        QCOMPARE(points->points().size(), rows.size());
        std::map<QColor, std::set<QString>, bool (*)(const QColor&, const QColor&)> opsByColor(
            [](const QColor& a, const QColor& b) { return a.rgba() < b.rgba(); });
        std::map<int, std::set<QString>> devicesByShape;
        for (const auto& p : points->points()) {
            const auto& r = rows[std::size_t(p.row)];
            opsByColor[p.color].insert(QString::fromStdString(r.spec.op));
            devicesByShape[int(p.shape)].insert(QString::fromStdString(r.spec.device));
        }
        QCOMPARE(opsByColor.size(), std::size_t(2));
        for (const auto& [c, ops] : opsByColor)
            QCOMPARE(ops.size(), std::size_t(1));
        QCOMPARE(devicesByShape.size(), std::size_t(2));
        for (const auto& [s, devices] : devicesByShape)
            QCOMPARE(devices.size(), std::size_t(1));
        const auto slowest =
            std::max_element(points->points().begin(), points->points().end(),
                             [](const auto& a, const auto& b) { return a.size < b.size; });
        for (const auto& r : rows)
            QVERIFY(r.stats.median <= rows[std::size_t(slowest->row)].stats.median);
    }

    // A row judged against a ceiling that is not its level's best (rms_norm at DRAM: the
    // copy, under the triad) has that roof drawn too, so its "of ceiling" can be read off
    // the plot; without such a row only the level's best is drawn.
    void roofOfEachRowsCeilingIsDrawn() {
        ShownPlots shown;
        QVERIFY(shown.exposed());
        PlotsView& plots = shown.plots;
        Report rep = defaultRun();
        for (auto& d : rep.context.devices)
            if (d.id == "cpu")
                d.ceilings.push_back(
                    ceilingJson("dram.copy.all", "bandwidth", "DRAM", 33, true, 0).get<Ceiling>());
        std::vector<ProfileRow> rows;
        for (const auto& r : rep.rows)
            if (r.spec.variant == "threaded")
                rows.push_back(r);
        plots.setContext(rep.context);
        plots.setCurrentPlot(PlotsView::RooflinePlot);
        auto drawnIds = [&] {
            std::set<std::string> ids;
            for (const auto& c : plots.drawnCeilings())
                ids.insert(c.id.toStdString());
            return ids;
        };
        plots.setRows(pointers(rows));
        QVERIFY(drawnIds().count("dram.triad.all"));
        QVERIFY(!drawnIds().count("dram.copy.all"));
        for (auto& r : rows)
            if (r.level == "DRAM")
                r = judged(r, "dram.copy.all", "DRAM", 33, false);
        plots.setRows(pointers(rows));
        QVERIFY(drawnIds().count("dram.triad.all"));
        QVERIFY(drawnIds().count("dram.copy.all"));
        int dram = 0;
        for (const auto& c : plots.drawnCeilings())
            dram += c.level == QLatin1String("DRAM");
        QCOMPARE(dram, 2);
    }

    void roofsFollowTheShownRowsThreads() {
        ShownView shown;
        QVERIFY(shown.exposed());
        auto* roof = shown.showRoofline(defaultRun());
        ProfileView& view = shown.view;
        auto* plots = child<PlotsView>(&view, "plotsView");
        // Every row shown: the reference's single-thread roofs and the all-thread ones.
        QTRY_COMPARE(int(pointsOf(roof)->points().size()), 9);
        std::set<int> threads;
        for (const auto& c : plots->drawnCeilings())
            threads.insert(c.threads);
        QCOMPARE(threads, (std::set<int>{0, 1}));
        // Only the reference rows: the CPU's 1-thread roofs, one per level.
        child<QLineEdit>(&view, "resultsFilter")->setText("reference");
        QTRY_COMPARE(int(pointsOf(roof)->points().size()), 3);
        roof->replot();
        std::map<QString, int> levels;
        for (auto* t : shownRoofLabels(roof)) {
            QCOMPARE(t->property("device").toString(), QStringLiteral("cpu"));
            QCOMPARE(t->property("threads").toInt(), 1);
            ++levels[t->property("level").toString()];
        }
        QCOMPARE(levels, (std::map<QString, int>{
                             {"L1", 1}, {"L2", 1}, {"L3", 1}, {"DRAM", 1}, {"compute", 1}}));
    }

    void pointsFollowTheFilterAndSelectTheirRow() {
        ShownView shown;
        QVERIFY(shown.exposed());
        auto* roof = shown.showRoofline(defaultRun());
        ProfileView& view = shown.view;
        auto* table = child<QTableView>(&view, "resultsTable");
        QTRY_COMPARE(int(pointsOf(roof)->points().size()), view.proxy()->rowCount());
        // The filter hides rows: the points drop with them; problems only hides every row.
        child<QLineEdit>(&view, "resultsFilter")->setText("rms_norm");
        QCOMPARE(view.proxy()->rowCount(), 6);
        QTRY_COMPARE(int(pointsOf(roof)->points().size()), 6);
        child<QCheckBox>(&view, "problemsOnly")->setChecked(true);
        QTRY_COMPARE(int(pointsOf(roof)->points().size()), 0);
        child<QCheckBox>(&view, "problemsOnly")->setChecked(false);
        child<QLineEdit>(&view, "resultsFilter")->setText("opencl");
        QTRY_COMPARE(int(pointsOf(roof)->points().size()), 3);
        // Sorted by median, the table's order is no longer the report's.
        table->sortByColumn(ResultsModel::MedianColumn, Qt::DescendingOrder);
        roof->replot();

        auto* points = pointsOf(roof);
        for (int i = 0; i < int(points->points().size()); ++i) {
            const QPoint at = points->pixelOf(i).toPoint();
            QCOMPARE(points->pointAt(at), i);
            const int sourceRow = points->points()[std::size_t(i)].row;
            const ProfileRow& row = view.model()->row(sourceRow);
            // Hover: the tooltip names the row as the table shows it.
            QTest::mouseMove(roof, at);
            QTRY_VERIFY(QToolTip::isVisible());
            const QString tip = QToolTip::text();
            for (const auto& part : {row.spec.op, row.spec.size, row.spec.device, row.spec.backend,
                                     row.spec.arch + "/" + row.spec.variant})
                QVERIFY2(tip.contains(QString::fromStdString(part)), qPrintable(tip));
            QVERIFY2(tip.contains(ceilingText(row)), qPrintable(tip));
            QVERIFY(tip.contains(QString::number(row.gflops, 'g', 3) + " GFLOP/s"));
            QVERIFY(tip.contains(QString::number(row.gbps, 'g', 3) + " GB/s"));
            QVERIFY(tip.contains(QString::number(rowIntensity(row), 'g', 3) + " FLOP/byte"));
            // Click: the table selects the row.
            QTest::mouseClick(roof, Qt::LeftButton, {}, at);
            const auto selected = table->selectionModel()->selectedRows();
            QCOMPARE(selected.size(), 1);
            QCOMPARE(view.proxy()->mapToSource(selected.front()).row(), sourceRow);
        }
        // A drag is no click: the selection stays.
        const auto before = table->selectionModel()->selectedRows();
        QTest::mousePress(roof, Qt::LeftButton, {}, points->pixelOf(0).toPoint());
        QTest::mouseRelease(roof, Qt::LeftButton, {},
                            points->pixelOf(0).toPoint() + QPoint(40, 30));
        QCOMPARE(table->selectionModel()->selectedRows(), before);
    }

    void ofCeilingReadsAsTheCli() {
        // The CLI prints "%.0f%%" and the level: the table, the plots and the tooltips too.
        ProfileRow r = makeRow("rms_norm", 4096, "generic", "reference", 1e-6);
        r.level = "L2";
        r.ceiling_fraction = 0.054;
        QCOMPARE(QString::fromStdString(ceiling_percent(r)), QStringLiteral("5%"));
        QCOMPARE(ceilingText(r), QStringLiteral("5% L2"));
        r.ceiling_fraction = 0.786;
        QCOMPARE(ceilingText(r), QStringLiteral("79% L2"));
        QVERIFY(rowSummary(r).contains("of ceiling: 79% L2"));
        r.status = RowStatus::Crashed;
        QCOMPARE(ceilingText(r), QString());
    }

    void layoutBeforeAndAfterARun() {
        ShownView shown;
        QVERIFY(shown.exposed());
        ProfileView& view = shown.view;
        auto* tabs = child<QTabWidget>(&view, "plots.tabs");
        static const char* const names[] = {"plots.time", "plots.speedup", "plots.roofline"};
        static const char* const empties[] = {"plots.time.empty", "plots.speedup.empty",
                                              "plots.roofline.empty"};
        auto check = [&](bool empty) {
            for (int i = 0; i < PlotsView::PlotCount; ++i) {
                tabs->setCurrentIndex(i);
                QApplication::processEvents();
                auto* p = child<QCustomPlot>(&view, names[i]);
                p->replot();
                QVERIFY2(p->height() >= 200, qPrintable(QString::number(p->height())));
                const QRect axes = p->axisRect()->rect();
                QVERIFY2(axes.height() >= 0.6 * p->height(),
                         qPrintable(QStringLiteral("%1: axes %2 of %3 px high")
                                        .arg(names[i])
                                        .arg(axes.height())
                                        .arg(p->height())));
                QVERIFY2(axes.width() >= 0.6 * p->width(),
                         qPrintable(QStringLiteral("%1: axes %2 of %3 px wide")
                                        .arg(names[i])
                                        .arg(axes.width())
                                        .arg(p->width())));
                auto* message = child<QLabel>(&view, empties[i]);
                QCOMPARE(message->isVisible(), empty);
                QCOMPARE(p->xAxis->visible(), !empty);
                if (empty) {
                    QVERIFY(!message->text().isEmpty());
                    // Centred in the plot.
                    const QPoint centre = message->geometry().center();
                    QVERIFY(qAbs(centre.x() - p->width() / 2) < 20);
                    QVERIFY(qAbs(centre.y() - p->height() / 2) < 20);
                }
            }
        };
        check(true);
        view.setReport(defaultRun(), "default.json");
        QTRY_COMPARE(child<QCustomPlot>(&view, "plots.time")->graphCount(), 6);
        check(false);
    }

    void speedupBarsAreTheRowsSpeedups() {
        ShownPlots shown;
        QVERIFY(shown.exposed());
        PlotsView& plots = shown.plots;
        const Report rep = defaultRun();
        plots.setContext(rep.context);
        plots.setRows(pointers(rep.rows));
        auto* speedup = child<QCustomPlot>(&plots, "plots.speedup");
        // Grouped by (op, size): one tick each, ops together, sizes in order.
        auto ticker = speedup->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(ticker);
        QCOMPARE(ticker->ticks().values(),
                 (QList<QString>{"gemm\n256", "rms_norm\n4096", "rms_norm\n1048576"}));
        // One bar series per device's cell (the reference is the line at 1), the heights the
        // rows' speedups themselves.
        QCOMPARE(speedup->plottableCount(), 2);
        int bars = 0;
        for (int i = 0; i < speedup->plottableCount(); ++i) {
            auto* b = qobject_cast<QCPBars*>(speedup->plottable(i));
            QVERIFY(b);
            QCOMPARE(b->baseValue(), 0.0);
            for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it, ++bars) {
                const QString category = ticker->ticks().value(it->key);
                const auto row =
                    std::find_if(rep.rows.begin(), rep.rows.end(), [&](const ProfileRow& r) {
                        return QString::fromStdString(r.spec.op + "\n" + r.spec.size) == category &&
                               b->name() ==
                                   QString::fromStdString(r.spec.device + " " + r.spec.arch + "/" +
                                                          r.spec.variant);
                    });
                QVERIFY2(row != rep.rows.end(), qPrintable(b->name() + " " + category));
                QCOMPARE(it->value, row->reference_speedup);
            }
        }
        QCOMPARE(bars, 6);
        // Each bar says its value, as the ×ref column does.
        QStringList barLabels;
        for (int i = 0; i < speedup->itemCount(); ++i)
            if (speedup->item(i)->objectName() == QLatin1String("barLabel"))
                barLabels << qobject_cast<QCPItemText*>(speedup->item(i))->text();
        barLabels.sort();
        QCOMPARE(barLabels, (QStringList{"1.70×", "1.70×", "1.70×", "3.20×", "3.20×", "3.20×"}));
        // The reference at 1×: a dashed line, labelled.
        bool line = false, label = false;
        for (int i = 0; i < speedup->itemCount(); ++i) {
            if (auto* l = qobject_cast<QCPItemStraightLine*>(speedup->item(i)))
                line = line || l->point1->coords().y() == 1.0;
            if (auto* t = qobject_cast<QCPItemText*>(speedup->item(i)))
                label = label || t->text().contains("1×");
        }
        QVERIFY(line && label);
    }

    void exportKeepsTheLabels() {
        ShownPlots shown;
        QVERIFY(shown.exposed());
        PlotsView& plots = shown.plots;
        // Before any row, the picture says why it is empty (not a blank page).
        const QString empty = m_dir.filePath("empty.png");
        QVERIFY(plots.exportPlot(PlotsView::TimePlot, empty, 800, 500));
        const QImage blank = QImage(empty).convertToFormat(QImage::Format_RGB32);
        int ink = 0;
        for (int y = 0; y < blank.height(); ++y)
            for (int x = 0; x < blank.width(); ++x)
                ink += blank.pixel(x, y) != blank.pixel(0, 0);
        QVERIFY(ink > 100);
        const Report rep = defaultRun();
        plots.setContext(rep.context);
        plots.setRows(pointers(rep.rows));
        QVERIFY(child<QPushButton>(&plots, "plots.export")->isEnabled());
        for (int i = 0; i < PlotsView::PlotCount; ++i) {
            const auto which = PlotsView::Plot(i);
            const QString base = m_dir.filePath(PlotsView::plotName(which));
            QVERIFY(plots.exportPlot(which, base + ".png", 800, 500));
            QCOMPARE(QImage(base + ".png").size(), QSize(800, 500));
            QVERIFY(plots.exportPlot(which, base + ".pdf", 800, 500));
            const QByteArray pdf = readAll(base + ".pdf");
            QVERIFY(pdf.size() > 1000);
            QVERIFY(pdf.startsWith("%PDF"));
            if (!PlotsView::canExportSvg()) {
                QVERIFY(!plots.exportPlot(which, base + ".svg", 800, 500));
                continue;
            }
            QVERIFY(plots.exportPlot(which, base + ".svg", 800, 500));
            const QByteArray svg = readAll(base + ".svg");
            QVERIFY(svg.contains("<svg"));
            // The roofs' labels are in the picture, placed at its size.
            if (which == PlotsView::RooflinePlot) {
                QVERIFY(svg.contains("FMA fp32 229 GFLOP/s"));
                QVERIFY(svg.contains("GB/s"));
            }
        }
        if (!PlotsView::canExportSvg())
            QSKIP("built without Qt SVG (qt6-svg-dev): PNG and PDF checked, SVG not built");
    }
};

QTEST_MAIN(TestPlots)
#include "tst_plots.moc"
