// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

// Inspecting plugins without running their code in the caller's process: a worker
// (`switchyard-cli __worker inspect`, the same process machinery as profiling) loads them
// and streams back, one JSON line each, what was registered and the diagnostics. The way a
// load ended the worker (an exit, a signal, a timeout) comes back as data: a BackendCause
// (hook_exited, hook_crashed, hook_timed_out) and a message, and the worker is started
// again for the plugins left. In-process loading (BackendRegistry::load) stays the library
// API's behaviour; the tools use this on code they have not vetted.
//
// Device backends are inspected the same way: `hardware`, `doctor` and the GUI list the
// devices of the OpenCL or CUDA plugin (and probe their ceilings) in the worker, and get
// each device back as a DeviceInfo; the caller's DeviceRegistry then holds InspectedDevices
// (information only: kernels run on them in profile workers).
//
// Worker protocol: protocol::InspectRequest on stdin, protocol::InspectMessage lines on stdout
// (worker/protocol.h, one encoder and one parser for both sides). Nothing is loaded that the
// request does not name or a resolution does not reach: a chain loads only the plugins whose
// cells its rungs reach before it resolves (TupleRegistry::resolve_first), and every load,
// asked for or reached, is announced ("loading") before the plugin's code runs, so a load
// that ends the worker is blamed on its plugin.

#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/sdk/device.h>
#include <switchyard/worker/protocol.h>

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

class DeviceRegistry;

using protocol::FailedLoad;
using protocol::InspectedBackend;
using protocol::ResolveRequest;

struct SWITCHYARD_CORE_EXPORT InspectOptions {
    std::string executable = "/proc/self/exe"; // switchyard-cli, or a program that has its
                                               // worker mode
    std::vector<std::string> worker_args = {"__worker", "inspect"};
    std::vector<std::pair<std::string, std::string>> environment; // added to the worker's
    double timeout_s = 10;        // one load (dlopen + register hook) may take this long
    double probe_timeout_s = 120; // listing the devices, or probing one device's ceilings
    /// The plugin folders the worker discovers, exactly (request key "plugin_dirs"); empty:
    /// the worker's default search path. The GUI passes its own path.
    std::vector<std::string> plugin_dirs;
    /// Where the probed devices keep their figures between runs (profiling/ceilingcache.h;
    /// "" none: they measure every time), and when a kept set is used.
    std::string ceiling_cache;
    CeilingCachePolicy ceiling_policy;
};

/// What the worker reported: one entry per backend it described, the loads that ended a
/// worker, and (when asked) the resolution.
struct SWITCHYARD_CORE_EXPORT InspectResult {
    std::map<std::string, InspectedBackend> backends; // every backend the worker loaded
    std::vector<FailedLoad> failed;                   // loads that ended a worker
    std::optional<Resolution> resolution;             // the first (without `cell`)
    std::vector<Resolution> resolutions;              // every one, in the order asked
    std::vector<std::string> resolution_errors;       // "op: why" (resolve_all)
    bool devices_listed = false;                      // a "devices" event came
    std::vector<DeviceInfo> devices;                  // the devices the worker listed (no CPU)
    std::vector<std::pair<std::string, std::string>> device_errors; // (kind, what it said)
    std::string fatal;                                              // the worker could not go on
    bool fatal_usage = false;                                       // ... because of the request
};

/// Loads `names` in a worker and describes each. Never throws for what a plugin does;
/// throws WorkerError when no worker can start.
SWITCHYARD_CORE_EXPORT InspectResult inspect_backends(const std::vector<std::string>& names,
                                                      const InspectOptions& options = {});
/// One backend.
SWITCHYARD_CORE_EXPORT InspectResult inspect_backend(const std::string& name,
                                                     const InspectOptions& options = {});
/// Loads `names` in a worker (each load that ends a worker is recorded and skipped), then
/// resolves (op, target, variant) there, where availability checks run too and the plugins
/// whose cells the chain reaches before it resolves are loaded (none other: `resolve` passes
/// no names).
SWITCHYARD_CORE_EXPORT InspectResult inspect_resolution(const std::vector<std::string>& names,
                                                        const std::string& op,
                                                        const std::string& target,
                                                        const std::string& variant,
                                                        const InspectOptions& options = {});

/// Several chains in one worker, loading only what their rungs reach (as inspect_resolution).
SWITCHYARD_CORE_EXPORT InspectResult inspect_resolutions(
    const std::vector<ResolveRequest>& requests, const InspectOptions& options = {});

/// The plugins BackendRegistry::load_device_backends(kinds) would load: Discovered and
/// available, providing a device kind other than the CPU (one of `kinds`; all when empty;
/// registry/devicebackends.h).
SWITCHYARD_CORE_EXPORT std::vector<std::string>
device_backend_plugins(BackendRegistry& registry, const std::vector<std::string>& kinds = {});

