// SPDX-License-Identifier: MIT
#include "controllers/catalogcontroller.h"
#include "models/qtstring.h"

#include "controllers/profilecontroller.h"

#include <switchyard/runtime/runtime.h>

#include <QMetaObject>
#include <QPointer>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace switchyard::ui {

std::string InspectionState::findWorker() {
    return ProfileController::defaultWorkerExecutable().toStdString();
}

CatalogController::CatalogController(BackendRegistry& registry, DeviceRegistry& devices,
                                     PluginSearchPath path, QObject* parent)
    : QObject(parent), m_registry(registry), m_devices(devices), m_path(std::move(path)) {
    m_inspection.options.executable = InspectionState::findWorker();
    for (const auto& d : m_path.dirs()) // the worker discovers exactly this path
        m_inspection.options.plugin_dirs.push_back(d.path);
    qRegisterMetaType<CatalogPtr>();
    qRegisterMetaType<TargetResolutionPtr>();
    m_pool.setMaxThreadCount(1); // jobs run in the order they were asked for
}

CatalogController::~CatalogController() {
    m_pool.waitForDone();
}

void CatalogController::waitForIdle() {
    m_pool.waitForDone();
}

template <class Job> void CatalogController::submit(Job job) {
    if (m_pending++ == 0)
        emit busyChanged(true);
    QPointer<CatalogController> self(this);
    m_pool.start([self, job = std::move(job)]() mutable {
        // The job returns a callable that emits its result on the GUI thread.
        auto deliver = job();
        QMetaObject::invokeMethod(
            self.data(),
            [self, deliver = std::move(deliver)]() mutable {
                if (!self)
                    return;
                if (--self->m_pending == 0)
                    emit self->busyChanged(false);
                deliver(*self);
            },
            Qt::QueuedConnection);
    });
}

namespace {

// Why nothing of a plugin's could be shown when no inspection worker is there.
std::string noWorkerMessage() {
    return "the inspection worker (switchyard-cli) was not found beside the GUI nor on PATH, "
           "so no plugin was loaded to list devices or resolve chains; install switchyard-cli "
           "beside the GUI or set SWITCHYARD_CLI to its path";
}

// What the workers saw of the plugins they loaded, kept for later snapshots.
void remember(InspectionState& inspection, const InspectResult& result) {
    for (const auto& [name, info] : result.backends)
        inspection.seen[name] = info;
    for (const auto& f : result.failed) // Failed in the registry itself from now on
        inspection.seen.erase(f.backend);
}

} // namespace

CatalogPtr CatalogController::collect(BackendRegistry& registry, DeviceRegistry& devices,
                                      const PluginSearchPath& path, bool rescan,
                                      InspectionState& inspection) {
    if (rescan) {
        registry.rescan();
        devices.refresh();
        inspection.seen.clear(); // a rescan forgets what was loaded where
    }
    // Device backends list their devices only once loaded, as `hardware` and `doctor` do: in
    // an inspection worker, whose devices come back as data. A load that ends the worker is
    // stored on the backend as Failed with its cause (the tree shows it), never thrown.
    if (rescan || !inspection.devicesListed) {
        InspectResult listed;
        if (inspection.options.executable.empty()) {
            if (!device_backend_plugins(registry).empty())
                listed.fatal = noWorkerMessage();
        } else {
            try {
                listed = inspect_device_backends(registry, devices, false, inspection.options);
            } catch (const std::exception& e) {
                listed.fatal = e.what(); // the worker could not start
            }
        }
        remember(inspection, listed);
        inspection.devicesListed = true;
        inspection.devicesError = listed.fatal;
    }
    auto snapshot = std::make_shared<CatalogSnapshot>();
    // The doctor describes every backend in full (ELF files read).
    snapshot->doctor = DoctorReport::collect(registry, devices, path);
    InspectResult seen;
    seen.backends = inspection.seen;
    seen.fatal = inspection.devicesError;
    apply_inspection(snapshot->doctor, seen);
    snapshot->backends = snapshot->doctor.backends;
    snapshot->doctorMarkdown = snapshot->doctor.to_markdown();
    snapshot->tunings = tuning_standings(registry, load_tunings(tuning_paths()));
    for (const auto& m : registry.kernel_registry().manifest()) {
        snapshot->kernels.push_back({m.cell->key.parts(), m.available, m.cell->is_loaded(),
                                     std::string(to_string(m.cell->source)), m.cell->backend,
                                     m.cell->workspace_bytes});
    }
    for (const auto& m : registry.component_registry().manifest())
        snapshot->components.push_back({m.cell->key.parts(), m.available, m.cell->is_loaded(),
                                        std::string(to_string(m.cell->source)), m.cell->backend,
                                        0});
    return snapshot;
}

TargetResolutionPtr CatalogController::resolve(BackendRegistry& registry, const std::string& target,
                                               InspectionState& inspection) {
    auto result = std::make_shared<TargetResolution>();
    result->target = target;
    // Each chain resolved where the core's one rule says (worker/inspect.h, resolve_place).
    auto resolved = resolve_target(registry, target, inspection.options, noWorkerMessage());
    if (resolved.used_worker) {
        record_failed_loads(registry, resolved.inspected);
        remember(inspection, resolved.inspected);
    }
    result->resolutions = std::move(resolved.resolutions);
    result->errors = std::move(resolved.errors);
    const auto& inspected = resolved.inspected;
    result->loaded = !inspected.backends.empty() || !inspected.failed.empty();
    return result;
}

void CatalogController::refresh(bool rescan) {
    auto& registry = m_registry;
    auto& devices = m_devices;
    auto& inspection = m_inspection;
    const auto path = m_path;
    submit([&registry, &devices, &inspection, path,
            rescan]() -> std::function<void(CatalogController&)> {
        try {
            auto snapshot = collect(registry, devices, path, rescan, inspection);
            return [snapshot](CatalogController& c) { emit c.catalogAvailable(snapshot); };
        } catch (const std::exception& e) {
            const QString error = qs(e.what());
            return [error](CatalogController& c) { emit c.catalogFailed(error); };
        }
    });
}

void CatalogController::resolveTarget(const QString& target) {
    auto& registry = m_registry;
    auto& devices = m_devices;
    auto& inspection = m_inspection;
    const auto path = m_path;
    const std::string text = target.toStdString();
    submit([&registry, &devices, &inspection, path,
            text]() -> std::function<void(CatalogController&)> {
        try {
            // Resolving loads the plugins a chain reaches (in the worker): the catalog is
            // then collected again so the tree and panels show the states they reached.
            auto result = resolve(registry, text, inspection);
            CatalogPtr catalog;
            if (result->loaded)
                catalog = collect(registry, devices, path, false, inspection);
            return [result, catalog](CatalogController& c) {
                emit c.targetResolved(result);
                if (catalog)
                    emit c.catalogAvailable(catalog);
            };
        } catch (const std::exception& e) {
            const QString t = qs(text), error = qs(e.what());
            return [t, error](CatalogController& c) { emit c.targetFailed(t, error); };
        }
    });
}

} // namespace switchyard::ui
