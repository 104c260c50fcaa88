// SPDX-License-Identifier: MIT
#include <switchyard/buildinfo.h>
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/doctor/doctor.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/sdk/version.h>

#include "util/textutil.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace switchyard {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

using text::read_first_line;

json collect_build() {
    return {{"version", SWITCHYARD_VERSION_STRING},
            {"git", SWITCHYARD_GIT_HASH},
            {"build_type", SWITCHYARD_BUILD_TYPE},
            {"compiler", SWITCHYARD_COMPILER},
            {"contract_version", kContractVersion},
            {"options",
             {{"SWITCHYARD_ENABLE_GUI", SWITCHYARD_OPTION_GUI},
              {"SWITCHYARD_ENABLE_OPENCL", SWITCHYARD_OPTION_OPENCL},
              {"SWITCHYARD_ENABLE_CUDA", SWITCHYARD_OPTION_CUDA}}}};
}

// The same "host" and "cpu" objects as `switchyard-cli hardware --json`.
json collect_system() {
    const auto* ld_path = std::getenv("LD_LIBRARY_PATH");
    return {{"host", host_info().to_json()},
            {"cpu", cpu_info().to_json()},
            {"ld_library_path", ld_path ? ld_path : ""}};
}

// The devices the device providers report. Listing them probes nothing: a peak that has
// not been measured in this process stays 0 (unknown).
std::vector<DeviceInfo> collect_devices(DeviceRegistry& registry) {
    std::vector<DeviceInfo> devices;
    for (const auto& d : registry.devices())
        devices.push_back(d->info());
    return devices;
}

// Drivers and runtimes visible without loading them, for devices whose provider is not
// registered (the CUDA and OpenCL backends register theirs when they are loaded).
json collect_runtimes() {
    json runtimes = json::array();
    std::error_code ec;
    const fs::path nvidia = "/proc/driver/nvidia/gpus";
    if (fs::is_directory(nvidia, ec)) {
        const auto driver = read_first_line("/proc/driver/nvidia/version");
        for (const auto& gpu : fs::directory_iterator(nvidia, ec)) {
            std::ifstream in(gpu.path() / "information");
            std::string line, model;
            while (std::getline(in, line))
                if (line.rfind("Model:", 0) == 0)
                    model = line.substr(line.find_first_not_of(" \t", 6));
            runtimes.push_back(
                {{"kind", "nvidia-gpu"},
                 {"name", model},
                 {"detail", "PCI " + gpu.path().filename().string() + "; " + driver}});
        }
    }
    const auto cuda = check_dependency({"libcuda.so.1", DependencyKind::Library, ""});
    runtimes.push_back({{"kind", "cuda-driver"},
                        {"name", "libcuda.so.1"},
                        {"detail", cuda.found ? "found at " + cuda.location : "not found"}});
    const fs::path icds = "/etc/OpenCL/vendors";
    if (fs::is_directory(icds, ec)) {
        std::vector<fs::path> files;
        for (const auto& f : fs::directory_iterator(icds, ec))
            if (f.path().extension() == ".icd")
                files.push_back(f.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            const auto library = read_first_line(f.string());
            const auto found = check_dependency({library, DependencyKind::Library, ""});
            runtimes.push_back(
                {{"kind", "opencl-icd"},
                 {"name", f.filename().string()},
                 {"detail", library + (found.found ? " (found at " + found.location + ")"
                                                   : " (not found)")}});
        }
    }
    return runtimes;
}

// A device without the peak figures nobody has measured yet.
json device_json(const DeviceInfo& d) {
    auto j = d.to_json();
    if (d.peak_bandwidth_gbs <= 0) {
        j.erase("peak_bandwidth_gbs");
        j.erase("peak_bandwidth_source");
    }
    if (d.peak_gflops <= 0) {
        j.erase("peak_gflops");
        j.erase("peak_gflops_source");
    }
    return j;
}

std::string format_bytes(std::int64_t bytes) {
    if (bytes >= (std::int64_t(1) << 30) && bytes % (std::int64_t(1) << 30) == 0)
        return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (1 << 20))
        return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes >> 10) + " KiB";
}

