// SPDX-License-Identifier: MIT
#include "controllers/profilecontroller.h"
#include "models/qtstring.h"

#include <switchyard/runtime/runtime.h>
#include <switchyard/worker/workercontroller.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>

namespace switchyard::ui {

ProfileController::ProfileController(QObject* parent)
    : QObject(parent), m_executable(defaultWorkerExecutable()),
      m_ceilingCache(default_ceiling_cache()) {}

ProfileController::~ProfileController() {
    if (m_worker)
        m_worker->cancel();
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

QString ProfileController::defaultWorkerExecutable() {
    const QString env = qEnvironmentVariable("SWITCHYARD_CLI");
    if (!env.isEmpty())
        return env;
    const QString beside =
        QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("switchyard-cli"));
    if (QFileInfo(beside).isExecutable())
        return beside;
    return QStandardPaths::findExecutable(QStringLiteral("switchyard-cli"));
}

void ProfileController::post(std::function<void()> fn) {
    // Queued to the GUI thread; dropped if this controller is gone by then.
    QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

bool ProfileController::start(const ProfileSettings& settings) {
    if (m_thread) {
        emit failed(tr("A profile run is already in progress."));
        return false;
    }
    if (m_executable.isEmpty() || !QFileInfo(m_executable).isExecutable()) {
        emit failed(tr("The profile worker (switchyard-cli) was not found%1. Install "
                       "switchyard-cli beside the GUI or set SWITCHYARD_CLI to its path.")
                        .arg(m_executable.isEmpty() ? QString()
                                                    : QStringLiteral(" at %1").arg(m_executable)));
        return false;
    }
    WorkerController::Options options;
    options.executable = m_executable.toStdString();
    options.settings = settings;
    options.environment = m_environment;
    options.ceiling_cache = m_ceilingCache;
    options.ceiling_policy = m_ceilingPolicy;
    options.ceiling_policy.fresh = options.ceiling_policy.fresh || m_freshCeilings;
    m_freshCeilings = false;
    m_worker = std::make_shared<WorkerController>(options);
    m_done = 0;
    m_total = 0;
    m_started = 0;
    m_passes = int(settings.passes());
    m_clock.start();
    auto worker = m_worker;
    m_thread = QThread::create([this, worker] {
        WorkerController::Callbacks cb;
        cb.on_context = [this](const RunContext& c) {
            const auto note = ceiling_set_note(c.ceiling_set);
            post([this, c, note] {
                if (!note.empty())
                    emit logLine(QString::fromStdString(note));
                emit contextArrived(c);
            });
        };
        cb.on_plan = [this](const std::vector<RowSpec>& plan) {
            const int n = int(plan.size());
            post([this, n] {
                m_total = n;
                emit planArrived(n);
                emit progressChanged(m_done, m_total, -1);
            });
        };
        cb.on_progress = [this](std::int64_t index, const std::string& phase, std::int64_t) {
            if (index >= 0)
                return; // a row's own phases: its row_start and row say enough
            const QString step = qs(phase);
            post([this, step] { emit preparing(step); });
        };
        cb.on_row_start = [this](const RowSpec& spec) {
            const int i = int(spec.index);
            const QString label = qs(spec.label() + " [" + spec.backend + "]");
            post([this, i, label] {
                emit rowStarted(i, label);
                if (m_passes > 1)
                    onSliceStart();
            });
        };
        cb.on_row = [this](const ProfileRow& row) { post([this, row] { onRow(row); }); };
        cb.on_worker_stderr = [this](const std::string& line) {
            const QString l = qs(line);
            post([this, l] { emit logLine(tr("worker: %1").arg(l)); });
        };
        std::shared_ptr<Report> report;
        QString error;
        try {
            report = std::make_shared<Report>(worker->run(cb));
        } catch (const std::exception& e) {
            error = qs(e.what());
        }
        const bool cancelled = worker->cancelled();
        // One message for the end, so isRunning() is false when finished()/failed() arrive.
        post([this, report, error, cancelled] {
            onThreadEnd();
            if (report)
                emit finished(*report, cancelled);
            else
                emit failed(error);
        });
    });
    m_thread->setObjectName(QStringLiteral("switchyard-profile"));
    m_thread->start();
    emit logLine(tr("Profiling with %1").arg(m_executable));
    return true;
}

// A sliced run's rows arrive with its last pass: its progress is the slices started, in rows.
void ProfileController::onSliceStart() {
    ++m_started;
    const int done = std::min(m_total, (m_started - 1) / m_passes);
    double eta = -1;
    if (m_total > 0 && m_started > 1)
        eta = double(m_clock.elapsed()) / 1000.0 / (m_started - 1) *
              (double(m_total) * m_passes - (m_started - 1));
    emit progressChanged(done, m_total, eta);
}

void ProfileController::onRow(const ProfileRow& row) {
    emit rowFinished(row);
    if (m_passes > 1)
        return; // progress follows the slices (onSliceStart)
    ++m_done;
    double eta = -1;
    if (m_total > 0 && m_done > 0)
        eta = double(m_clock.elapsed()) / 1000.0 / m_done * (m_total - m_done);
    emit progressChanged(m_done, m_total, eta);
}

void ProfileController::onThreadEnd() {
    if (!m_thread)
        return;
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    m_worker.reset();
}

void ProfileController::cancel() {
    if (m_worker) {
        m_worker->cancel();
        emit logLine(tr("Cancelling: the worker is stopped, finished rows are kept."));
    }
}

bool ProfileController::wait(int ms) {
    return !m_thread || m_thread->wait(QDeadlineTimer(ms));
}

} // namespace switchyard::ui
