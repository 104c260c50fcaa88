// SPDX-License-Identifier: MIT
#include <switchyard/worker/inspect.h>

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/devicebackends.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/worker/protocol.h>
#include <switchyard/worker/workercontroller.h>

#include "worker/workerprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace switchyard {

namespace {

using nlohmann::json;

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

// The cause and message of a load that ended its worker.
FailedLoad failed_load(const std::string& name, const detail::WorkerEnd& end, double timeout_s) {
    FailedLoad f;
    f.backend = name;
    if (end.timed_out) {
        f.cause = BackendCause::HookTimedOut;
        f.reason = "register hook did not return within " + seconds(timeout_s) +
                   " s (the inspection worker was killed)";
    } else if (WIFEXITED(end.status)) {
        f.cause = BackendCause::HookExited;
        f.reason = "register hook called exit(" + std::to_string(WEXITSTATUS(end.status)) +
                   ") while loading (or its library did)";
    } else {
        f.cause = BackendCause::HookCrashed;
        f.reason = "loading it crashed the inspection worker with " +
                   describe_wait_status(end.status) +
                   ", in the dynamic loader or its register hook";
    }
    return f;
}

// The backend that declares cells for device kind `kind` (the one whose provider or device
// was running), from what the worker described; "" when none is known.
std::string provider_of(const InspectResult& result, const std::string& kind) {
    for (const auto& [name, info] : result.backends) {
        if (!info.is_object())
            continue;
        for (const char* list : {"kernels", "components"}) {
            if (!info.contains(list) || !info[list].is_array())
                continue;
            for (const auto& cell : info[list])
                if (cell.is_object() && cell.contains("key") && cell["key"].is_array() &&
                    cell["key"].size() > 1 && cell["key"][1] == kind)
                    return name;
        }
    }
    return {};
}

// What a worker is asked besides loading: chains to resolve, devices to list.
struct Asked {
    json resolve;         // one chain, or null
    json resolve_all;     // an array of chains, or null
    bool devices = false; // list the devices (after every load)
    bool probe = false;   // ... measuring their ceilings
};

InspectResult run_inspection(const std::vector<std::string>& names, const Asked& asked,
                             const InspectOptions& options) {
    InspectResult result;
    std::vector<std::string> left = names;
    const auto env = detail::worker_environment(options.environment);
    std::vector<std::string> argv = {options.executable};
    argv.insert(argv.end(), options.worker_args.begin(), options.worker_args.end());
    const std::atomic<bool> never{false};
    const bool more_than_loads =
        !asked.resolve.is_null() || !asked.resolve_all.is_null() || asked.devices;
    // Each worker gets past at least one load, or ends: at most names.size() + 1 workers.
    for (std::size_t attempt = 0; attempt <= names.size(); ++attempt) {
        json failed = json::array();
        for (const auto& f : result.failed)
            failed.push_back({{"name", f.backend}, {"cause", f.cause}, {"reason", f.reason}});
        // Devices are listed by the backends loaded in the same worker: a new worker loads
        // again every backend that did not end one.
        std::vector<std::string> load = left;
        if (asked.devices) {
            load.clear();
            for (const auto& n : names)
                if (std::none_of(result.failed.begin(), result.failed.end(),
                                 [&](const FailedLoad& f) { return f.backend == n; }))
                    load.push_back(n);
        }
        json request = {{"load", load}, {"failed", failed}};
        if (!options.plugin_dirs.empty())
            request["plugin_dirs"] = options.plugin_dirs;
        if (!asked.resolve.is_null())
            request["resolve"] = asked.resolve;
        if (!asked.resolve_all.is_null())
            request["resolve_all"] = asked.resolve_all;
        if (asked.devices)
            request["devices"] = {{"probe", asked.probe}};
        result.resolutions.clear();
        result.resolution_errors.clear();
        detail::WorkerProcess worker(argv, env, request.dump());
        std::string current, phase, phase_kind, err_tail;
        bool done = false;
        const auto end = worker.run(
            [&] {
                return done ? 5.0 : !phase.empty() ? options.probe_timeout_s : options.timeout_s;
            },
            [&](const std::string& line) {
                json j = json::parse(line, nullptr, false);
                if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
                    return;
                const auto event = j["event"].get<std::string>();
                const auto backend = j.value("backend", std::string());
                if (event == "loading") {
                    current = backend;
                } else if (event == "backend") {
                    result.backends[backend] = j.value("info", json());
                    if (const auto e = j.value("load_error", std::string()); !e.empty())
                        result.load_errors[backend] = e;
                    else
                        result.load_errors.erase(backend);
                    std::erase(left, backend);
                    current.clear();
                } else if (event == "resolution") {
                    result.resolutions.push_back(j.value("resolution", json()));
                    if (!result.resolution)
                        result.resolution = result.resolutions.back();
                } else if (event == "resolution_error") {
                    result.resolution_errors.push_back(j.value("op", std::string()) + ": " +
                                                       j.value("message", std::string()));
                } else if (event == "listing") {
                    phase_kind = j.value("kind", std::string());
                    phase = "listing its " + phase_kind + " devices";
                } else if (event == "probing") {
                    phase_kind = j.value("kind", std::string());
                    phase = "measuring the ceilings of " + j.value("device", std::string("?"));
                } else if (event == "devices") {
                    phase.clear();
                    phase_kind.clear();
                    result.devices.clear();
                    for (const auto& d : j.value("devices", json::array())) {
                        try {
                            result.devices.push_back(DeviceInfo::from_json(d));
                        } catch (const std::exception&) {
                            // A device the worker could not describe is not listed.
                        }
                    }
                    result.devices_listed = true;
                } else if (event == "fatal") {
                    result.fatal = j.value("message", std::string("the inspection worker failed"));
                    result.fatal_usage = j.value("usage", false);
                } else if (event == "done") {
                    done = true;
                }
            },
            [&](const std::string& line) {
                err_tail += line + "\n";
                if (err_tail.size() > 2048)
                    err_tail.erase(0, err_tail.size() - 2048);
            },
            never);
        if (done || !result.fatal.empty())
            break;
        // A device backend's provider or device code ended the worker: that backend is
        // Failed, and the next worker lists the others.
        if (current.empty() && !phase_kind.empty()) {
            if (auto blamed = provider_of(result, phase_kind); !blamed.empty()) {
                FailedLoad f = failed_load(blamed, end, options.probe_timeout_s);
                f.reason =
                    phase + " " +
                    (end.timed_out ? "did not return within " + seconds(options.probe_timeout_s) +
                                         " s (the inspection worker was killed)"
                     : WIFEXITED(end.status)
                         ? "called exit(" + std::to_string(WEXITSTATUS(end.status)) + ")"
                         : "crashed the inspection worker with " +
                               describe_wait_status(end.status));
                result.failed.push_back(std::move(f));
                result.backends.erase(blamed); // what it looked like before it failed
                std::erase(left, blamed);
                continue;
            }
        }
        if (current.empty()) {
            const std::string how =
                end.timed_out
                    ? "was silent for " +
                          seconds(phase.empty() ? options.timeout_s : options.probe_timeout_s) +
                          " s and was killed"
                    : "died with " + describe_wait_status(end.status);
            std::string where;
            if (!phase.empty())
                where = " while " + phase + " (in a device backend's code)";
            else if (more_than_loads)
                where = " while resolving (in an availability check of a plugin's cell, or a "
                        "plugin loaded on the way?)";
            result.fatal = "the inspection worker " + how + where +
                           (err_tail.empty() ? std::string() : "; its stderr: " + err_tail);
            break;
        }
        result.failed.push_back(failed_load(current, end, options.timeout_s));
        std::erase(left, current);
        if (left.empty() && !more_than_loads)
            break;
    }
    return result;
}

json resolve_json(const ResolveRequest& r) {
    return {{"op", r.op}, {"target", r.target}, {"variant", r.variant}};
}

} // namespace