// "L1d 48 KiB, L1i 32 KiB, L2 2 MiB, L3 105 MiB".
std::string format_caches(const json& cpu) {
    std::string out;
    for (const auto& c : cpu.value("caches", json::array())) {
        const auto type = c.value("type", "");
        out += (out.empty() ? "L" : ", L") + std::to_string(c.value("level", 0)) +
               (type == "data"          ? "d"
                : type == "instruction" ? "i"
                                        : "") +
               " " + format_bytes(c.value("size_bytes", std::int64_t(0)));
    }
    return out;
}

// "x86-64-v2 x86-64-v3 (best: x86-64-v3)".
std::string format_isa(const json& cpu) {
    return text::join(cpu.value("isa_levels", std::vector<std::string>{}), " ") +
           " (best: " + cpu.value("best_level", "") + ")";
}

// "AMD EPYC 7B13 (AMD_ZEN3), 8 physical cores, 16 logical CPUs".
std::string format_cpu(const json& cpu) {
    std::string out = cpu.value("brand", "");
    const auto uarch = cpu.value("microarchitecture", "");
    if (!uarch.empty())
        out += " (" + uarch + ")";
    return out + ", " + std::to_string(cpu.value("physical_cores", 0)) + " physical cores, " +
           std::to_string(cpu.value("logical_cpus", 0)) + " logical CPUs";
}

std::string format_peaks(const DeviceInfo& d) {
    char buf[64];
    std::string out;
    if (d.peak_bandwidth_gbs > 0) {
        std::snprintf(buf, sizeof buf, "%.1f GB/s", d.peak_bandwidth_gbs);
        out = buf;
    }
    if (d.peak_gflops > 0) {
        std::snprintf(buf, sizeof buf, "%.0f GFLOP/s fp32", d.peak_gflops);
        out += (out.empty() ? "" : ", ") + std::string(buf);
    }
    return out;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string fix_for_failure(const BackendInfo& info) {
    const auto& e = info.error;
    if (contains(e, "a library it needs is missing"))
        return "Install the package that provides the missing library (Debian: `apt-file search "
               "<soname>`), "
               "or add its folder to LD_LIBRARY_PATH";
    if (contains(e, " is missing: "))
        return "Reinstall the plugin, or remove its manifest " + info.manifest_path;
    if (contains(e, "exports no"))
        return "Rebuild the plugin with SWITCHYARD_PLUGIN(...) from <switchyard/sdk/plugin.h>";
    if (contains(e, "register hook threw"))
        return "Report it to the plugin's author with this report; the hook's message is above";
    if (contains(e, "backend-contract revision"))
        return "Upgrade Switchyard, or install a plugin built for this version";
    return "Reinstall or update the plugin";
}

void add_backend_problems(const BackendInfo& info, const ElfDependencyReport* library,
                          std::vector<DoctorProblem>& problems) {
    using S = DoctorProblem::Severity;
    switch (info.state) {
    case BackendState::Invalid:
        problems.push_back(
            {S::Error, info.name, info.error,
             contains(info.error, "writable by other users") ||
                     contains(info.error, "owned by another user")
                 ? "Remove write permission for other users (`chmod o-w`), or move the plugin to a "
                   "folder only you or root can write"
                 : "Fix the key named above in " + info.manifest_path +
                       ", or remove the manifest"});
        return;
    case BackendState::Failed:
        problems.push_back({S::Error, info.name, info.error, fix_for_failure(info)});
        break;
    case BackendState::Unavailable: {
        bool any = false;
        for (const auto& d : info.dependencies) {
            if (d.found)
                continue;
            any = true;
            problems.push_back({S::Warning, info.name,
                                "optional dependency " + d.dependency.name + " (" +
                                    std::string(to_string(d.dependency.kind)) + ") is missing" +
                                    (d.detail.empty() ? "" : ": " + d.detail),
                                d.dependency.hint.empty()
                                    ? "No install hint declared; ask the plugin's author"
                                    : d.dependency.hint});
        }
        if (!any)
            problems.push_back({S::Warning, info.name, info.error,
                                "Upgrade Switchyard or the plugin, as said above"});
        break;
    }
    case BackendState::Shadowed:
        problems.push_back(
            {S::Info, info.name, info.error + " (" + info.manifest_path + ")",
             "Remove the plugin you do not want, or rename one of them in its manifest"});
        return;
    default:
        break;
    }
    for (const auto& d : info.diagnostics)
        problems.push_back(
            {S::Warning, info.name, d, "The manifest and the library disagree: update the plugin"});
    if (info.source != BackendSource::Plugin || info.library_path.empty())
        return;
    if (!library) {
        if (info.state != BackendState::Failed)
            problems.push_back(
                {S::Error, info.name, "its library " + info.library_path + " does not exist",
                 "Reinstall the plugin, or remove its manifest " + info.manifest_path});
        return;
    }
    if (!library->readable) {
        problems.push_back(
            {S::Error, info.name,
             "its library " + info.library_path + " cannot be read: " + library->error,
             "Reinstall the plugin"});
        return;
    }
    for (const auto& dep : library->dependencies) {
        if (dep.found() || contains(info.error, dep.soname))
            continue;
        problems.push_back({S::Error, info.name,
                            "its library needs " + dep.soname + " (needed by " + dep.needed_by +
                                "), which the dynamic loader cannot find; " + dep.detail,
                            "Install the package that provides " + dep.soname +
                                " (Debian: `apt-file search " + dep.soname +
                                "`), or add its folder to LD_LIBRARY_PATH"});
    }
}

json dependency_json(const DependencyStatus& d) {
    return {{"name", d.dependency.name}, {"kind", std::string(to_string(d.dependency.kind))},
            {"hint", d.dependency.hint}, {"found", d.found},
            {"location", d.location},    {"detail", d.detail}};
}

json library_json(const ElfDependencyReport& r) {
    json deps = json::array();
    for (const auto& d : r.dependencies)
        deps.push_back({{"soname", d.soname},
                        {"path", d.path},
                        {"found", d.found()},
                        {"via", std::string(to_string(d.source))},
                        {"needed_by", d.needed_by},
                        {"depth", d.depth},
                        {"detail", d.detail}});
    return {{"library", r.library},
            {"readable", r.readable},
            {"error", r.error},
            {"unresolved", r.unresolved()},
            {"dependencies", deps}};
}

// A Markdown table cell: no pipes, no line breaks.
std::string cell(std::string text) {
    std::string out;
    for (char c : text) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += "<br>";
        else
            out += c;
    }
    return out.empty() ? "" : out;
}

