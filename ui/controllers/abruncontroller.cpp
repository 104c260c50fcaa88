// SPDX-License-Identifier: MIT
#include "controllers/abruncontroller.h"
#include "controllers/profilecontroller.h"
#include "models/qtstring.h"

#include <switchyard/runtime/runtime.h>
#include <switchyard/worker/abcontroller.h>

#include <QFileInfo>
#include <QThread>

namespace switchyard::ui {

AbRunController::AbRunController(QObject* parent)
    : QObject(parent), m_executable(ProfileController::defaultWorkerExecutable()),
      m_ceilingCache(default_ceiling_cache()) {}

AbRunController::~AbRunController() {
    if (m_worker)
        m_worker->cancel();
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

void AbRunController::post(std::function<void()> fn) {
    QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

bool AbRunController::start(const ProfileSettings& settings, const AbSide& a, const AbSide& b,
                            std::int64_t pairs) {
    if (m_thread) {
        emit failed(tr("An A/B run is already in progress."));
        return false;
    }
    if (m_executable.isEmpty() || !QFileInfo(m_executable).isExecutable()) {
        emit failed(tr("The profile worker (switchyard-cli) was not found. Install switchyard-cli "
                       "beside the GUI or set SWITCHYARD_CLI to its path."));
        return false;
    }
    AbController::Options options;
    options.executable = m_executable.toStdString();
    options.settings = settings;
    options.a = a;
    options.b = b;
    options.pairs = pairs;
    options.environment = m_environment;
    options.ceiling_cache = m_ceilingCache;
    m_worker = std::make_shared<AbController>(options);
    auto worker = m_worker;
    m_thread = QThread::create([this, worker, pairs] {
        AbController::Callbacks cb;
        cb.on_plan = [this](const std::vector<RowSpec>& plan) {
            const int n = int(plan.size());
            post([this, n] { emit planArrived(n); });
        };
        cb.on_slice = [this, pairs](std::int64_t index, char side, std::int64_t pair) {
            post([this, index, side, pair, pairs] {
                emit sliceStarted(int(index), QChar(side), int(pair), int(pairs));
            });
        };
        cb.on_row = [this](const AbRow& row) { post([this, row] { emit rowFinished(row); }); };
        cb.on_worker_stderr = [this](char side, const std::string& line) {
            const QString l = qs(line);
            post([this, side, l] { emit logLine(tr("worker %1: %2").arg(QChar(side)).arg(l)); });
        };
        std::shared_ptr<AbReport> report;
        QString error;
        try {
            report = std::make_shared<AbReport>(worker->run(cb));
        } catch (const std::exception& e) {
            error = qs(e.what());
        }
        const bool cancelled = worker->cancelled();
        post([this, report, error, cancelled] {
            onThreadEnd();
            if (report)
                emit finished(*report, cancelled);
            else
                emit failed(error);
        });
    });
    m_thread->setObjectName(QStringLiteral("switchyard-ab"));
    m_thread->start();
    return true;
}

void AbRunController::onThreadEnd() {
    if (!m_thread)
        return;
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    m_worker.reset();
}

void AbRunController::cancel() {
    if (m_worker)
        m_worker->cancel();
}

bool AbRunController::wait(int ms) {
    return !m_thread || m_thread->wait(QDeadlineTimer(ms));
}

} // namespace switchyard::ui
