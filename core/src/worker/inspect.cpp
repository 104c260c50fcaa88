// SPDX-License-Identifier: MIT
#include <switchyard/worker/inspect.h>

#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/backendregistry.h>
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

namespace switchyard {

namespace {

using nlohmann::json;

void emit(int fd, const json& message) {
    const std::string line = protocol::to_line(message);
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; // the controller went away
        }
        p += n;
        left -= std::size_t(n);
    }
}

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

InspectResult run_inspection(const std::vector<std::string>& names, const json& resolve,
                             const InspectOptions& options) {
    InspectResult result;
    std::vector<std::string> left = names;
    const auto env = detail::worker_environment(options.environment);
    std::vector<std::string> argv = {options.executable};
    argv.insert(argv.end(), options.worker_args.begin(), options.worker_args.end());
    const std::atomic<bool> never{false};
    // Each worker gets past at least one load, or ends: at most names.size() + 1 workers.
    for (std::size_t attempt = 0; attempt <= names.size(); ++attempt) {
        json failed = json::array();
        for (const auto& f : result.failed)
            failed.push_back({{"name", f.backend}, {"cause", f.cause}, {"reason", f.reason}});
        json request = {{"load", left}, {"failed", failed}};
        if (!resolve.is_null())
            request["resolve"] = resolve;
        detail::WorkerProcess worker(argv, env, request.dump());
        std::string current, err_tail;
        bool done = false;
        const auto end =
            worker.run([&] { return done ? 5.0 : options.timeout_s; },
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
                               std::erase(left, backend);
                               current.clear();
                           } else if (event == "resolution") {
                               result.resolution = j.value("resolution", json());
                           } else if (event == "fatal") {
                               result.fatal =
                                   j.value("message", std::string("the inspection worker failed"));
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
        if (current.empty()) {
            result.fatal = "the inspection worker " +
                           (end.timed_out ? "was silent for " + seconds(options.timeout_s) +
                                                " s and was killed"
                                          : "died with " + describe_wait_status(end.status)) +
                           (resolve.is_null() ? std::string()
                                              : " while resolving (in an availability check of "
                                                "a plugin's cell?)") +
                           (err_tail.empty() ? std::string() : "; its stderr: " + err_tail);
            break;
        }
        result.failed.push_back(failed_load(current, end, options.timeout_s));
        std::erase(left, current);
        if (left.empty() && resolve.is_null())
            break;
    }
    return result;
}

} // namespace

InspectResult inspect_backends(const std::vector<std::string>& names,
                               const InspectOptions& options) {
    return run_inspection(names, json(), options);
}

InspectResult inspect_backend(const std::string& name, const InspectOptions& options) {
    return inspect_backends({name}, options);
}

InspectResult inspect_resolution(const std::vector<std::string>& names, const std::string& op,
                                 const std::string& target, const std::string& variant,
                                 const InspectOptions& options) {
    return run_inspection(names, {{"op", op}, {"target", target}, {"variant", variant}}, options);
}

void record_failed_loads(BackendRegistry& registry, const InspectResult& result) {
    for (const auto& f : result.failed)
        registry.mark_failed(f.backend, f.cause, f.reason);
}

int run_inspect_worker(const json& request, int fd, BackendRegistry& registry) {
    try {
        if (!request.is_object() || !request.contains("load") || !request["load"].is_array()) {
            emit(fd, {{"event", "fatal"},
                      {"message", "inspection worker: the request needs a \"load\" array"},
                      {"usage", true}});
            return 2;
        }
        for (const auto& f : request.value("failed", json::array()))
            registry.mark_failed(f.at("name").get<std::string>(), f.at("cause").get<BackendCause>(),
                                 f.at("reason").get<std::string>());
        for (const auto& n : request["load"]) {
            const auto name = n.get<std::string>();
            emit(fd, {{"event", "loading"}, {"backend", name}});
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
            emit(fd, {{"event", "backend"},
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
                emit(fd, {{"event", "resolution"}, {"resolution", to_json(resolution)}});
            } catch (const std::invalid_argument& e) {
                emit(fd, {{"event", "fatal"}, {"message", e.what()}, {"usage", true}});
                return 2;
            }
        }
        emit(fd, {{"event", "done"}});
        return 0;
    } catch (const std::exception& e) {
        emit(fd, {{"event", "fatal"}, {"message", std::string("inspection worker: ") + e.what()}});
        return 1;
    }
}

} // namespace switchyard