std::string scan_status(const PluginDirectoryScan& s) {
    if (!s.exists)
        return "does not exist";
    if (s.duplicate)
        return "listed earlier, skipped";
    if (!s.problem.empty())
        return "refused: " + s.problem;
    return std::to_string(s.manifests.size()) + " manifest(s)" +
           (s.skipped_files ? ", " + std::to_string(s.skipped_files) + " other file(s) skipped"
                            : "");
}

std::string backend_details(const BackendInfo& b) {
    std::string details = b.error;
    if (details.empty() && !b.manifest_path.empty())
        details = b.manifest_path;
    if (details.empty())
        details = b.description;
    return details;
}

} // namespace

std::string_view to_string(DoctorProblem::Severity severity) noexcept {
    switch (severity) {
    case DoctorProblem::Severity::Error:
        return "error";
    case DoctorProblem::Severity::Warning:
        return "warning";
    case DoctorProblem::Severity::Info:
        return "info";
    }
    return "error";
}

bool DoctorReport::has_errors() const {
    return std::any_of(problems.begin(), problems.end(), [](const DoctorProblem& p) {
        return p.severity == DoctorProblem::Severity::Error;
    });
}

DoctorReport DoctorReport::collect(BackendRegistry& registry, DeviceRegistry& devices,
                                   const PluginSearchPath& path) {
    DoctorReport report;
    report.build = collect_build();
    report.system = collect_system();
    report.devices = collect_devices(devices);
    report.runtimes = collect_runtimes();
    path.discover(&report.search_path);
    report.backends = registry.infos();

    using S = DoctorProblem::Severity;
    for (const auto& scan : report.search_path)
        if (!scan.problem.empty())
            report.problems.push_back(
                {S::Error, scan.dir.path, "plugins in this folder are refused: " + scan.problem,
                 "Run `chmod o-w " + scan.dir.path + "`, or take it off the plugin path"});
    const ElfDependencyResolver resolver;
    for (const auto& info : report.backends) {
        const ElfDependencyReport* library = nullptr;
        if (info.source == BackendSource::Plugin && !info.library_path.empty() &&
            info.state != BackendState::Shadowed &&
            ::access(info.library_path.c_str(), F_OK) == 0) {
            report.libraries.push_back(resolver.diagnose(info.library_path));
            library = &report.libraries.back();
        }
        add_backend_problems(info, library, report.problems);
    }
    std::stable_sort(
        report.problems.begin(), report.problems.end(),
        [](const DoctorProblem& a, const DoctorProblem& b) { return a.severity < b.severity; });
    return report;
}