InspectResult inspect_backends(const std::vector<std::string>& names,
                               const InspectOptions& options) {
    return run_inspection(names, {}, options);
}

InspectResult inspect_backend(const std::string& name, const InspectOptions& options) {
    return inspect_backends({name}, options);
}

InspectResult inspect_resolution(const std::vector<std::string>& names, const std::string& op,
                                 const std::string& target, const std::string& variant,
                                 const InspectOptions& options) {
    Asked asked;
    asked.resolve = resolve_json({op, target, variant});
    return run_inspection(names, asked, options);
}

InspectResult inspect_resolutions(BackendRegistry& registry,
                                  const std::vector<ResolveRequest>& requests,
                                  const InspectOptions& options) {
    // Every key of every chain: a plugin declaring one of them is loaded up front.
    std::set<std::vector<std::string>> keys;
    Asked asked;
    asked.resolve_all = json::array();
    for (const auto& r : requests) {
        asked.resolve_all.push_back(resolve_json(r));
        for (const auto& k : fallback_chain(r.op, parse_target(r.target), r.variant))
            keys.insert(k.parts());
    }
    std::vector<std::string> plugins;
    for (const auto& info : registry.infos())
        if (info.source == BackendSource::Plugin && info.state == BackendState::Discovered &&
            std::any_of(info.declared_kernels.begin(), info.declared_kernels.end(),
                        [&](const DeclaredCell& c) { return keys.count(c.key) > 0; }))
            plugins.push_back(info.name);
    return run_inspection(plugins, asked, options);
}

