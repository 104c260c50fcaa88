// SPDX-License-Identifier: MIT
#pragma once

// A worker process's whole life, for either kind: its request read from stdin (one JSON
// document: protocol::ProfileRequest or protocol::InspectRequest), its protocol lines written
// to the real stdout (anything a kernel or plugin prints goes to stderr instead), its exit
// code returned. A front end only dispatches its hidden `__worker profile|inspect` command
// here, with the registries of its composition root.

#include <switchyard/core_export.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

class BackendRegistry;
class DeviceRegistry;

enum class WorkerMode {
    Profile, // runs rows of a plan (worker/workercontroller.h)
    Inspect, // loads plugins, resolves chains, lists devices (worker/inspect.h)
    Slices,  // one side of a paired A/B run: slices of rows on command (worker/abcontroller.h)
};
/// "profile", "inspect", "slices".
SWITCHYARD_CORE_EXPORT std::string_view to_string(WorkerMode mode) noexcept;
SWITCHYARD_CORE_EXPORT std::optional<WorkerMode>
worker_mode_from_string(std::string_view text) noexcept;

/// What a worker runs against: the process's registries, and how to make the backend
/// registry discover exactly the plugin folders an inspection request names.
struct SWITCHYARD_CORE_EXPORT WorkerHost {
    BackendRegistry& backends;
    DeviceRegistry& devices;
    std::function<void(const std::vector<std::string>& plugin_dirs)> use_plugin_dirs;
};

/// The worker: 0 done, 1 failed (a fatal message says why), 2 a bad request (a fatal usage
/// message names the key).
SWITCHYARD_CORE_EXPORT int worker_main(WorkerMode mode, const WorkerHost& host);

} // namespace switchyard
