// SPDX-License-Identifier: MIT
#include <switchyard/worker/inspect.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/profiling/ceilingcache.h>
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

// The backend that provides device kind `kind` (the one whose provider or device was
// running), from what the worker described; "" when none is known.
std::string provider_of(const InspectResult& result, const std::string& kind) {
    for (const auto& [name, info] : result.backends)
        if (std::find(info.device_kinds.begin(), info.device_kinds.end(), kind) !=
            info.device_kinds.end())
            return name;
    return {};
}

bool has_failed(const InspectResult& result, const std::string& name) {
    return std::any_of(result.failed.begin(), result.failed.end(),
                       [&](const FailedLoad& f) { return f.backend == name; });
}

// `asked` is the request without its load and failed lists, which each worker gets anew.
InspectResult run_inspection(const std::vector<std::string>& names, protocol::InspectRequest asked,
                             const InspectOptions& options) {
    InspectResult result;
    std::vector<std::string> left = names;
    const auto env = detail::worker_environment(options.environment);
    std::vector<std::string> argv = {options.executable};
    argv.insert(argv.end(), options.worker_args.begin(), options.worker_args.end());
    const std::atomic<bool> never{false};
    const bool more_than_loads = asked.resolve || !asked.resolve_all.empty() || asked.devices;
    asked.plugin_dirs = options.plugin_dirs;
    // Each worker that ends early is blamed on one plugin not blamed before (the one it was
    // loading, or whose devices it was listing), or the inspection stops: it ends.
    for (;;) {
        protocol::InspectRequest request = asked;
        request.failed = result.failed;
        // Devices are listed by the backends loaded in the same worker: a new worker loads
        // again every backend that did not end one.
        request.load = left;
        if (asked.devices) {
            request.load.clear();
            for (const auto& n : names)
                if (!has_failed(result, n))
                    request.load.push_back(n);
        }
        result.resolutions.clear();
        result.resolution_errors.clear();
        result.resolution.reset();
        detail::WorkerProcess worker(argv, env, protocol::to_json(request).dump());
        std::string current, phase, phase_kind, err_tail;
        bool done = false;
        const auto end = worker.run(
            [&] {
                return done ? 5.0 : !phase.empty() ? options.probe_timeout_s : options.timeout_s;
            },
            [&](const std::string& line) {
                std::optional<protocol::InspectMessage> m;
                try {
                    m = protocol::parse_inspect(json::parse(line, nullptr, false));
                } catch (const std::exception& e) {
                    err_tail += std::string("a malformed message: ") + e.what() + "\n";
                    return;
                }
                if (!m)
                    return; // not a protocol line
                switch (m->event) {
                case protocol::InspectEvent::Loading:
                    current = m->backend;
                    break;
                case protocol::InspectEvent::Backend:
                    result.backends[m->backend] = std::move(m->info);
                    std::erase(left, m->backend);
                    current.clear();
                    break;
                case protocol::InspectEvent::Resolution:
                    result.resolutions.push_back(std::move(m->resolution));
                    if (!result.resolution)
                        result.resolution = result.resolutions.back();
                    break;
                case protocol::InspectEvent::ResolutionError:
                    result.resolution_errors.push_back(m->op + ": " + m->message);
                    break;
                case protocol::InspectEvent::Listing:
                    phase_kind = m->kind;
                    phase = "listing its " + m->kind + " devices";
                    break;
                case protocol::InspectEvent::Probing:
                    phase_kind = m->kind;
                    phase = "measuring the ceilings of " + m->device;
                    break;
                case protocol::InspectEvent::Devices:
                    phase.clear();
                    phase_kind.clear();
                    result.devices = std::move(m->devices);
                    result.device_errors = std::move(m->listing_errors);
                    result.devices_listed = true;
                    break;
                case protocol::InspectEvent::Fatal:
                    result.fatal = m->message;
                    result.fatal_usage = m->usage;
                    break;
                case protocol::InspectEvent::Done:
                    done = true;
                    break;
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
            if (auto blamed = provider_of(result, phase_kind);
                !blamed.empty() && !has_failed(result, blamed)) {
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
        if (current.empty() || has_failed(result, current)) {
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
                where = " while resolving (in an availability check of a plugin's cell?)";
            result.fatal = "the inspection worker " + how + where +
                           (err_tail.empty() ? std::string() : "; its stderr: " + err_tail);
            break;
        }
        result.failed.push_back(failed_load(current, end, options.timeout_s));
        result.backends.erase(current);
        std::erase(left, current);
        if (left.empty() && !more_than_loads)
            break;
    }
    return result;
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
    protocol::InspectRequest asked;
    asked.resolve = ResolveRequest{op, target, variant};
    return run_inspection(names, std::move(asked), options);
}

InspectResult inspect_resolutions(const std::vector<ResolveRequest>& requests,
                                  const InspectOptions& options) {
    protocol::InspectRequest asked;
    asked.resolve_all = requests;
    return run_inspection({}, std::move(asked), options);
}

std::vector<std::string> device_backend_plugins(BackendRegistry& registry,
                                                const std::vector<std::string>& kinds) {
    const auto infos = registry.infos();
    std::vector<std::string> out;
    for (const auto& name : device_backends(infos, kinds))
        if (std::any_of(infos.begin(), infos.end(), [&](const BackendInfo& i) {
                return i.name == name && i.source == BackendSource::Plugin;
            }))
            out.push_back(name);
    return out;
}

InspectResult inspect_devices(const std::vector<std::string>& names, bool probe,
                              const InspectOptions& options) {
    protocol::InspectRequest asked;
    asked.devices = true;
    asked.probe = probe;
    asked.ceiling_cache = options.ceiling_cache;
    asked.ceiling_policy = options.ceiling_policy;
    return run_inspection(names, std::move(asked), options);
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

// The devices a worker listed; when its provider failed to list any, enumerate() throws
// what it said (DeviceRegistry::enumeration_errors() shows it).
class InspectedProvider final : public DeviceProvider {
public:
    InspectedProvider(std::string kind, std::vector<std::shared_ptr<Device>> devices,
                      std::string error = {})
        : m_kind(std::move(kind)), m_devices(std::move(devices)), m_error(std::move(error)) {}
    std::string kind() const override { return m_kind; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        if (m_devices.empty() && !m_error.empty())
            throw std::runtime_error(m_error);
        return m_devices;
    }

private:
    std::string m_kind;
    std::vector<std::shared_ptr<Device>> m_devices;
    std::string m_error;
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
        if (device_kind(d.kind) != DeviceKind::Cpu)
            by_kind[d.kind].push_back(std::make_shared<InspectedDevice>(d));
    std::map<std::string, std::string> errors;
    for (const auto& [kind, message] : result.device_errors)
        if (device_kind(kind) != DeviceKind::Cpu) {
            auto& text = errors[kind];
            text += (text.empty() ? "" : "; ") + message;
            by_kind[kind]; // listed below, as a provider that says why it has no device
        }
    for (const auto& kind : known_devices())
        if (device_kind(kind) != DeviceKind::Cpu && !by_kind.count(kind)) {
            if (const auto p = devices.provider(kind);
                p && dynamic_cast<InspectedProvider*>(p.get()))
                devices.remove_provider(kind);
        }
    for (auto& [kind, list] : by_kind)
        if (inspected_or_absent(devices, kind))
            devices.add_provider(
                std::make_shared<InspectedProvider>(kind, std::move(list), errors[kind]));
}

void apply_inspection(BackendInfo& info, const InspectedBackend& seen) {
    info.state = seen.state;
    info.cause = seen.cause;
    info.error = seen.error;
    info.diagnostics = seen.diagnostics;
}

void apply_inspection(std::vector<BackendInfo>& infos, const InspectResult& result) {
    for (auto& info : infos) {
        // A backend that ended a worker is Failed here (record_failed_loads) whatever an
        // earlier worker saw of it.
        if (has_failed(result, info.name))
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
    protocol::InspectRequest parsed;
    try {
        parsed = protocol::inspect_request_from_json(request);
    } catch (const std::exception& e) {
        detail::emit_line(
            fd, protocol::fatal_message(std::string("inspection worker: bad request: ") + e.what(),
                                        true));
        return 2;
    }
    return run_inspect_worker(parsed, fd, registry, devices);
}

int run_inspect_worker(const protocol::InspectRequest& request, int fd, BackendRegistry& registry,
                       DeviceRegistry* devices) {
    // Every load of plugin code is announced before it runs and described once it returned:
    // the loads asked for and the ones a chain reaches while it resolves.
    auto describe = [&](const std::string& name, std::string load_error) {
        InspectedBackend seen;
        try {
            seen = InspectedBackend::of(registry.details(name), std::move(load_error));
        } catch (const std::exception& e) {
            seen.load_error = e.what();
        }
        detail::emit_line(fd, protocol::backend_message(name, seen));
    };
    bool asked_load = false; // the loads of the "load" list announce themselves
    registry.set_load_observer([&](const std::string& name, bool begin) {
        if (asked_load)
            return;
        if (begin)
            detail::emit_line(fd, protocol::loading_message(name));
        else
            describe(name, {});
    });
    struct Unobserve {
        BackendRegistry& registry;
        ~Unobserve() { registry.set_load_observer({}); }
    } unobserve{registry};
    try {
        for (const auto& f : request.failed)
            registry.mark_failed(f.backend, f.cause, f.reason);
        for (const auto& name : request.load) {
            detail::emit_line(fd, protocol::loading_message(name));
            std::string load_error;
            asked_load = true;
            try {
                registry.load(name);
            } catch (const std::exception& e) {
                load_error = e.what();
            }
            asked_load = false;
            describe(name, std::move(load_error));
        }
        if (request.resolve) {
            const auto& r = *request.resolve;
            try {
                const auto resolution =
                    resolve_kernel(registry, r.op, parse_target(r.target), r.variant);
                detail::emit_line(fd, protocol::resolution_message(resolution));
            } catch (const std::invalid_argument& e) {
                detail::emit_line(fd, protocol::fatal_message(e.what(), true));
                return 2;
            }
        }
        if (!request.resolve_all.empty()) {
            const auto ops = known_ops(registry);
            for (const auto& r : request.resolve_all) {
                try {
                    const auto resolution =
                        resolve_kernel(registry, r.op, parse_target(r.target), r.variant, ops);
                    detail::emit_line(fd, protocol::resolution_message(resolution));
                } catch (const std::exception& e) {
                    detail::emit_line(fd, protocol::resolution_error_message(r.op, e.what()));
                }
            }
        }
        if (request.devices && devices) {
            // One provider at a time, so that one that crashes or hangs is known by its kind.
            std::vector<DeviceInfo> listed;
            std::vector<std::pair<std::string, std::string>> errors;
            for (const auto& kind : devices->kinds()) {
                if (device_kind(kind) == DeviceKind::Cpu)
                    continue; // built in: the caller has its own
                const auto provider = devices->provider(kind);
                if (!provider)
                    continue;
                detail::emit_line(fd, protocol::listing_message(kind));
                std::vector<std::shared_ptr<Device>> found;
                try {
                    found = provider->enumerate();
                } catch (const std::exception& e) {
                    errors.emplace_back(kind, e.what()); // a runtime that fails lists nothing
                    continue;
                }
                std::optional<CeilingCache> cache;
                if (!request.ceiling_cache.empty())
                    cache.emplace(request.ceiling_cache);
                for (const auto& d : found) {
                    if (!d)
                        continue;
                    nlohmann::json set;
                    if (request.probe) {
                        detail::emit_line(fd, protocol::probing_message(kind, d->info().id));
                        try {
                            set = prepare_device(*d, cache ? &*cache : nullptr,
                                                 request.ceiling_policy);
                        } catch (const std::exception&) {
                            // Listed with the ceilings it has; profiling says why.
                        }
                    }
                    listed.push_back(d->info());
                    // Where its figures came from: the kept set, or measured now.
                    if (!set.is_null())
                        listed.back().properties["ceiling_set"] = set.get<Value>();
                }
            }
            detail::emit_line(fd, protocol::devices_message(listed, errors));
        }
        detail::emit_line(fd, protocol::done_message());
        return 0;
    } catch (const std::exception& e) {
        detail::emit_line(fd,
                          protocol::fatal_message(std::string("inspection worker: ") + e.what()));
        return 1;
    }
}

ResolvePlace resolve_place(BackendRegistry& registry, std::string_view op, const Target& target,
                           std::string_view variant) {
    auto& kernels = registry.kernel_registry();
    for (const auto& key : fallback_chain(op, target, variant)) {
        const auto cell = kernels.lookup(key);
        if (!cell || !cell->is_available())
            continue; // the chain goes on to the next rung
        // resolve_first stops here: a plugin's cell not loaded yet would load it.
        return cell->source == CellSource::Plugin && !cell->is_loaded() ? ResolvePlace::Worker
                                                                        : ResolvePlace::InProcess;
    }
    return ResolvePlace::InProcess;
}

TargetResolutions resolve_target(BackendRegistry& registry, const std::string& target,
                                 const InspectOptions& options, const std::string& no_worker) {
    TargetResolutions out;
    const Target parsed = parse_target(target); // throws with the valid devices/arches
    const auto ops = known_ops(registry);
    std::vector<ResolveRequest> remote;
    for (const auto& op : ops) {
        if (resolve_place(registry, op, parsed) == ResolvePlace::Worker) {
            remote.push_back({op, target, "default"});
            continue;
        }
        try {
            out.resolutions.push_back(resolve_kernel(registry, op, parsed, "default", ops));
        } catch (const std::exception& e) {
            out.errors.push_back(op + ": " + e.what());
        }
    }
    if (!remote.empty() && options.executable.empty()) {
        for (const auto& r : remote)
            out.errors.push_back(r.op + ": " + no_worker);
    } else if (!remote.empty()) {
        out.used_worker = true;
        out.inspected = inspect_resolutions(remote, options);
        for (const auto& f : out.inspected.failed)
            out.errors.push_back("backend " + f.backend + " failed to load (" +
                                 std::string(to_string(f.cause)) + "): " + f.reason);
        if (!out.inspected.fatal.empty())
            out.errors.push_back(out.inspected.fatal);
        out.resolutions.insert(out.resolutions.end(), out.inspected.resolutions.begin(),
                               out.inspected.resolutions.end());
        out.errors.insert(out.errors.end(), out.inspected.resolution_errors.begin(),
                          out.inspected.resolution_errors.end());
    }
    std::sort(out.resolutions.begin(), out.resolutions.end(),
              [](const Resolution& a, const Resolution& b) { return a.op < b.op; });
    return out;
}

} // namespace switchyard
