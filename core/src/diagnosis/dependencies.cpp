// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/dependencies.h>

#include <nlohmann/json.hpp>
#include <switchyard/diagnosis/elfdeps.h>

#include "util/textutil.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace switchyard {
namespace {

bool is_executable_file(const fs::path& candidate) {
    std::error_code ec;
    return ::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec);
}

} // namespace

DependencyStatus check_dependency(const Dependency& dependency) {
    DependencyStatus status{dependency, false, {}, {}};
    std::error_code ec;
    switch (dependency.kind) {
    case DependencyKind::Library: {
        // Resolved as dlopen() would from this process, without loading anything.
        const auto resolved = ElfDependencyResolver().resolve_for_process(dependency.name);
        if (resolved.found()) {
            status.found = true;
            status.location = resolved.path;
            return status;
        }
        status.detail =
            "the dynamic loader cannot resolve " + dependency.name + " (" + resolved.detail + ")";
        break;
    }
    case DependencyKind::File:
        if (fs::exists(dependency.name, ec)) {
            status.found = true;
            status.location = dependency.name;
            return status;
        }
        status.detail = "no such file: " + dependency.name;
        break;
    case DependencyKind::Executable:
        if (dependency.name.find('/') != std::string::npos) {
            if (is_executable_file(dependency.name)) {
                status.found = true;
                status.location = dependency.name;
                return status;
            }
            status.detail = dependency.name + " is not an executable file";
            break;
        }
        if (const char* path = std::getenv("PATH")) {
            for (const auto& dir : text::split(path, ":")) {
                const auto candidate = fs::path(dir) / dependency.name;
                if (is_executable_file(candidate)) {
                    status.found = true;
                    status.location = candidate.string();
                    return status;
                }
            }
        }
        status.detail = dependency.name + " is not on PATH";
        break;
    case DependencyKind::Env:
        if (const char* value = std::getenv(dependency.name.c_str()); value && *value) {
            status.found = true;
            status.location = value;
            return status;
        }
        status.detail = "environment variable " + dependency.name + " is not set";
        break;
    }
    return status;
}

namespace {
std::mutex g_cache_mutex;
std::map<std::pair<int, std::string>, DependencyStatus> g_cache;
} // namespace

DependencyStatus check_dependency_cached(const Dependency& dependency) {
    const auto key = std::make_pair(static_cast<int>(dependency.kind), dependency.name);
    {
        std::lock_guard lock(g_cache_mutex);
        if (auto it = g_cache.find(key); it != g_cache.end()) {
            auto status = it->second;
            status.dependency = dependency; // keep this declaration's hint
            return status;
        }
    }
    auto status = check_dependency(dependency);
    std::lock_guard lock(g_cache_mutex);
    g_cache.emplace(key, status);
    return status;
}

std::vector<DependencyStatus> check_dependencies(const std::vector<Dependency>& dependencies) {
    std::vector<DependencyStatus> out;
    out.reserve(dependencies.size());
    for (const auto& d : dependencies)
        out.push_back(check_dependency_cached(d));
    return out;
}

void clear_dependency_cache() {
    std::lock_guard lock(g_cache_mutex);
    g_cache.clear();
}

void to_json(nlohmann::json& j, const DependencyStatus& d) {
    j = {{"name", d.dependency.name}, {"kind", std::string(to_string(d.dependency.kind))},
         {"hint", d.dependency.hint}, {"found", d.found},
         {"location", d.location},    {"detail", d.detail}};
}

} // namespace switchyard