json DoctorReport::to_json() const {
    json scans = json::array();
    for (const auto& s : search_path)
        scans.push_back({{"path", s.dir.path},
                         {"origin", s.dir.origin},
                         {"exists", s.exists},
                         {"duplicate", s.duplicate},
                         {"problem", s.problem},
                         {"manifests", s.manifests},
                         {"skipped_files", s.skipped_files}});
    json backend_rows = json::array();
    for (const auto& b : backends) {
        json deps = json::array();
        for (const auto& d : b.dependencies)
            deps.push_back(dependency_json(d));
        json row = {{"name", b.name},
                    {"source", std::string(to_string(b.source))},
                    {"state", std::string(to_string(b.state))},
                    {"available", b.is_available()},
                    {"error", b.error},
                    {"version", b.version},
                    {"tags", b.tags},
                    {"dependencies", deps},
                    {"diagnostics", b.diagnostics},
                    {"manifest_path", b.manifest_path},
                    {"library_path", b.library_path},
                    {"shadowed_by", b.shadowed_by}};
        for (const auto& lib : libraries)
            if (lib.library == b.library_path && b.state != BackendState::Shadowed)
                row["library_dependencies"] = library_json(lib);
        backend_rows.push_back(std::move(row));
    }
    json device_rows = json::array();
    for (const auto& d : devices)
        device_rows.push_back(device_json(d));
    json problem_rows = json::array();
    for (const auto& p : problems)
        problem_rows.push_back({{"severity", std::string(to_string(p.severity))},
                                {"subject", p.subject},
                                {"problem", p.problem},
                                {"fix", p.fix}});
    return {{"switchyard", build},      {"system", system},     {"devices", device_rows},
            {"runtimes", runtimes},     {"plugin_path", scans}, {"backends", backend_rows},
            {"problems", problem_rows}, {"ok", !has_errors()}};
}

std::string DoctorReport::to_markdown() const {
    std::ostringstream md;
    md << "# Switchyard doctor report\n\n";
    md << "Generated " << text::utc_now_iso8601() << ".\n\n";
    md << "## Switchyard\n\n| | |\n|---|---|\n";
    md << "| Version | " << build.value("version", "") << " (git " << build.value("git", "")
       << ") |\n";
    md << "| Build type | " << build.value("build_type", "") << " |\n";
    md << "| Compiler | " << build.value("compiler", "") << " |\n";
    md << "| Backend contract | " << build.value("contract_version", 0) << " |\n";
    std::string options;
    for (auto it = build["options"].begin(); it != build["options"].end(); ++it)
        options += (options.empty() ? "" : ", ") + it.key() + "=" + it.value().get<std::string>();
    md << "| Build options | " << cell(options) << " |\n\n";
    const auto host = system.value("host", json::object());
    const auto cpu = system.value("cpu", json::object());
    md << "## System\n\n| | |\n|---|---|\n";
    md << "| OS | " << cell(host.value("distro", "")) << " |\n";
    md << "| Kernel | " << cell(host.value("os", "")) << " |\n";
    md << "| Host | " << cell(host.value("hostname", "")) << " |\n";
    md << "| CPU | " << cell(format_cpu(cpu)) << " |\n";
    md << "| Caches | " << cell(format_caches(cpu)) << " |\n";
    md << "| ISA levels | " << cell(format_isa(cpu)) << " |\n";
    md << "| CPU features | "
       << cell(text::join(cpu.value("features", std::vector<std::string>{}), " ")) << " |\n";
    md << "| Memory | " << (host.value("memory_bytes", std::int64_t(0)) >> 20) << " MiB |\n";
    const auto governor = host.value("governor", "");
    md << "| Governor | " << (governor.empty() ? "(not readable)" : cell(governor)) << " |\n";
    md << "| LD_LIBRARY_PATH | " << cell(system.value("ld_library_path", "")) << " |\n\n";
    md << "## Devices\n\n| Id | Name | Arch | Peaks |\n|---|---|---|---|\n";
    for (const auto& d : devices) {
        const auto peaks = format_peaks(d);
        md << "| " << d.id << " | " << cell(d.name) << " | " << cell(d.arch) << " | "
           << (peaks.empty() ? "not measured" : peaks) << " |\n";
    }
    md << "\n## Drivers and runtimes\n\n| Kind | Name | Detail |\n|---|---|---|\n";
    for (const auto& r : runtimes)
        md << "| " << r.value("kind", "") << " | " << cell(r.value("name", "")) << " | "
           << cell(r.value("detail", "")) << " |\n";
    md << "\n## Plugin search path\n\n| # | Folder | From | Status |\n|---|---|---|---|\n";
    for (std::size_t i = 0; i < search_path.size(); ++i)
        md << "| " << i + 1 << " | `" << search_path[i].dir.path << "` | "
           << search_path[i].dir.origin << " | " << cell(scan_status(search_path[i])) << " |\n";
    for (const auto& s : search_path)
        for (const auto& m : s.manifests)
            md << "\n- `" << m << "`";
    md << "\n\n## Backends\n\n| Backend | Source | State | Version | Details "
          "|\n|---|---|---|---|---|\n";
    for (const auto& b : backends)
        md << "| " << cell(b.name) << " | " << to_string(b.source) << " | " << to_string(b.state)
           << " | " << cell(b.version) << " | " << cell(backend_details(b)) << " |\n";
    for (const auto& b : backends) {
        if (b.dependencies.empty())
            continue;
        md << "\n### " << b.name
           << ": optional dependencies\n\n| Dependency | Kind | Found | Where / why | Hint |\n"
           << "|---|---|---|---|---|\n";
        for (const auto& d : b.dependencies)
            md << "| " << cell(d.dependency.name) << " | " << to_string(d.dependency.kind) << " | "
               << (d.found ? "yes" : "**no**") << " | " << cell(d.found ? d.location : d.detail)
               << " | " << cell(d.dependency.hint) << " |\n";
    }
    for (const auto& lib : libraries) {
        md << "\n### `" << lib.library << "`: library dependencies\n\n```\n"
           << lib.to_text() << "```\n";
    }
    md << "\n## Problems (" << problems.size() << ")\n\n";
    if (problems.empty())
        md << "None found.\n";
    for (std::size_t i = 0; i < problems.size(); ++i)
        md << i + 1 << ". **" << to_string(problems[i].severity) << "** `" << problems[i].subject
           << "`: " << problems[i].problem << "  \n   *Fix:* " << problems[i].fix << "\n";
    return md.str();
}

