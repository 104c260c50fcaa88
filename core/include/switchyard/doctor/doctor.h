// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/diagnosis/openclicd.h>
#include <switchyard/diagnosis/vulkanicd.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/sdk/device.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace switchyard {

/// One thing wrong on this machine, and what to do about it.
struct SWITCHYARD_CORE_EXPORT DoctorProblem {
    using Severity = switchyard::Severity; // the cause table's (registry/backendcause.h)
    Severity severity = Severity::Error;
    std::string subject; // a backend name, a folder, a library
    std::string problem;
    std::string fix;
    BackendCause cause = BackendCause::None; // when the subject is a backend (or its folder)
};

/// A driver or runtime found without loading it, for devices whose backend is not loaded.
struct SWITCHYARD_CORE_EXPORT DoctorRuntime {
    enum class Kind { NvidiaGpu, CudaDriver, OpenClIcd, VulkanIcd };
    Kind kind = Kind::CudaDriver;
    std::string name;   // the GPU model, the library's soname, the ICD file's name
    std::string detail; // where it is, or that it is not found
    /// {"kind": "nvidia-gpu" | "cuda-driver" | "opencl-icd" | "vulkan-icd", "name", "detail"}.
    nlohmann::json to_json() const;
};
/// "nvidia-gpu", "cuda-driver", "opencl-icd", "vulkan-icd".
SWITCHYARD_CORE_EXPORT std::string_view to_string(DoctorRuntime::Kind kind) noexcept;

/// The whole machine in one report a support engineer can paste into a ticket
/// (`switchyard-cli doctor`). Collecting it opens no plugin library: plugin libraries'
/// dependencies are read from their ELF files (ElfDependencyResolver).
struct SWITCHYARD_CORE_EXPORT DoctorReport {
    /// How this Switchyard was built.
    struct Build {
        std::string version;
        std::string git_hash;
        std::string build_type;
        std::string compiler;
        int contract_version = 0;
        std::vector<std::pair<std::string, std::string>> options; // SWITCHYARD_ENABLE_*, in order
    };
    /// The machine, as `switchyard-cli hardware` sees it (no probe runs).
    struct System {
        HostInfo host;
        CpuInfo cpu;
        std::string ld_library_path;
    };

    Build build;
    System system;
    /// What DeviceRegistry lists. Peaks are reported only when this process already
    /// measured them (collecting never runs the probes); 0 means unknown.
    std::vector<DeviceInfo> devices;
    /// Drivers and runtimes found without loading them (NVIDIA kernel driver, libcuda,
    /// OpenCL ICDs).
    std::vector<DoctorRuntime> runtimes;
    /// The OpenCL ICD loader's vendors (`/etc/OpenCL/vendors`, `OCL_ICD_VENDORS`), each
    /// library resolved and its dependencies read; one that cannot load is a problem
    /// (`icd_library_missing`). Also listed in `runtimes` as "opencl-icd".
    std::vector<IcdVendor> icd_vendors;
    /// The Vulkan loader's driver manifests (VulkanIcdSearch: `VK_DRIVER_FILES`,
    /// `VK_ADD_DRIVER_FILES`, the icd.d folders), each library resolved and put through the
    /// load simulation; one the loader cannot use is a problem (`vulkan_icd_broken`), and so
    /// is "Vulkan sees only a CPU device" when a GPU vendor's is among them. Also listed in
    /// `runtimes` as "vulkan-icd", and in the JSON as "vulkan_icds".
    std::vector<VulkanIcd> vulkan_icds;
    std::vector<PluginDirectoryScan> search_path;
    std::vector<BackendInfo> backends;
    std::vector<ElfDependencyReport> libraries; // one per plugin library that exists
    std::vector<DoctorProblem> problems;

    /// True when some problem is an error (the CLI exits 1).
    bool has_errors() const;

    /// {"format": "switchyard.doctor", "format_version": 1, ...} (docs/json.md).
    nlohmann::json to_json() const;
    std::string to_markdown() const;
    std::string to_text() const;

    /// Collect, then rules: examines `registry` (initialising it, describing every backend
    /// in detail, loading nothing) and `path`, then derives the problems.
    static DoctorReport collect(BackendRegistry& registry, DeviceRegistry& devices,
                                const PluginSearchPath& path);
};

} // namespace switchyard
