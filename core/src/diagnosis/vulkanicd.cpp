// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/vulkanicd.h>

#include <switchyard/diagnosis/loadsim.h>

#include "util/jsonread.h"

#include "util/safefile.h"
#include "util/textutil.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <sys/stat.h>

namespace switchyard {
namespace vkicd {
namespace {

namespace fs = std::filesystem;

// A driver manifest is a small JSON object; anything this long is not one.
constexpr std::size_t kMaxManifestBytes = 256 * 1024;

std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
}

bool set(const std::optional<std::string>& v) {
    return v && !v->empty();
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// Drivers that run on the CPU, by a name in their manifest's or library's file name.
bool names_cpu_driver(const std::string& name) {
    for (const char* cpu : {"lvp", "lavapipe", "llvmpipe", "swiftshader", "swrast"})
        if (name.find(cpu) != std::string::npos)
            return true;
    return false;
}

// "1.3.230" -> 1003 (major * 1000 + minor); -1 when it is no version.
int major_minor(const std::string& version) {
    const auto parts = text::split(version, ".");
    if (parts.size() < 2)
        return -1;
    char* end = nullptr;
    const long major = std::strtol(parts[0].c_str(), &end, 10);
    if (*end || parts[0].empty())
        return -1;
    const long minor = std::strtol(parts[1].c_str(), &end, 10);
    if (*end || parts[1].empty())
        return -1;
    return int(major * 1000 + minor);
}

void read_manifest(VulkanIcd& icd) {
    try {
        safefile::InputFile file(icd.manifest, safefile::InputFile::Accept::RegularFile);
        const auto doc =
            jsonread::parse(file.read_all(kMaxManifestBytes, "Vulkan driver manifest"));
        const auto it = doc.is_object() ? doc.find("ICD") : doc.end();
        if (it == doc.end() || !it->is_object()) {
            icd.state = VulkanIcdState::ManifestInvalid;
            icd.problem = "it has no \"ICD\" object; the loader skips it";
            return;
        }
        icd.library = jsonread::text_or(*it, "library_path");
        icd.api_version = jsonread::text_or(*it, "api_version");
        icd.library_arch = jsonread::text_or(*it, "library_arch");
        if (icd.library.empty()) {
            icd.state = VulkanIcdState::ManifestInvalid;
            icd.problem = "its ICD.library_path is missing or empty; the loader skips it";
        }
    } catch (const std::exception& e) {
        icd.state = VulkanIcdState::ManifestInvalid;
        icd.problem = "it cannot be read as a driver manifest: " + text::untrusted(e.what());
    }
}

// Where the loader would dlopen the library from, and what stops it.
void resolve(VulkanIcd& icd, const ElfDependencyResolver& resolver) {
    std::string name = icd.library;
    // A relative path with a '/' is relative to the manifest's folder; a bare name goes
    // through dlopen's search.
    if (name.find('/') != std::string::npos && name.front() != '/')
        name = (fs::path(icd.manifest).parent_path() / name).lexically_normal().string();
    icd.resolved = resolver.resolve_for_process(name);
    const std::string shown = text::untrusted(name);
    if (!icd.resolved.found()) {
        if (name.find('/') == std::string::npos || !exists(name)) {
            icd.state = VulkanIcdState::LibraryMissing;
            icd.problem =
                shown + " is not found" +
                (icd.resolved.detail.empty() ? std::string()
                                             : ": " + text::untrusted(icd.resolved.detail));
            return;
        }
        icd.resolved.path = name;
        icd.resolved.source = LibrarySearchSource::Direct;
        icd.resolved.detail.clear();
    }
    auto report = resolver.diagnose(icd.resolved.path);
    // In the loader's order: the library's own ELF header first (a library of another
    // machine has no dependencies this process could load), then its dependencies, then
    // its symbols.
    const auto foreign = std::find_if(
        report.load_problems.begin(), report.load_problems.end(),
        [](const LoadProblem& p) { return p.cause == BackendCause::WrongArchitecture; });
    if (!report.readable) {
        icd.state = VulkanIcdState::LibraryMissing;
        icd.problem = text::untrusted(icd.resolved.path) +
                      " cannot be loaded: " + text::untrusted(report.error);
    } else if (foreign != report.load_problems.end()) {
        icd.state = VulkanIcdState::WrongArchitecture;
        icd.problem = text::untrusted(foreign->message);
    } else if (const auto missing = report.unresolved_with_requester(); !missing.empty()) {
        icd.state = VulkanIcdState::DependencyMissing;
        icd.problem = text::untrusted(icd.resolved.path) + " needs " +
                      text::untrusted(text::join(missing, ", ")) +
                      ", which the dynamic loader cannot find";
    } else if (!report.load_problems.empty()) {
        icd.state = VulkanIcdState::LoadFails;
        icd.problem = text::untrusted(report.load_problems.front().message);
    }
    icd.dependencies = std::move(report);
}

} // namespace
} // namespace vkicd

std::string_view to_string(VulkanIcdState state) noexcept {
    switch (state) {
    case VulkanIcdState::Ok:
        return "ok";
    case VulkanIcdState::ManifestInvalid:
        return "manifest_invalid";
    case VulkanIcdState::LibraryMissing:
        return "library_missing";
    case VulkanIcdState::WrongArchitecture:
        return "wrong_architecture";
    case VulkanIcdState::DependencyMissing:
        return "dependency_missing";
    case VulkanIcdState::LoadFails:
        return "load_fails";
    case VulkanIcdState::ApiTooOld:
        return "api_too_old";
    }
    return "ok";
}

void to_json(nlohmann::json& j, const VulkanIcd& icd) {
    j = {{"manifest", icd.manifest},
         {"origin", icd.origin},
         {"library", icd.library},
         {"api_version", icd.api_version},
         {"library_arch", icd.library_arch},
         {"cpu_driver", icd.cpu_driver},
         {"path", icd.resolved.path},
         {"state", std::string(to_string(icd.state))},
         {"problem", icd.problem}};
}

VulkanIcdSearch::Environment VulkanIcdSearch::Environment::current() {
    using vkicd::env;
    return {env("VK_DRIVER_FILES"),     env("VK_ICD_FILENAMES"),
            env("VK_ADD_DRIVER_FILES"), env("XDG_CONFIG_HOME"),
            env("XDG_CONFIG_DIRS"),     env("XDG_DATA_HOME"),
            env("XDG_DATA_DIRS"),       env("HOME")};
}

VulkanIcdSearch VulkanIcdSearch::from_values(const Environment& e) {
    using vkicd::set;
    VulkanIcdSearch search;
    auto add_list = [&](const std::string& list, const char* origin) {
        for (const auto& part : text::split(list, ":"))
            if (!part.empty())
                search.places.push_back({part, origin});
    };
    if (set(e.driver_files) || set(e.icd_filenames)) {
        search.replaced = true;
        if (set(e.driver_files))
            add_list(*e.driver_files, "VK_DRIVER_FILES");
        else
            add_list(*e.icd_filenames, "VK_ICD_FILENAMES");
        return search;
    }
    if (set(e.add_driver_files))
        add_list(*e.add_driver_files, "VK_ADD_DRIVER_FILES");
    const std::string home = set(e.home) ? *e.home : std::string();
    std::vector<std::string> dirs;
    auto add_dirs = [&](const std::optional<std::string>& value, const std::string& fallback) {
        for (const auto& part : text::split(set(value) ? *value : fallback, ":"))
            if (!part.empty())
                dirs.push_back(part);
    };
    if (set(e.xdg_config_home))
        dirs.push_back(*e.xdg_config_home);
    else if (!home.empty())
        dirs.push_back(home + "/.config");
    add_dirs(e.xdg_config_dirs, "/etc/xdg");
    dirs.push_back("/etc");
    if (set(e.xdg_data_home))
        dirs.push_back(*e.xdg_data_home);
    else if (!home.empty())
        dirs.push_back(home + "/.local/share");
    add_dirs(e.xdg_data_dirs, "/usr/local/share:/usr/share");
    for (const auto& d : dirs) {
        const std::string folder = d + "/vulkan/icd.d";
        if (std::none_of(search.places.begin(), search.places.end(),
                         [&](const Place& p) { return p.path == folder; }))
            search.places.push_back({folder, "default"});
    }
    return search;
}

VulkanIcdSearch VulkanIcdSearch::from_environment() {
    return from_values(Environment::current());
}

std::string VulkanIcdSearch::describe() const {
    std::vector<std::string> parts;
    for (const auto& p : places)
        parts.push_back(p.origin == "default" ? p.path : p.origin + "=" + p.path);
    return parts.empty() ? std::string("nowhere") : text::join(parts, ", ");
}

std::vector<VulkanIcd> find_vulkan_icds(const VulkanIcdSearch& search) {
    std::vector<VulkanIcd> icds;
    for (const auto& place : search.places) {
        if (vkicd::is_directory(place.path)) {
            std::error_code ec;
            std::vector<std::string> files;
            for (const auto& entry : std::filesystem::directory_iterator(place.path, ec)) {
                const auto name = entry.path().filename().string();
                if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
                    files.push_back(entry.path().string());
            }
            std::sort(files.begin(), files.end());
            for (auto& f : files)
                icds.push_back({.manifest = std::move(f), .origin = place.origin});
        } else if (place.origin != "default") {
            // A file named by a variable: the loader tries it even where it does not exist.
            icds.push_back({.manifest = place.path, .origin = place.origin});
        }
    }
    const ElfDependencyResolver resolver;
    for (auto& icd : icds) {
        icd.cpu_driver = vkicd::names_cpu_driver(std::filesystem::path(icd.manifest).filename());
        vkicd::read_manifest(icd);
        if (!icd.ok())
            continue;
        icd.cpu_driver = icd.cpu_driver || vkicd::names_cpu_driver(icd.library);
#if defined(__x86_64__) || defined(__aarch64__)
        if (icd.library_arch == "32") {
            icd.state = VulkanIcdState::WrongArchitecture;
            icd.problem = "its library_arch is 32 and this process is 64-bit; the loader skips it";
            continue;
        }
#endif
        vkicd::resolve(icd, resolver);
        if (icd.ok() && !icd.api_version.empty() && vkicd::major_minor(icd.api_version) >= 0 &&
            vkicd::major_minor(icd.api_version) < 1001) {
            icd.state = VulkanIcdState::ApiTooOld;
            icd.problem = "its driver speaks Vulkan " + text::untrusted(icd.api_version) +
                          "; the vulkan plugin needs 1.1";
        }
    }
    return icds;
}

std::vector<VulkanIcd> find_vulkan_icds() {
    return find_vulkan_icds(VulkanIcdSearch::from_environment());
}

std::string vulkan_only_cpu(const std::vector<VulkanIcd>& icds) {
    std::vector<std::string> cpu, broken_gpu;
    bool gpu_ok = false;
    for (const auto& icd : icds) {
        const auto name = std::filesystem::path(icd.manifest).filename().string();
        if (icd.cpu_driver) {
            if (icd.ok())
                cpu.push_back(text::untrusted(name));
        } else if (icd.ok()) {
            gpu_ok = true;
        } else if (icd.state != VulkanIcdState::ApiTooOld) {
            broken_gpu.push_back(text::untrusted(name));
        }
    }
    if (gpu_ok || broken_gpu.empty())
        return {};
    return "Vulkan sees only a CPU device" +
           (cpu.empty() ? std::string(" or none") : " (" + text::join(cpu, ", ") + ")") +
           ": the GPU driver" + (broken_gpu.size() > 1 ? "s " : " ") +
           text::join(broken_gpu, ", ") + (broken_gpu.size() > 1 ? " cannot load" : " cannot load");
}

} // namespace switchyard