std::string DoctorReport::to_text() const {
    std::ostringstream out;
    out << "Switchyard " << build.value("version", "") << " (git " << build.value("git", "") << ", "
        << build.value("build_type", "") << ", " << build.value("compiler", "") << ")\n";
    const auto host = system.value("host", json::object());
    const auto cpu = system.value("cpu", json::object());
    out << "System:    " << host.value("distro", "") << "; " << host.value("os", "") << "\n";
    out << "CPU:       " << format_cpu(cpu) << "\n";
    out << "Caches:    " << format_caches(cpu) << "\n";
    out << "ISA:       " << format_isa(cpu) << "\n";
    out << "Memory:    " << (host.value("memory_bytes", std::int64_t(0)) >> 20) << " MiB\n";
    out << "\nDevices:\n";
    for (const auto& d : devices) {
        const auto peaks = format_peaks(d);
        out << "  " << d.id << ": " << d.name << " [" << d.arch << "]"
            << (peaks.empty() ? "" : " - " + peaks) << "\n";
    }
    out << "\nDrivers and runtimes:\n";
    for (const auto& r : runtimes)
        out << "  " << r.value("kind", "") << ": " << r.value("name", "") << " - "
            << r.value("detail", "") << "\n";
    out << "\nPlugin search path:\n";
    for (std::size_t i = 0; i < search_path.size(); ++i)
        out << "  " << i + 1 << ". " << search_path[i].dir.path << " [" << search_path[i].dir.origin
            << "]: " << scan_status(search_path[i]) << "\n";
    out << "\nBackends:\n";
    for (const auto& b : backends) {
        out << "  " << b.name << " (" << to_string(b.source) << "): " << to_string(b.state);
        if (!b.error.empty())
            out << " - " << b.error;
        out << "\n";
    }
    out << "\nProblems: " << (problems.empty() ? "none\n" : std::to_string(problems.size()) + "\n");
    for (const auto& p : problems)
        out << "  [" << to_string(p.severity) << "] " << p.subject << ": " << p.problem
            << "\n      fix: " << p.fix << "\n";
    return out.str();
}

} // namespace switchyard
