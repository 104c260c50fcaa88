// SPDX-License-Identifier: MIT
#pragma once

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

/// One cell of the kernel or component registry, as plain data (no predicate to call).
struct CellRow {
    std::vector<std::string> key; // (op, device, arch, variant) or (kind, device, variant)
    bool available = false;
    bool loaded = false; // registered by the library, not only declared by a manifest
    std::string source;
    std::string backend;
    std::int64_t workspace_bytes = 0;
};

/// Everything the panels show, collected on the worker thread in one go.
struct CatalogSnapshot {
    std::vector<BackendInfo> backends; // described in full (ELF dependencies read)
    std::vector<CellRow> kernels;
    std::vector<CellRow> components;
    DoctorReport doctor; // devices, CPU, runtimes, problems, build
    std::string doctorMarkdown;

    const BackendInfo* backend(const std::string& name) const;
};

/// The fallback chains of every op for one target (the matrix's winners and chains).
struct TargetResolution {
    std::string target;
    std::vector<Resolution> resolutions; // one per op, sorted by op
    std::vector<std::string> errors;     // ops that could not be resolved, with why
    bool loaded = false;                 // the worker loaded plugins (or a load failed) on the way

    const Resolution* find(const std::string& op) const;
};

/// Plugin code never runs in the GUI's process (issue 13): device backends are loaded and
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

using CatalogPtr = std::shared_ptr<const CatalogSnapshot>;
using TargetResolutionPtr = std::shared_ptr<const TargetResolution>;

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
