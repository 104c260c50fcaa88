// SPDX-License-Identifier: MIT
#include "controllers/fleetloader.h"
#include "models/qtstring.h"

#include <QElapsedTimer>
#include <QMetaObject>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

namespace switchyard::ui {

FleetLoader::FleetLoader(QObject* parent) : QObject(parent) {
    m_pool.setMaxThreadCount(1); // one job at a time, in order
    qRegisterMetaType<switchyard::ui::FleetPtr>();
    qRegisterMetaType<switchyard::ui::TuningsWrittenPtr>();
}

FleetLoader::~FleetLoader() {
    m_pool.waitForDone();
}

void FleetLoader::waitForIdle() {
    m_pool.waitForDone();
}

void FleetLoader::open(const QString& folder) {
    const quint64 generation = ++m_generation;
    if (!m_busy) {
        m_busy = true;
        emit busyChanged(true);
    }
    m_pool.start([this, folder, generation] {
        auto fleet = std::make_shared<Fleet>(load(folder));
        QMetaObject::invokeMethod(
            this,
            [this, fleet, generation] {
                if (generation != m_generation)
                    return; // a newer folder was asked for
                m_busy = false;
                emit busyChanged(false);
                emit fleetAvailable(fleet);
            },
            Qt::QueuedConnection);
    });
}

std::vector<std::string> FleetLoader::reportFiles(const std::string& folder) {
    return Report::files_in(folder); // the files of switchyard-cli compare FOLDER
}

Fleet FleetLoader::load(const QString& folder) {
    QElapsedTimer timer;
    timer.start();
    Fleet fleet;
    fleet.folder = folder;
    std::vector<std::string> paths;
    try {
        paths = reportFiles(folder.toStdString());
    } catch (const std::exception& e) {
        fleet.error = qs(e.what());
        return fleet;
    }
    if (paths.empty())
        fleet.error = QObject::tr("%1 holds no report*.json files").arg(folder);
    // Parsing is most of the time (JSON): one file per task, on every core.
    std::vector<std::optional<Report>> loaded(paths.size());
    std::vector<std::string> errors(paths.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < paths.size();) {
            try {
                loaded[i] = Report::load(paths[i]);
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        }
    };
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                        std::max<std::size_t>(1, paths.size()));
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
    // The fleet's tuning, while the reports are still where their paths say.
    std::vector<fleet::FleetNode> nodes;
    for (std::size_t i = 0; i < paths.size(); ++i)
        if (loaded[i])
            nodes.push_back({fleet::node_name(paths[i]), paths[i], &*loaded[i]});
    fleet.tuning = fleet::tune_fleet(nodes);
    fleet.reports.reserve(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
        const QString file = qs(std::filesystem::path(paths[i]).filename().string());
        if (!loaded[i]) {
            fleet.issues.push_back({file, qs(errors[i]), true});
            continue;
        }
        Report& r = *loaded[i];
        for (const auto& w : r.warnings)
            fleet.issues.push_back({file, qs(w), false});
        const QString host = qs(r.context.host.hostname);
        fleet.hosts << (host.isEmpty() ? file : host);
        fleet.files << file;
        fleet.reports.push_back(std::move(r));
    }
    fleet.seconds = double(timer.nsecsElapsed()) / 1e9;
    return fleet;
}

void FleetLoader::writeTunings(const fleet::FleetTuning& tuning, const QString& folder) {
    m_pool.start([this, tuning, folder] {
        auto result = std::make_shared<const TuningsWritten>(write(tuning, folder));
        QMetaObject::invokeMethod(
            this, [this, result] { emit tuningsWritten(result); }, Qt::QueuedConnection);
    });
}

TuningsWritten FleetLoader::write(fleet::FleetTuning tuning, const QString& folder) {
    TuningsWritten out;
    out.folder = folder;
    try {
        fleet::write_tunings(tuning, folder.toStdString());
    } catch (const std::exception& e) {
        out.error = qs(e.what());
    }
    out.tuning = std::move(tuning);
    return out;
}

} // namespace switchyard::ui
