// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/report/report.h>

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QThread;

namespace switchyard {
class WorkerController;
}

namespace switchyard::ui {

/// Runs a profile in worker processes (the core's WorkerController) on a thread of its
/// own and streams what happens back to the GUI thread as signals: the context, the
/// plan, each finished row (crashed and timed-out ones too), progress with an ETA, and
/// the report at the end. A crashing or hanging kernel costs its row; the window never
/// waits on a kernel. (hotspot's perfparser: heavy work in another process, results
/// streamed into models.)
class ProfileController : public QObject {
    Q_OBJECT
public:
    explicit ProfileController(QObject* parent = nullptr);
    ~ProfileController() override; // cancels a run and waits for its thread

    /// The worker program: $SWITCHYARD_CLI, else switchyard-cli beside this program, else
    /// switchyard-cli on PATH. Empty when none is found.
    static QString defaultWorkerExecutable();
    void setWorkerExecutable(const QString& path) { m_executable = path; }
    QString workerExecutable() const { return m_executable; }
    /// Variables added to the worker's environment (tests put fixture plugins on the path).
    void setWorkerEnvironment(std::vector<std::pair<std::string, std::string>> env) {
        m_environment = std::move(env);
    }

    /// Where measured CPU ceilings are kept between runs: the composition root's
    /// default_ceiling_cache() unless set (std::nullopt: every run measures), and when a kept
    /// set is used (the Profile menu's "CPU ceilings"). The report's context.ceiling_set and
    /// the log say which set judged the run.
    void setCeilingCache(std::optional<CeilingCache> cache) { m_ceilingCache = std::move(cache); }
    void setCeilingPolicy(const CeilingCachePolicy& policy) { m_ceilingPolicy = policy; }
    CeilingCachePolicy ceilingPolicy() const { return m_ceilingPolicy; }
    /// The next run measures the CPU ceilings and refreshes the cache (once).
    void measureCeilingsNextRun() { m_freshCeilings = true; }

    /// Starts a run; false (and failed()) when one is running or no worker program exists.
    bool start(const ProfileSettings& settings);
    /// Kills the worker; the rows finished so far stay, finished() follows with them.
    void cancel();
    bool isRunning() const { return m_thread != nullptr; }
    /// Blocks until the run's thread ended (tests); queued signals still need the event loop.
    bool wait(int ms);

signals:
    void contextArrived(const switchyard::RunContext& context);
    void planArrived(int total);
    /// A step before the plan (the CPU's or a device's ceilings being measured): the
    /// worker's heartbeat while it prepares, "preparing: CPU ceilings, DRAM triad, all
    /// threads" (the event's phase as docs/json.md gives it).
    void preparing(const QString& step);
    void rowStarted(int index, const QString& label);
    void rowFinished(const switchyard::ProfileRow& row);
    /// Rows done of total, and the estimated seconds left (-1: not known yet).
    void progressChanged(int done, int total, double etaSeconds);
    void logLine(const QString& line);
    /// The run ended (completed or cancelled): the report holds every finished row.
    void finished(const switchyard::Report& report, bool cancelled);
    /// The run could not start or went wrong before its rows (bad settings, no worker).
    void failed(const QString& error);

private:
    void post(std::function<void()> fn);
    void onRow(const ProfileRow& row);
    void onSliceStart();
    void onThreadEnd();

    QString m_executable;
    std::vector<std::pair<std::string, std::string>> m_environment;
    std::optional<CeilingCache> m_ceilingCache;
    CeilingCachePolicy m_ceilingPolicy;
    bool m_freshCeilings = false;
    QThread* m_thread = nullptr;
    std::shared_ptr<WorkerController> m_worker;
    QElapsedTimer m_clock;
    int m_done = 0, m_total = 0;
    int m_started = 0, m_passes = 1; // a sliced run: rows started over all its passes
};

} // namespace switchyard::ui