/// Loads the device backends in a worker and lists their devices there, measuring each
/// one's ceilings first when `probe`. A load that ends a worker is recorded and the rest are
/// loaded again in the next one.
SWITCHYARD_CORE_EXPORT InspectResult inspect_devices(const std::vector<std::string>& names,
                                                     bool probe,
                                                     const InspectOptions& options = {});

/// What the tools do instead of load_device_backends(): inspect_devices() for
/// device_backend_plugins(), then record_failed_loads() and record_devices() into `devices`.
SWITCHYARD_CORE_EXPORT InspectResult inspect_device_backends(BackendRegistry& registry,
                                                             DeviceRegistry& devices, bool probe,
                                                             const InspectOptions& options = {});

/// Where a chain is resolved, one rule for every front end: in an inspection worker when
/// its first available rung is the cell of a plugin not loaded here (resolving would load
/// that plugin: the worker loads only the plugins its rungs reach and runs their
/// availability checks, and a load that ends it costs only the worker); here when it
/// resolves at a built-in, registered or loaded cell first (only the application's own
/// code runs; registered backends exist in this process only).
enum class ResolvePlace { InProcess, Worker };
SWITCHYARD_CORE_EXPORT ResolvePlace resolve_place(BackendRegistry& registry, std::string_view op,
                                                  const Target& target,
                                                  std::string_view variant = "default");

/// Every known op's chain on `target` (variant "default"), each resolved where
/// resolve_place() says: the in-process ones here, the others together in one inspection
/// worker. Sorted by op. Without a worker executable (`options.executable` empty), each op
/// that needs one is an error saying `no_worker`. Throws std::invalid_argument for a
/// malformed target (parse_target, with the valid devices and arches).
struct SWITCHYARD_CORE_EXPORT TargetResolutions {
    std::vector<Resolution> resolutions;
    std::vector<std::string> errors; // "op: why", and the plugins whose load ended a worker
    InspectResult inspected;         // what the worker saw (its failed loads, its backends)
    bool used_worker = false;
};
SWITCHYARD_CORE_EXPORT TargetResolutions resolve_target(BackendRegistry& registry,
                                                        const std::string& target,
                                                        const InspectOptions& options,
                                                        const std::string& no_worker = {});

/// Applies what inspection found to `registry` without loading anything: every failed
/// load becomes Failed with its cause (BackendRegistry::mark_failed).
SWITCHYARD_CORE_EXPORT void record_failed_loads(BackendRegistry& registry,
                                                const InspectResult& result);

/// A device listed by an inspection worker: its DeviceInfo only. Buffers and launches throw
/// std::logic_error (kernels run on it in a profile worker, where its backend is loaded).
class SWITCHYARD_CORE_EXPORT InspectedDevice : public Device {
public:
    explicit InspectedDevice(DeviceInfo info) : m_info(std::move(info)) {}
    const DeviceInfo& info() const override { return m_info; }
    void* allocate(std::size_t bytes) override;
    void release(void*) noexcept override {}
    void upload(void* dst, const void* src, std::size_t bytes) override;
    void download(void* dst, const void* src, std::size_t bytes) override;

private:
    DeviceInfo m_info;
};

/// Adds one provider per device kind of `result.devices` to `devices`, each listing those
/// InspectedDevices, replacing what an earlier inspection recorded (a kind it no longer
/// lists is removed). A kind whose backend is loaded in this process keeps its provider.
SWITCHYARD_CORE_EXPORT void record_devices(DeviceRegistry& devices, const InspectResult& result);

/// A backend as its inspection worker saw it after loading it there: state, cause, error
/// and diagnostics replace what this process knows without loading it.
SWITCHYARD_CORE_EXPORT void apply_inspection(BackendInfo& info, const InspectedBackend& seen);
/// The same for every backend of `infos` that `result` describes.
SWITCHYARD_CORE_EXPORT void apply_inspection(std::vector<BackendInfo>& infos,
                                             const InspectResult& result);

/// The worker side: reads the request, writes the protocol to `fd`. Returns the exit code
/// (0 done, 2 bad request). `devices` is the worker's device registry (for "devices").
SWITCHYARD_CORE_EXPORT int run_inspect_worker(const nlohmann::json& request, int fd,
                                              BackendRegistry& registry,
                                              DeviceRegistry* devices = nullptr);
SWITCHYARD_CORE_EXPORT int run_inspect_worker(const protocol::InspectRequest& request, int fd,
                                              BackendRegistry& registry,
                                              DeviceRegistry* devices = nullptr);

} // namespace switchyard
