// SPDX-License-Identifier: MIT
#include "controllers/catalogcontroller.h"

#include <QMetaObject>
#include <QPointer>

#include <algorithm>
#include <tuple>

namespace switchyard::ui {

const BackendInfo* CatalogSnapshot::backend(const std::string& name) const {
    // The owner of a name comes first (infos() sorts by name, then priority).
    for (const auto& b : backends)
        if (b.name == name)
            return &b;
    return nullptr;
}

const Resolution* TargetResolution::find(const std::string& op) const {
    for (const auto& r : resolutions)
        if (r.op == op)
            return &r;
    return nullptr;
}

CatalogController::CatalogController(BackendRegistry& registry, DeviceRegistry& devices,
                                     PluginSearchPath path, QObject* parent)
    : QObject(parent), m_registry(registry), m_devices(devices), m_path(std::move(path)) {
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

CatalogPtr CatalogController::collect(BackendRegistry& registry, DeviceRegistry& devices,
                                      const PluginSearchPath& path, bool rescan) {
    if (rescan) {
        registry.rescan();
        devices.refresh();
    }
    // Device backends list their devices only once loaded, as `hardware` and `doctor` do;
    // a failed load is stored on the backend (its cause shows in the tree), never thrown.
    registry.load_device_backends();
    auto snapshot = std::make_shared<CatalogSnapshot>();
    // The doctor describes every backend in full (ELF files read).
    snapshot->doctor = DoctorReport::collect(registry, devices, path);
    snapshot->backends = snapshot->doctor.backends;
    snapshot->doctorMarkdown = snapshot->doctor.to_markdown();
    for (const auto& m : registry.kernel_registry().manifest()) {
        CellRow row{m.cell->key.parts(), m.available,
                    m.cell->is_loaded(), std::string(to_string(m.cell->source)),
                    m.cell->backend,     0};
        if (auto it = m.cell->meta.find("workspace_bytes");
            it != m.cell->meta.end() && it->is_number_integer())
            row.workspace_bytes = it->get<std::int64_t>();
        snapshot->kernels.push_back(std::move(row));
    }
    for (const auto& m : registry.component_registry().manifest())
        snapshot->components.push_back({m.cell->key.parts(), m.available, m.cell->is_loaded(),
                                        std::string(to_string(m.cell->source)), m.cell->backend,
                                        0});
    return snapshot;
}

TargetResolutionPtr CatalogController::resolve(BackendRegistry& registry,
                                               const std::string& target) {
    auto result = std::make_shared<TargetResolution>();
    result->target = target;
    const Target parsed = parse_target(target); // throws with the valid devices/arches
    const auto ops = known_ops(registry);
    for (const auto& op : ops) {
        try {
            result->resolutions.push_back(resolve_kernel(registry, op, parsed, "default", ops));
        } catch (const std::exception& e) {
            result->errors.push_back(op + ": " + e.what());
        }
    }
    return result;
}

void CatalogController::refresh(bool rescan) {
    auto& registry = m_registry;
    auto& devices = m_devices;
    const auto path = m_path;
    submit([&registry, &devices, path, rescan]() -> std::function<void(CatalogController&)> {
        try {
            auto snapshot = collect(registry, devices, path, rescan);
            return [snapshot](CatalogController& c) { emit c.catalogAvailable(snapshot); };
        } catch (const std::exception& e) {
            const QString error = QString::fromUtf8(e.what());
            return [error](CatalogController& c) { emit c.catalogFailed(error); };
        }
    });
}

namespace {
// Each backend's stored state and cause: what the tree shows of it.
std::vector<std::tuple<std::string, BackendState, BackendCause>>
backendStates(BackendRegistry& registry) {
    std::vector<std::tuple<std::string, BackendState, BackendCause>> out;
    for (const auto& info : registry.infos())
        out.emplace_back(info.name, info.state, info.cause);
    return out;
}
} // namespace

void CatalogController::resolveTarget(const QString& target) {
    auto& registry = m_registry;
    auto& devices = m_devices;
    const auto path = m_path;
    const std::string text = target.toStdString();
    submit([&registry, &devices, path, text]() -> std::function<void(CatalogController&)> {
        try {
            // Resolving loads the plugins a chain reaches: when that changed a backend's
            // state, the catalog is collected again so the tree and panels show it.
            const auto before = backendStates(registry);
            auto result = resolve(registry, text);
            CatalogPtr catalog;
            if (backendStates(registry) != before)
                catalog = collect(registry, devices, path, false);
            return [result, catalog](CatalogController& c) {
                emit c.targetResolved(result);
                if (catalog)
                    emit c.catalogAvailable(catalog);
            };
        } catch (const std::exception& e) {
            const QString t = QString::fromStdString(text), error = QString::fromUtf8(e.what());
            return [t, error](CatalogController& c) { emit c.targetFailed(t, error); };
        }
    });
}

} // namespace switchyard::ui
