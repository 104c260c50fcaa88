// SPDX-License-Identifier: MIT
#include <switchyard/buildinfo.h>
#include <switchyard/diagnosis/cudafatbin.h>
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/doctor/doctor.h>
#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/registry/backendinfoformat.h>
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

DoctorReport::Build collect_build() {
    return {SWITCHYARD_VERSION_STRING,
            SWITCHYARD_GIT_HASH,
            SWITCHYARD_BUILD_TYPE,
            SWITCHYARD_COMPILER,
            kContractVersion,
            {{"SWITCHYARD_ENABLE_GUI", SWITCHYARD_OPTION_GUI},
             {"SWITCHYARD_ENABLE_OPENCL", SWITCHYARD_OPTION_OPENCL},
             {"SWITCHYARD_ENABLE_CUDA", SWITCHYARD_OPTION_CUDA}}};
}

DoctorReport::System collect_system() {
    const auto* ld_path = std::getenv("LD_LIBRARY_PATH");
    return {host_info(), cpu_info(), ld_path ? ld_path : ""};
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
std::vector<DoctorRuntime> collect_runtimes(const std::vector<IcdVendor>& icd_vendors,
                                            const std::vector<VulkanIcd>& vulkan_icds) {
    using Kind = DoctorRuntime::Kind;
    std::vector<DoctorRuntime> runtimes;
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
                {Kind::NvidiaGpu, model, "PCI " + gpu.path().filename().string() + "; " + driver});
        }
    }
    const auto cuda = check_dependency({"libcuda.so.1", DependencyKind::Library, ""});
    runtimes.push_back(
        {Kind::CudaDriver, "libcuda.so.1", cuda.found ? "found at " + cuda.location : "not found"});
    for (const auto& vendor : icd_vendors) {
        const std::string name = vendor.icd_file.empty()
                                     ? vendor.library
                                     : fs::path(vendor.icd_file).filename().string();
        runtimes.push_back({Kind::OpenClIcd, untrusted(name),
                            vendor.ok() ? untrusted(vendor.library) + " (found at " +
                                              untrusted(vendor.resolved.path) + ")"
                                        : vendor.problem});
    }
    for (const auto& icd : vulkan_icds)
        runtimes.push_back({Kind::VulkanIcd, untrusted(fs::path(icd.manifest).filename().string()),
                            icd.ok() ? untrusted(icd.library) + " (found at " +
                                           untrusted(icd.resolved.path) + "; Vulkan " +
                                           untrusted(icd.api_version) + ")"
                                     : icd.problem});
    return runtimes;
}

