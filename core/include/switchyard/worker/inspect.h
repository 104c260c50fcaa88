// SPDX-License-Identifier: MIT
#pragma once

// Inspecting plugins without running their code in the caller's process (issue 13): a worker
// (`switchyard-cli __worker inspect`, the same process machinery as profiling) loads them
// and streams back, one JSON line each, what was registered and the diagnostics. The way a
// load ended the worker (an exit, a signal, a timeout) comes back as data: a BackendCause
// (hook_exited, hook_crashed, hook_timed_out) and a message, and the worker is started
// again for the plugins left. In-process loading (BackendRegistry::load) stays the library
// API's behaviour; the tools use this on code they have not vetted.
//
// Worker protocol: stdin holds {"load": [NAME...], "failed": [{"name", "cause", "reason"}],
// "resolve": {"op", "target", "variant"}?}; stdout carries
//   {"event": "loading", "backend": NAME}          before each load
//   {"event": "backend", "backend": NAME, "info": show --json body, "load_error": "..."}
//   {"event": "resolution", "resolution": resolve --json body}
//   {"event": "fatal", "message": "...", "usage": bool}
//   {"event": "done"}

#include <switchyard/registry/backendcause.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

class BackendRegistry;

/// A plugin whose load ended the worker that loaded it.
struct FailedLoad {
    std::string backend;
    BackendCause cause = BackendCause::HookCrashed; // hook_exited, hook_crashed, hook_timed_out
    std::string reason; // "register hook called exit(0)", "... crashed (SIGSEGV) ..."
};

struct InspectOptions {
    std::string executable = "/proc/self/exe"; // switchyard-cli, or a program that has its
                                               // worker mode
    std::vector<std::string> worker_args = {"__worker", "inspect"};
    std::vector<std::pair<std::string, std::string>> environment; // added to the worker's
    double timeout_s = 10; // one load (dlopen + register hook) may take this long
};

/// What the worker reported: one entry per backend it described, the loads that ended a
/// worker, and (when asked) the resolution.
struct InspectResult {
    std::map<std::string, nlohmann::json> backends; // name -> `show --json` body (detail_json)
    std::map<std::string, std::string> load_errors; // name -> a load that threw (stored there)
    std::vector<FailedLoad> failed;                 // loads that ended a worker
    std::optional<nlohmann::json> resolution;       // to_json(Resolution)
    std::string fatal;                              // the worker could not go on
    bool fatal_usage = false;                       // ... because of the request
};

/// Loads `names` in a worker and describes each. Never throws for what a plugin does;
/// throws WorkerError when no worker can start.
InspectResult inspect_backends(const std::vector<std::string>& names,
                               const InspectOptions& options = {});
/// One backend.
InspectResult inspect_backend(const std::string& name, const InspectOptions& options = {});
/// Loads `names` in a worker (each load that ends a worker is recorded and skipped), then
/// resolves (op, target, variant) there, where availability checks run too.
InspectResult inspect_resolution(const std::vector<std::string>& names, const std::string& op,
                                 const std::string& target, const std::string& variant,
                                 const InspectOptions& options = {});

/// Applies what inspection found to `registry` without loading anything: every failed
/// load becomes Failed with its cause (BackendRegistry::mark_failed).
void record_failed_loads(BackendRegistry& registry, const InspectResult& result);

/// The worker side: reads the request, writes the protocol to `fd`. Returns the exit code
/// (0 done, 2 bad request).
int run_inspect_worker(const nlohmann::json& request, int fd, BackendRegistry& registry);

} // namespace switchyard