std::vector<std::string> device_backend_plugins(BackendRegistry& registry,
                                                const std::vector<std::string>& kinds) {
    std::vector<std::string> out;
    for (const auto& info : registry.infos())
        if (info.source == BackendSource::Plugin && is_device_backend(info, kinds))
            out.push_back(info.name);
    return out;
}

InspectResult inspect_devices(const std::vector<std::string>& names, bool probe,
                              const InspectOptions& options) {
    Asked asked;
    asked.devices = true;
    asked.probe = probe;
    return run_inspection(names, asked, options);
}

InspectResult inspect_device_backends(BackendRegistry& registry, DeviceRegistry& devices,
                                      bool probe, const InspectOptions& options) {
    auto result = inspect_devices(device_backend_plugins(registry), probe, options);
    record_failed_loads(registry, result);
    record_devices(devices, result);
    return result;
}

void* InspectedDevice::allocate(std::size_t) {
    throw std::logic_error("device " + m_info.id +
                           " was listed by an inspection worker; its kernels run in a profile "
                           "worker, where its backend is loaded");
}

void InspectedDevice::upload(void*, const void*, std::size_t) {
    allocate(0);
}

void InspectedDevice::download(void*, const void*, std::size_t) {
    allocate(0);
}

namespace {

class InspectedProvider final : public DeviceProvider {
public:
    InspectedProvider(std::string kind, std::vector<std::shared_ptr<Device>> devices)
        : m_kind(std::move(kind)), m_devices(std::move(devices)) {}
    std::string kind() const override { return m_kind; }
    std::vector<std::shared_ptr<Device>> enumerate() override { return m_devices; }

private:
    std::string m_kind;
    std::vector<std::shared_ptr<Device>> m_devices;
};

bool inspected_or_absent(DeviceRegistry& devices, const std::string& kind) {
    const auto p = devices.provider(kind);
    return !p || dynamic_cast<InspectedProvider*>(p.get()) != nullptr;
}

} // namespace

void record_devices(DeviceRegistry& devices, const InspectResult& result) {
    if (!result.devices_listed)
        return;
    std::map<std::string, std::vector<std::shared_ptr<Device>>> by_kind;
    for (const auto& d : result.devices)
        if (d.kind != "cpu")
            by_kind[d.kind].push_back(std::make_shared<InspectedDevice>(d));
    for (const auto& kind : known_devices())
        if (kind != "cpu" && !by_kind.count(kind)) {
            if (const auto p = devices.provider(kind);
                p && dynamic_cast<InspectedProvider*>(p.get()))
                devices.remove_provider(kind);
        }
    for (auto& [kind, list] : by_kind)
        if (inspected_or_absent(devices, kind))
            devices.add_provider(std::make_shared<InspectedProvider>(kind, std::move(list)));
}

void apply_inspection(BackendInfo& info, const json& seen) {
    if (!seen.is_object())
        return;
    for (const auto state :
         {BackendState::Discovered, BackendState::Invalid, BackendState::Unavailable,
          BackendState::Loaded, BackendState::Failed, BackendState::Shadowed})
        if (seen.value("state", std::string()) == to_string(state))
            info.state = state;
    if (const auto cause = backend_cause_from_string(seen.value("cause", std::string())))
        info.cause = *cause;
    info.error = seen.value("error", std::string());
    if (seen.contains("diagnostics") && seen["diagnostics"].is_array())
        info.diagnostics = seen["diagnostics"].get<std::vector<std::string>>();
}