// A device without the peak figures nobody has measured yet.
json device_json(const DeviceInfo& d) {
    json j = d;
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

// "x86-64-v2 x86-64-v3 (best: x86-64-v3)".
std::string format_isa(const CpuInfo& cpu) {
    return cpu.isa_summary();
}

// "AMD EPYC 7B13 (AMD_ZEN3), 8 physical cores, 16 logical CPUs".
std::string format_cpu(const CpuInfo& cpu) {
    std::string out = cpu.brand;
    if (!cpu.microarchitecture.empty())
        out += " (" + cpu.microarchitecture + ")";
    return out + ", " + std::to_string(cpu.physical_cores) + " physical cores, " +
           std::to_string(cpu.logical_cpus) + " logical CPUs";
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

std::string format_ceiling_value(const Ceiling& c) {
    if (!(c.value > 0))
        return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, c.kind == "compute" ? "%.1f GFLOP/s" : "%.1f GB/s", c.value);
    return buf;
}

std::string format_ceiling_method(const Ceiling& c) {
    return c.measured ? c.method : "theoretical: " + c.method;
}

using Severity = DoctorProblem::Severity;

// An OpenCL vendor whose library the ICD loader cannot load: the platform is silently
// missing from clGetPlatformIDs (and clinfo).
void add_icd_problems(const std::vector<IcdVendor>& vendors, std::vector<DoctorProblem>& problems) {
    const auto& row = cause_entry(BackendCause::IcdLibraryMissing);
    for (const auto& vendor : vendors) {
        if (vendor.ok())
            continue;
        const std::string summary =
            cause_summary(BackendCause::IcdLibraryMissing,
                          vendor.library.empty() ? "no library" : vendor.library);
        problems.push_back(
            {row.severity, vendor.icd_file.empty() ? "OCL_ICD_VENDORS" : untrusted(vendor.icd_file),
             summary + ": " + vendor.problem, std::string(row.fix),
             BackendCause::IcdLibraryMissing});
    }
}

// A Vulkan driver the loader cannot use: its device is silently missing from
// vkEnumeratePhysicalDevices (and vulkaninfo). When that leaves only CPU drivers (lavapipe),
// the user sees only a CPU device, and is told so first.
void add_vulkan_icd_problems(const std::vector<VulkanIcd>& icds,
                             std::vector<DoctorProblem>& problems) {
    const auto& row = cause_entry(BackendCause::VulkanIcdBroken);
    if (const auto only_cpu = vulkan_only_cpu(icds); !only_cpu.empty())
        problems.push_back({row.severity, "Vulkan", only_cpu, std::string(row.fix),
                            BackendCause::VulkanIcdBroken});
    for (const auto& icd : icds) {
        if (icd.ok())
            continue;
        const std::string summary = cause_summary(BackendCause::VulkanIcdBroken,
                                                  icd.library.empty() ? "no library" : icd.library);
        problems.push_back({row.severity, untrusted(icd.manifest), summary + ": " + icd.problem,
                            std::string(row.fix), BackendCause::VulkanIcdBroken});
    }
}

// The compute capability a CUDA device's arch names ("sm_90", "sm_90a" -> 90); 0 otherwise.
int compute_capability(const DeviceInfo& d) {
    if (device_kind(d.kind) != DeviceKind::Cuda || d.arch.rfind("sm_", 0) != 0)
        return 0;
    return std::atoi(d.arch.c_str() + 3);
}

// Plugin libraries that carry CUDA GPU code (a .nv_fatbin section) none of which runs on a
// CUDA device of this machine: gpu_code_missing, one problem per device, before any kernel
// is launched there (the driver would say "no kernel image is available").
void add_gpu_code_problems(const std::vector<BackendInfo>& backends,
                           const std::vector<DeviceInfo>& devices,
                           std::vector<DoctorProblem>& problems) {
    std::vector<CudaDeviceArch> cuda;
    for (const auto& d : devices)
        if (const int cc = compute_capability(d); cc > 0) {
            const std::string driver = d.properties.text_or("driver_version", std::string());
            cuda.push_back({d.id, cc, driver.empty() ? 0 : parse_cuda_version(driver)});
        }
    if (cuda.empty())
        return;
    auto add = [&](BackendCause cause, const std::string& subject, const std::string& missing) {
        const auto& row = cause_entry(cause);
        problems.push_back(
            {row.severity, subject, cause_summary(cause, missing), std::string(row.fix), cause});
    };
    for (const auto& info : backends) {
        if (info.source != BackendSource::Plugin || info.library_path.empty() ||
            info.state == BackendState::Shadowed)
            continue;
        const auto code = read_cuda_gpu_code(info.library_path);
        for (const auto& m : gpu_code_missing(code, cuda))
            add(BackendCause::GpuCodeMissing, info.name, m.message);
        // What the driver must support: the runtime the library links, the PTX it JITs.
        std::vector<std::string> sonames;
        if (info.library_report)
            for (const auto& dep : info.library_report->dependencies)
                sonames.push_back(dep.soname);
        for (const auto& d : driver_too_old(code, sonames, cuda))
            add(BackendCause::DriverTooOld, info.name, d.message);
    }
}

// A device runtime that cannot list its devices: typed where its message names a cause of
// the table (a CUDA driver older than the runtime: driver_too_old), else the runtime's words.
void add_enumeration_problems(DeviceRegistry& devices, std::vector<DoctorProblem>& problems) {
    for (const auto& [kind, message] : devices.enumeration_errors()) {
        const std::string listing =
            "the " + kind + " backend is loaded but listing its devices failed: " + message;
        if (const auto cause = device_kind(kind) == DeviceKind::Cuda ? classify_cuda_error(message)
                                                                     : std::nullopt) {
            // "(this runtime is CUDA 13.0; the driver supports CUDA 12.4)", where the backend
            // could read both.
            std::string missing = "a newer driver than this one";
            if (const auto at = message.find("(this runtime is "); at != std::string::npos)
                missing = message.substr(at + 17, message.find(')', at) - at - 17);
            const auto& row = cause_entry(*cause);
            problems.push_back({row.severity, kind + " devices",
                                cause_summary(*cause, missing) + " (" + listing + ")",
                                std::string(row.fix), *cause});
            continue;
        }
        problems.push_back(
            {Severity::Error, kind + " devices", listing,
             "Check the device's driver and runtime (for CUDA: nvidia-smi, and that libcuda.so.1 "
             "matches the kernel driver); the message above is the runtime's own"});
    }
}

// The rules for one backend: its cause (the registry's cause table, rendered by `explain`),
// its diagnostics, its library's own dependencies.
void add_backend_problems(const BackendInfo& info, std::vector<DoctorProblem>& problems) {
    if (info.cause == BackendCause::OptionalDependencyMissing) {
        // One problem per missing dependency, each with its own install hint.
        const auto& row = cause_entry(info.cause);
        for (const auto& d : info.dependencies)
            if (!d.found)
                problems.push_back({row.severity, info.name,
                                    "optional dependency " + untrusted(d.dependency.name) + " (" +
                                        std::string(to_string(d.dependency.kind)) + ") is missing" +
                                        (d.detail.empty() ? "" : ": " + untrusted(d.detail)),
                                    d.dependency.hint.empty() ? std::string(row.fix)
                                                              : untrusted(d.dependency.hint),
                                    info.cause});
    } else if (info.cause != BackendCause::None && info.cause != BackendCause::NotInstalled) {
        const CauseText why = explain(info);
        const std::string where =
            info.cause == BackendCause::Shadowed ? " (" + untrusted(info.manifest_path) + ")" : "";
        problems.push_back({why.severity, info.name,
                            (why.details.empty() ? why.summary : why.details) + where, why.fix,
                            info.cause});
    }
    if (info.state == BackendState::Invalid || info.state == BackendState::Shadowed)
        return;
    for (const auto& d : info.diagnostics)
        problems.push_back({Severity::Warning, info.name, untrusted(d),
                            "The manifest and the library disagree: update the plugin",
                            BackendCause::None});
    if (!info.library_report || info.cause == BackendCause::LibraryDependencyMissing ||
        info.cause == BackendCause::LibraryNotElf)
        return;
    for (const auto& dep : info.library_report->dependencies) {
        if (dep.found())
            continue;
        problems.push_back({Severity::Error, info.name,
                            "its library needs " + untrusted(dep.soname) + " (needed by " +
                                untrusted(dep.needed_by) +
                                "), which the dynamic loader cannot find; " + untrusted(dep.detail),
                            missing_library_fix(dep.soname),
                            BackendCause::LibraryDependencyMissing});
    }
}

// A multi-line text from a file (a library's dependency report), each line escaped.
std::string untrusted_lines(const std::string& text) {
    return text::join(text::split(text, "\n", true), "\n",
                      [](const std::string& line) { return untrusted(line); });
}

// A Markdown table cell: no pipes, no line breaks, each line escaped (`untrusted`: a cell
// may hold what a manifest, a library or the system said; escaping is idempotent, so text
// escaped before stays as it was).
std::string cell(std::string text) {
    std::string out;
    bool first = true;
    for (const auto& line : text::split(text, "\n", true)) {
        if (!first)
            out += "<br>";
        first = false;
        for (char c : untrusted(line)) {
            if (c == '|')
                out += "\\|";
            else
                out += c;
        }
    }
    return out;
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

std::string_view to_string(DoctorRuntime::Kind kind) noexcept {
    switch (kind) {
    case DoctorRuntime::Kind::NvidiaGpu:
        return "nvidia-gpu";
    case DoctorRuntime::Kind::CudaDriver:
        return "cuda-driver";
    case DoctorRuntime::Kind::OpenClIcd:
        return "opencl-icd";
    case DoctorRuntime::Kind::VulkanIcd:
        return "vulkan-icd";
    }
    return "cuda-driver";
}

json DoctorRuntime::to_json() const {
    return {{"kind", std::string(switchyard::to_string(kind))}, {"name", name}, {"detail", detail}};
}

bool DoctorReport::has_errors() const {
    return std::any_of(problems.begin(), problems.end(), [](const DoctorProblem& p) {
        return p.severity == DoctorProblem::Severity::Error;
    });
}

DoctorReport DoctorReport::collect(BackendRegistry& registry, DeviceRegistry& devices,
                                   const PluginSearchPath& path) {
    // Collect: typed facts only.
    DoctorReport report;
    report.build = collect_build();
    report.system = collect_system();
    report.devices = collect_devices(devices);
    report.icd_vendors = find_icd_vendors();
    report.vulkan_icds = find_vulkan_icds();
    report.runtimes = collect_runtimes(report.icd_vendors, report.vulkan_icds);
    report.search_path = path.scan(); // what discovery finds where (no manifest read again)
    // In detail: each plugin library's ELF dependencies are read (not loaded), and what
    // they show is stored in the registry.
    report.backends = registry.infos(InfoDetail::Full);
    for (auto& info : report.backends) {
        if (info.state == BackendState::Shadowed)
            info.library_report.reset(); // not the library in use
        if (info.library_report)
            report.libraries.push_back(*info.library_report);
    }

    // Rules: each fact that is wrong becomes a problem with its fix.
    for (const auto& w : path.warnings())
        report.problems.push_back({Severity::Warning, "SWITCHYARD_PLUGIN_PATH", w,
                                   "Remove the entry, or write the folder as an absolute path"});
    for (const auto& scan : report.search_path)
        if (!scan.problem.empty())
            report.problems.push_back({Severity::Error, scan.dir.path,
                                       "plugins in this folder are refused: " + scan.problem,
                                       "Do what the message says for the component it names, "
                                       "or take the folder off the plugin path",
                                       BackendCause::Untrusted});
    for (const auto& info : report.backends)
        add_backend_problems(info, report.problems);
    add_icd_problems(report.icd_vendors, report.problems);
    add_vulkan_icd_problems(report.vulkan_icds, report.problems);
    add_gpu_code_problems(report.backends, report.devices, report.problems);
    add_enumeration_problems(devices, report.problems);
    std::stable_sort(
        report.problems.begin(), report.problems.end(),
        [](const DoctorProblem& a, const DoctorProblem& b) { return a.severity < b.severity; });
    return report;
}

json DoctorReport::to_json() const {
    json options = json::object();
    for (const auto& [name, value] : build.options)
        options[name] = value;
    const json build_row = {{"version", build.version},
                            {"git_hash", build.git_hash},
                            {"build_type", build.build_type},
                            {"compiler", build.compiler},
                            {"contract_version", build.contract_version},
                            {"options", options}};
    const json system_row = {{"host", system.host.to_json()},
                             {"cpu", system.cpu.to_json()},
                             {"ld_library_path", system.ld_library_path}};
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
    for (const auto& b : backends)
        backend_rows.push_back(detail_json(b));
    json device_rows = json::array();
    for (const auto& d : devices)
        device_rows.push_back(device_json(d));
    json runtime_rows = json::array();
    for (const auto& r : runtimes)
        runtime_rows.push_back(r.to_json());
    json problem_rows = json::array();
    for (const auto& p : problems)
        problem_rows.push_back({{"severity", std::string(to_string(p.severity))},
                                {"subject", p.subject},
                                {"cause", p.cause},
                                {"problem", p.problem},
                                {"fix", p.fix}});
    return {
        {"format", "switchyard.doctor"}, {"format_version", 1},      {"switchyard", build_row},
        {"system", system_row},          {"devices", device_rows},   {"runtimes", runtime_rows},
        {"plugin_path", scans},          {"backends", backend_rows}, {"vulkan_icds", vulkan_icds},
        {"problems", problem_rows},      {"ok", !has_errors()}};
}

std::string DoctorReport::to_markdown() const {
    std::ostringstream md;
    md << "# Switchyard doctor report\n\n";
    md << "Generated " << text::utc_now_iso8601() << ".\n\n";
    md << "## Switchyard\n\n| | |\n|---|---|\n";
    md << "| Version | " << build.version << " (git " << build.git_hash << ") |\n";
    md << "| Build type | " << build.build_type << " |\n";
    md << "| Compiler | " << build.compiler << " |\n";
    md << "| Backend contract | " << build.contract_version << " |\n";
    std::string options;
    for (const auto& [name, value] : build.options)
        options += (options.empty() ? "" : ", ") + name + "=" + value;
    md << "| Build options | " << cell(options) << " |\n\n";
    const auto& host = system.host;
    const auto& cpu = system.cpu;
    md << "## System\n\n| | |\n|---|---|\n";
    md << "| OS | " << cell(host.distro) << " |\n";
    md << "| Kernel | " << cell(host.os) << " |\n";
    md << "| Host | " << cell(host.hostname) << " |\n";
    md << "| CPU | " << cell(format_cpu(cpu)) << " |\n";
    md << "| Caches | " << cell(cpu.caches_summary()) << " |\n";
    if (!cpu.cache_note.empty())
        md << "| Caches assumed | " << cell(cpu.cache_note) << " |\n";
    md << "| ISA levels | " << cell(format_isa(cpu)) << " |\n";
    md << "| CPU features | " << cell(text::join(cpu.features, " ")) << " |\n";
    md << "| Memory | " << (host.memory_bytes >> 20) << " MiB |\n";
    md << "| Governor | " << (host.governor.empty() ? "(not readable)" : cell(host.governor))
       << " |\n";
    md << "| LD_LIBRARY_PATH | " << cell(system.ld_library_path) << " |\n\n";
    md << "## Devices\n\n| Id | Name | Arch | Peaks |\n|---|---|---|---|\n";
    for (const auto& d : devices) {
        const auto peaks = format_peaks(d);
        md << "| " << d.id << " | " << cell(d.name) << " | " << cell(d.arch) << " | "
           << (peaks.empty() ? "not measured" : peaks) << " |\n";
    }
    for (const auto& d : devices) {
        if (d.ceilings.empty())
            continue;
        md << "\n### Ceilings of " << d.id
           << "\n\n| Id | Level | Value | Method |\n|---|---|---|---|\n";
        for (const auto& c : d.ceilings)
            md << "| " << c.id << " | " << (c.level.empty() ? "-" : c.level) << " | "
               << format_ceiling_value(c) << " | " << cell(format_ceiling_method(c)) << " |\n";
    }
    md << "\n## Drivers and runtimes\n\n| Kind | Name | Detail |\n|---|---|---|\n";
    for (const auto& r : runtimes)
        md << "| " << to_string(r.kind) << " | " << cell(r.name) << " | " << cell(r.detail)
           << " |\n";
    md << "\n## Plugin search path\n\n| # | Folder | From | Status |\n|---|---|---|---|\n";
    for (std::size_t i = 0; i < search_path.size(); ++i)
        md << "| " << i + 1 << " | `" << untrusted(search_path[i].dir.path) << "` | "
           << search_path[i].dir.origin << " | " << cell(scan_status(search_path[i])) << " |\n";
    for (const auto& s : search_path)
        for (const auto& m : s.manifests)
            md << "\n- `" << untrusted(m) << "`";
    md << "\n\n## Backends\n\n| Backend | Source | State | Cause | Version | Details "
          "|\n|---|---|---|---|---|---|\n";
    for (const auto& b : backends)
        md << "| " << cell(b.name) << " | " << to_string(b.source) << " | " << to_string(b.state)
           << " | " << (b.cause == BackendCause::None ? "-" : to_string(b.cause)) << " | "
           << cell(b.version) << " | " << cell(backend_details(b)) << " |\n";
    for (const auto& b : backends) {
        if (b.dependencies.empty())
            continue;
        md << "\n### " << untrusted(b.name)
           << ": optional dependencies\n\n| Dependency | Kind | Found | Where / why | Hint |\n"
           << "|---|---|---|---|---|\n";
        for (const auto& d : b.dependencies)
            md << "| " << cell(d.dependency.name) << " | " << to_string(d.dependency.kind) << " | "
               << (d.found ? "yes" : "**no**") << " | " << cell(d.found ? d.location : d.detail)
               << " | " << cell(d.dependency.hint) << " |\n";
    }
    for (const auto& lib : libraries) {
        md << "\n### `" << untrusted(lib.library) << "`: library dependencies\n\n```\n"
           << untrusted_lines(lib.to_text()) << "```\n";
    }
    md << "\n## Problems (" << problems.size() << ")\n\n";
    if (problems.empty())
        md << "None found.\n";
    for (std::size_t i = 0; i < problems.size(); ++i)
        md << i + 1 << ". **" << to_string(problems[i].severity) << "** `"
           << untrusted(problems[i].subject) << "`: " << problems[i].problem << "  \n   *Fix:* "
           << problems[i].fix << "\n";
    return md.str();
}

std::string DoctorReport::to_text() const {
    std::ostringstream out;
    out << "Switchyard " << build.version << " (git " << build.git_hash << ", " << build.build_type
        << ", " << build.compiler << ")\n";
    const auto& host = system.host;
    const auto& cpu = system.cpu;
    out << "System:    " << host.distro << "; " << host.os << "\n";
    out << "CPU:       " << format_cpu(cpu) << "\n";
    out << "Caches:    " << cpu.caches_summary() << "\n";
    if (!cpu.cache_note.empty())
        out << "           (" << cpu.cache_note << ")\n";
    out << "ISA:       " << format_isa(cpu) << "\n";
    out << "Memory:    " << (host.memory_bytes >> 20) << " MiB\n";
    out << "\nDevices:\n";
    for (const auto& d : devices) {
        const auto peaks = format_peaks(d);
        out << "  " << d.id << ": " << d.name << " [" << d.arch << "]"
            << (peaks.empty() ? "" : " - " + peaks) << "\n";
        if (d.ceilings.empty()) {
            out << "    ceilings: not measured (`switchyard-cli doctor --probe` or `hardware` "
                   "measures them)\n";
            continue;
        }
        std::size_t width = 0;
        for (const auto& c : d.ceilings)
            width = std::max(width, c.id.size());
        for (const auto& c : d.ceilings) {
            const auto value = format_ceiling_value(c);
            out << "    " << c.id << std::string(width - c.id.size() + 2, ' ')
                << (c.level.empty() ? "-" : c.level) << "  " << value << "  "
                << format_ceiling_method(c) << "\n";
        }
    }
    out << "\nDrivers and runtimes:\n";
    for (const auto& r : runtimes)
        out << "  " << to_string(r.kind) << ": " << r.name << " - " << r.detail << "\n";
    out << "\nPlugin search path:\n";
    for (std::size_t i = 0; i < search_path.size(); ++i)
        out << "  " << i + 1 << ". " << untrusted(search_path[i].dir.path) << " ["
            << search_path[i].dir.origin << "]: " << scan_status(search_path[i]) << "\n";
    out << "\nBackends:\n";
    for (const auto& b : backends)
        out << "  " << summary_line(b) << "\n";
    out << "\nProblems: " << (problems.empty() ? "none\n" : std::to_string(problems.size()) + "\n");
    for (const auto& p : problems)
        out << "  [" << to_string(p.severity) << "] " << untrusted(p.subject) << ": " << p.problem
            << "\n      fix: " << p.fix << "\n";
    return out.str();
}

} // namespace switchyard
