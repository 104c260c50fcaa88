// SPDX-License-Identifier: MIT
// A fleet folder into the GUI's table: 100 reports x 100 rows, each row five
// runs of 40 samples (profile --repeat 5), read from a folder (FleetLoader: listing and
// parallel parsing), compared (MultiComparison) and shown (MultiCompareModel reset; the
// whole FleetView with its column widths). Goal: under 1 s to a populated table.
//   build/bin/bench/bench_fleet
#include "controllers/fleetloader.h"
#include "models/comparemodel.h"
#include "views/fleetview.h"

#include "support/findchild.h"
#include "support/syntheticfleet.h"

#include <switchyard/report/compare.h>

#include <benchmark/benchmark.h>

#include <QApplication>
#include <QTableView>

#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;
using namespace switchyard;
using namespace switchyard::ui;
using switchyard::test::child;

namespace {

test::FleetSpec fleetSpec(int machines, int rows) {
    test::FleetSpec s;
    s.machines = machines;
    s.rows = rows;
    s.runs = 5;
    s.samplesPerRun = 40;
    s.factors.assign(std::size_t(machines), 1.0);
    s.factors[std::size_t(machines / 2)] = 1.5; // one outlier machine
    return s;
}

// A fleet folder, written once per shape and removed at exit.
const QString& fleetDir(int machines, int rows) {
    static std::map<std::pair<int, int>, QString> dirs;
    static struct Cleanup {
        ~Cleanup() {
            std::error_code ec;
            for (const auto& [k, d] : dirs)
                fs::remove_all(d.toStdString(), ec);
        }
    } cleanup;
    const auto key = std::make_pair(machines, rows);
    if (auto it = dirs.find(key); it != dirs.end())
        return it->second;
    std::string tmpl = (fs::temp_directory_path() / "switchyard-bench-fleet-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        std::abort();
    test::writeFleet(tmpl, fleetSpec(machines, rows));
    return dirs.emplace(key, QString::fromStdString(tmpl)).first->second;
}

// Listing and parsing only (the worker thread's part).
void BM_FleetLoad(benchmark::State& state) {
    const QString& dir = fleetDir(int(state.range(0)), int(state.range(1)));
    for (auto _ : state) {
        Fleet f = FleetLoader::load(dir);
        benchmark::DoNotOptimize(f.reports.data());
    }
}

// MultiComparison alone over reports already in memory.
void BM_FleetCompare(benchmark::State& state) {
    Fleet f = FleetLoader::load(fleetDir(int(state.range(0)), int(state.range(1))));
    std::vector<std::string> names;
    for (const auto& n : f.files)
        names.push_back(n.toStdString());
    for (auto _ : state) {
        auto m = MultiComparison::of(f.reports, names);
        benchmark::DoNotOptimize(m.lines().data());
    }
}

// Folder to a populated model: parse + MultiComparison + model reset.
void BM_FleetToModel(benchmark::State& state) {
    const QString& dir = fleetDir(int(state.range(0)), int(state.range(1)));
    MultiCompareModel model;
    for (auto _ : state) {
        Fleet f = FleetLoader::load(dir);
        model.setReports(std::move(f.reports), f.hosts, {}, 0, f.files);
        if (model.rowCount() != int(state.range(1)))
            state.SkipWithError("the table is not populated");
    }
}

// Folder to the Fleet tab as the user sees it: the above, plus the view's column widths,
// summary and side panel (FleetView::setFleet), then one paint of the table.
void BM_FleetToView(benchmark::State& state) {
    const QString& dir = fleetDir(int(state.range(0)), int(state.range(1)));
    FleetView view;
    view.resize(1600, 1000);
    view.show();
    for (auto _ : state) {
        Fleet f = FleetLoader::load(dir);
        view.setFleet(f);
        child<QTableView>(&view, "fleetTable")->viewport()->repaint();
        if (view.model()->rowCount() != int(state.range(1)))
            state.SkipWithError("the table is not populated");
    }
}

// Another baseline: the comparison again and a model reset.
void BM_FleetBaseline(benchmark::State& state) {
    Fleet f = FleetLoader::load(fleetDir(int(state.range(0)), int(state.range(1))));
    MultiCompareModel model;
    model.setReports(std::move(f.reports), f.hosts, {}, 0, f.files);
    int b = 0;
    for (auto _ : state)
        model.setBaseline(b = (b + 1) % model.reportCount());
}

} // namespace

BENCHMARK(BM_FleetLoad)->Args({100, 100})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FleetCompare)->Args({100, 100})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FleetToModel)
    ->Args({10, 100})
    ->Args({100, 100})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_FleetToView)->Args({100, 100})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FleetBaseline)->Args({100, 100})->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
    if (!std::getenv("QT_QPA_PLATFORM"))
        ::setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv); // FleetView is a widget
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
