// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/report/abreport.h>

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QThread;

namespace switchyard {
class AbController;
}

namespace switchyard::ui {

/// Runs a paired A/B run (the core's AbController: one worker a side, slices A B B A ...) on a
/// thread of its own and streams it to the GUI thread as signals: the plan, each slice as it
/// starts, each row as its pairs are measured, and the judged report at the end.
class AbRunController : public QObject {
    Q_OBJECT
public:
    explicit AbRunController(QObject* parent = nullptr);
    ~AbRunController() override; // cancels a run and waits for its thread

    /// The worker program, as ProfileController finds it.
    void setWorkerExecutable(const QString& path) { m_executable = path; }
    QString workerExecutable() const { return m_executable; }
    void setWorkerEnvironment(std::vector<std::pair<std::string, std::string>> env) {
        m_environment = std::move(env);
    }
    void setCeilingCache(std::optional<CeilingCache> cache) { m_ceilingCache = std::move(cache); }

    /// Starts a run of `settings` with sides `a` and `b`, `pairs` pairs of turns a row; false
    /// (and failed()) when one is running or no worker program exists.
    bool start(const ProfileSettings& settings, const AbSide& a, const AbSide& b,
               std::int64_t pairs);
    void cancel();
    bool isRunning() const { return m_thread != nullptr; }
    /// Blocks until the run's thread ended (tests); queued signals still need the event loop.
    bool wait(int ms);

signals:
    void planArrived(int rows);
    /// A slice starts: row `index` (of the plan), side 'A' or 'B', pair `pair` of `pairs`.
    void sliceStarted(int index, QChar side, int pair, int pairs);
    void rowFinished(const switchyard::AbRow& row);
    void logLine(const QString& line);
    void finished(const switchyard::AbReport& report, bool cancelled);
    void failed(const QString& error);

private:
    void post(std::function<void()> fn);
    void onThreadEnd();

    QString m_executable;
    std::vector<std::pair<std::string, std::string>> m_environment;
    std::optional<CeilingCache> m_ceilingCache;
    QThread* m_thread = nullptr;
    std::shared_ptr<AbController> m_worker;
};

} // namespace switchyard::ui
