// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendregistry.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/sdk/device.h>
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/plugins/pluginsearchpath.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace switchyard {

/// One thing wrong on this machine, and what to do about it.
struct DoctorProblem {
    enum class Severity { Error, Warning, Info };
    Severity severity = Severity::Error;
    std::string subject; // a backend name, a folder, a library
    std::string problem;
    std::string fix;
};
std::string_view to_string(DoctorProblem::Severity severity) noexcept;

/// The whole machine in one report a support engineer can paste into a ticket
/// (`switchyard-cli doctor`). Collecting it opens no plugin library: plugin libraries'
/// dependencies are read from their ELF files (ElfDependencyResolver).
struct DoctorReport {
    nlohmann::json build;  // version, git hash, build type, compiler, options
    nlohmann::json system; // {"host": HostInfo, "cpu": CpuInfo, "ld_library_path"}
    /// What DeviceRegistry lists. Peaks are reported only when this process already
    /// measured them (collecting never runs the probes); 0 means unknown.
    std::vector<DeviceInfo> devices;
    /// Drivers and runtimes found without loading them (NVIDIA kernel driver, libcuda,
    /// OpenCL ICDs): {"kind", "name", "detail"}.
    nlohmann::json runtimes = nlohmann::json::array();
    std::vector<PluginDirectoryScan> search_path;
    std::vector<BackendInfo> backends;
    std::vector<ElfDependencyReport> libraries; // one per plugin library that exists
    std::vector<DoctorProblem> problems;

    /// True when some problem is an error (the CLI exits 1).
    bool has_errors() const;

    nlohmann::json to_json() const;
    std::string to_markdown() const;
    std::string to_text() const;

    /// Examines `registry` (initialising it, loading nothing) and `path`.
    static DoctorReport collect(BackendRegistry& registry, DeviceRegistry& devices,
                                const PluginSearchPath& path);
};

} // namespace switchyard
