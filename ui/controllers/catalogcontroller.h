// SPDX-License-Identifier: MIT
#pragma once

#include "models/catalog.h"

#include <switchyard/doctor/doctor.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/worker/inspect.h>

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace switchyard::ui {

/// Plugin code never runs in the GUI's process: device backends are loaded and
/// their devices listed, and fallback chains resolved, in inspection workers
/// (`switchyard-cli __worker inspect`, worker/inspect.h). What the workers saw of each
/// backend is kept here and shown in every snapshot; a load that ended a worker makes the
/// backend Failed with its cause in the registry itself.
struct InspectionState {
    InspectOptions options;                       // options.executable empty: none found
    std::map<std::string, InspectedBackend> seen; // backend -> what a worker saw of it
    bool devicesListed = false; // the device backends were inspected (until a rescan)
    std::string devicesError;   // why listing them failed, shown as a problem
    /// The inspection worker, or "" (SWITCHYARD_CLI, beside the GUI, then PATH).
    static std::string findWorker();
};

/// Runs discovery, ELF analysis, the doctor's collection, rescans and resolutions on a
/// worker thread (one job at a time, in order) and reports back with signals: the GUI
/// thread never blocks on I/O or plugin loading. (hotspot's PerfParser)
class CatalogController : public QObject {
    Q_OBJECT
public:
    CatalogController(BackendRegistry& registry, DeviceRegistry& devices, PluginSearchPath path,
                      QObject* parent = nullptr);
    ~CatalogController() override;

    /// Collects a new snapshot; with `rescan`, plugin discovery runs again first.
    void refresh(bool rescan = false);
    /// Resolves every known op for `target` ("cuda:sm_90", "cpu", ...).
    void resolveTarget(const QString& target);
    bool isBusy() const { return m_pending > 0; }
    /// Blocks until queued jobs finished (tests, shutdown); signals still arrive queued.
    void waitForIdle();

    /// The collection itself, synchronous (the worker job; also for tools and tests).
    static CatalogPtr collect(BackendRegistry& registry, DeviceRegistry& devices,
                              const PluginSearchPath& path, bool rescan,
                              InspectionState& inspection);
    /// Every op's chain for `target`: the chains that reach a plugin's cell in one
    /// inspection worker, the rest here. Throws std::invalid_argument for a bad target.
    static TargetResolutionPtr resolve(BackendRegistry& registry, const std::string& target,
                                       InspectionState& inspection);

signals:
    void busyChanged(bool busy);
    void catalogAvailable(const switchyard::ui::CatalogPtr& catalog);
    void catalogFailed(const QString& error);
    void targetResolved(const switchyard::ui::TargetResolutionPtr& resolution);
    void targetFailed(const QString& target, const QString& error);

private:
    template <class Job> void submit(Job job);

    BackendRegistry& m_registry;
    DeviceRegistry& m_devices;
    PluginSearchPath m_path;
    InspectionState m_inspection; // used by the jobs only (one at a time, in order)
    QThreadPool m_pool;
    int m_pending = 0;
};

} // namespace switchyard::ui

Q_DECLARE_METATYPE(switchyard::ui::CatalogPtr)
Q_DECLARE_METATYPE(switchyard::ui::TargetResolutionPtr)