void apply_inspection(std::vector<BackendInfo>& infos, const InspectResult& result) {
    for (auto& info : infos) {
        // A backend that ended a worker is Failed here (record_failed_loads) whatever an
        // earlier worker saw of it.
        if (std::any_of(result.failed.begin(), result.failed.end(),
                        [&](const FailedLoad& f) { return f.backend == info.name; }))
            continue;
        if (const auto it = result.backends.find(info.name); it != result.backends.end())
            apply_inspection(info, it->second);
    }
}

void record_failed_loads(BackendRegistry& registry, const InspectResult& result) {
    for (const auto& f : result.failed)
        registry.mark_failed(f.backend, f.cause, f.reason);
}

int run_inspect_worker(const json& request, int fd, BackendRegistry& registry,
                       DeviceRegistry* devices) {
    try {
        if (!request.is_object() || !request.contains("load") || !request["load"].is_array()) {
            detail::emit_line(fd,
                              {{"event", "fatal"},
                               {"message", "inspection worker: the request needs a \"load\" array"},
                               {"usage", true}});
            return 2;
        }
        for (const auto& f : request.value("failed", json::array()))
            registry.mark_failed(f.at("name").get<std::string>(), f.at("cause").get<BackendCause>(),
                                 f.at("reason").get<std::string>());
        for (const auto& n : request["load"]) {
            const auto name = n.get<std::string>();
            detail::emit_line(fd, {{"event", "loading"}, {"backend", name}});
            std::string load_error;
            try {
                registry.load(name);
            } catch (const std::exception& e) {
                load_error = e.what();
            }
            json info;
            try {
                info = detail_json(registry.details(name));
            } catch (const std::exception& e) {
                load_error = e.what();
            }
            detail::emit_line(fd, {{"event", "backend"},
                                   {"backend", name},
                                   {"info", info},
                                   {"load_error", load_error}});
        }
        if (request.contains("resolve")) {
            const auto& r = request["resolve"];
            try {
                const auto resolution =
                    resolve_kernel(registry, r.at("op").get<std::string>(),
                                   parse_target(r.at("target").get<std::string>()),
                                   r.value("variant", std::string("default")));
                detail::emit_line(fd,
                                  {{"event", "resolution"}, {"resolution", to_json(resolution)}});
            } catch (const std::invalid_argument& e) {
                detail::emit_line(fd, {{"event", "fatal"}, {"message", e.what()}, {"usage", true}});
                return 2;
            }
        }
        if (request.contains("resolve_all") && request["resolve_all"].is_array()) {
            const auto ops = known_ops(registry);
            for (const auto& r : request["resolve_all"]) {
                const auto op = r.value("op", std::string());
                try {
                    const auto resolution =
                        resolve_kernel(registry, op, parse_target(r.value("target", "cpu")),
                                       r.value("variant", std::string("default")), ops);
                    detail::emit_line(
                        fd, {{"event", "resolution"}, {"resolution", to_json(resolution)}});
                } catch (const std::exception& e) {
                    detail::emit_line(
                        fd, {{"event", "resolution_error"}, {"op", op}, {"message", e.what()}});
                }
            }
        }
        if (request.contains("devices") && devices) {
            // One provider at a time, so that one that crashes or hangs is known by its kind.
            const bool probe = request["devices"].value("probe", false);
            json listed = json::array();
            for (const auto& kind : devices->kinds()) {
                if (kind == "cpu")
                    continue; // built in: the caller has its own
                const auto provider = devices->provider(kind);
                if (!provider)
                    continue;
                detail::emit_line(fd, {{"event", "listing"}, {"kind", kind}});
                std::vector<std::shared_ptr<Device>> found;
                try {
                    found = provider->enumerate();
                } catch (const std::exception&) {
                    continue; // a runtime that fails lists nothing; diagnosis says why
                }
                for (const auto& d : found) {
                    if (!d)
                        continue;
                    if (probe) {
                        detail::emit_line(
                            fd, {{"event", "probing"}, {"kind", kind}, {"device", d->info().id}});
                        try {
                            d->prepare();
                        } catch (const std::exception&) {
                            // Listed with the ceilings it has; profiling says why.
                        }
                    }
                    listed.push_back(d->info().to_json());
                }
            }
            detail::emit_line(fd, {{"event", "devices"}, {"devices", listed}});
        }
        detail::emit_line(fd, {{"event", "done"}});
        return 0;
    } catch (const std::exception& e) {
        detail::emit_line(
            fd, {{"event", "fatal"}, {"message", std::string("inspection worker: ") + e.what()}});
        return 1;
    }
}

} // namespace switchyard
