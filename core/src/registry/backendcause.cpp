// SPDX-License-Identifier: MIT
#include <switchyard/registry/backendcause.h>

#include "util/jsonread.h"

#include <nlohmann/json.hpp>

#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

namespace switchyard {
namespace {

using C = BackendCause;
using S = Severity;

constexpr std::string_view kLibraryFix =
    "Install the package that provides {soname} (Debian: `apt-file search {soname}`), or add "
    "the folder that holds it to LD_LIBRARY_PATH";
constexpr std::string_view kReportToAuthor =
    "Report it to the plugin's author, with the details below";

// The one table: id, severity, summary, fix. docs/plugins.md lists the same rows.
constexpr CauseEntry kCauses[] = {
    {C::None, "none", S::Info, "", ""},
    {C::NotInstalled, "not_installed", S::Error, "no backend of this name is installed",
     "See `switchyard-cli list --all --include-unavailable` for the installed backends"},
    {C::LibraryMissing, "library_missing", S::Error, "its library {library} does not exist",
     "Reinstall the plugin, or remove its manifest {manifest}"},
    {C::LibraryUnreadable, "library_unreadable", S::Error, "its library {library} cannot be read",
     "Make the library readable (`chmod a+r {library}`), or reinstall the plugin"},
    {C::LibraryNotElf, "library_not_elf", S::Error,
     "its library {library} is not a shared library for this machine",
     "Reinstall the plugin, built for this machine"},
    {C::LibraryDependencyMissing, "library_dependency_missing", S::Error,
     "its library needs {missing}, which the dynamic loader cannot find", kLibraryFix},
    {C::LibraryLoadFailed, "library_load_failed", S::Error, "its library {library} fails to load",
     "Reinstall or update the plugin"},
    {C::EntryMissing, "entry_missing", S::Error, "its library has no Switchyard entry point",
     "Rebuild the plugin with SWITCHYARD_PLUGIN(...) from <switchyard/sdk/plugin.h>"},
    {C::EntryContractTooNew, "entry_contract_too_new", S::Error,
     "its library speaks a newer plugin contract than this Switchyard (contract "
     "{core_contract})",
     "Upgrade Switchyard, or install a build of the plugin made for this version"},
    {C::EntryContractTooOld, "entry_contract_too_old", S::Error,
     "its library was built against an SDK this Switchyard no longer loads",
     "Rebuild the plugin against this Switchyard's SDK, or install a build of it made for this "
     "version"},
    {C::ContractTooNew, "contract_too_new", S::Warning,
     "contract {contract} needs a newer Switchyard (this one implements {core_contract})",
     "Upgrade Switchyard, or install a build of the plugin for contract {core_contract}"},
    {C::CoreTooNew, "core_too_new", S::Warning,
     "needs Switchyard {max_core} or older (this is {core_version})",
     "Install a newer build of the plugin, or a Switchyard it supports"},
    {C::CoreTooOld, "core_too_old", S::Warning,
     "needs Switchyard {min_core} or newer (this is {core_version})",
     "Upgrade Switchyard, or install an older build of the plugin"},
    {C::RegisterHookThrew, "register_hook_threw", S::Error,
     "its register hook failed; nothing it registered was kept", kReportToAuthor},
    {C::Untrusted, "untrusted", S::Error,
     "it is not loaded: a file or folder of it can be written by other users",
     "Do what the details say for the component they name (chmod only what you own), or move "
     "the plugin to a folder only you or root can write"},
    {C::InvalidManifest, "invalid_manifest", S::Error, "its manifest {manifest} is invalid",
     "Fix the key the details name in {manifest}, or remove the manifest"},
    {C::Shadowed, "shadowed", S::Info, "shadowed by {shadowed_by}",
     "Remove the plugin you do not want, or rename one of them in its manifest"},
    {C::OptionalDependencyMissing, "optional_dependency_missing", S::Warning, "missing {missing}",
     "No install hint declared for it; ask the plugin's author"},
    {C::HookExited, "hook_exited", S::Error,
     "loading it ends the process (its register hook or a library constructor calls exit)",
     "Report it to the plugin's author; Switchyard never loads it in its own process"},
    {C::HookCrashed, "hook_crashed", S::Error,
     "loading it crashes (a signal in dlopen or in its register hook)",
     "Reinstall the plugin (a damaged library crashes the loader), or report it to its author"},
    {C::HookTimedOut, "hook_timed_out", S::Error, "its register hook does not return",
     kReportToAuthor},
    {C::SymbolVersionMissing, "symbol_version_missing", S::Error,
     "its library needs {missing}, a version its provider does not define",
     "The plugin was built with a newer toolchain than this system has: rebuild it on this "
     "release, or install the newer runtime that defines the version"},
    {C::UndefinedSymbol, "undefined_symbol", S::Error,
     "its library imports {missing}, which nothing it loads defines",
     "The plugin was built against a newer SDK or library than this machine has: install a "
     "build of the plugin made for this Switchyard ({core_version}), or upgrade what it was "
     "built against"},
    {C::WrongArchitecture, "wrong_architecture", S::Error,
     "its library {library} is {missing}, not for this machine",
     "Install the build of the plugin made for this machine's architecture"},
    {C::IsaUnsupported, "isa_unsupported", S::Error,
     "its library needs {missing}, which this CPU does not reach",
     "Install a build of the plugin for this CPU's x86-64 level (or for a lower one), or "
     "raise SWITCHYARD_MAX_ISA if it caps the level below the CPU's"},
    {C::GpuCodeMissing, "gpu_code_missing", S::Warning, "its library {missing}",
     "Install a build of the plugin compiled for this GPU's architecture (nvcc -gencode "
     "arch=compute_XX,code=sm_XX), or one that carries PTX the driver can compile"},
    {C::DriverTooOld, "driver_too_old", S::Warning, "it needs {missing}",
     "Upgrade the NVIDIA driver, or install a build of the plugin made for an older CUDA"},
    {C::IcdLibraryMissing, "icd_library_missing", S::Warning,
     "the OpenCL ICD file names {missing}, which the ICD loader cannot load",
     "Install the vendor's OpenCL runtime package that provides the library, or remove the "
     "stale .icd file"},
    {C::LibraryTruncated, "library_truncated", S::Error,
     "its library {library} is cut off: {missing}",
     "The file is shorter than its headers say: the copy or download was cut; reinstall the "
     "plugin"},
    {C::LibraryNotLoadable, "library_not_loadable", S::Error,
     "its library {library} is not a shared library the loader can open: it is {missing}",
     "Reinstall the plugin: its manifest must name the plugin's shared library, built for this "
     "machine"},
    {C::StaticTlsExhausted, "static_tls_exhausted", S::Error,
     "its library needs {missing}: more static TLS than the loader has left",
     "Load the library named in the details when the process starts (`LD_PRELOAD=` it), or raise "
     "glibc's static TLS surplus (`GLIBC_TUNABLES=glibc.rtld.optional_static_tls=` the bytes the "
     "details give)"},
    {C::VulkanIcdBroken, "vulkan_icd_broken", S::Warning,
     "the Vulkan driver manifest names {missing}, which the Vulkan loader cannot use",
     "Install the vendor's Vulkan driver package that provides the library (Debian: "
     "mesa-vulkan-drivers for Mesa's, nvidia-vulkan-icd for NVIDIA's), or remove the stale "
     "manifest; `vulkaninfo --summary` then lists the device"},
};

static_assert(std::size(kCauses) == std::size_t(C::VulkanIcdBroken) + 1,
              "one row per BackendCause, in declaration order");

constexpr bool in_declaration_order() {
    for (std::size_t i = 0; i < std::size(kCauses); ++i)
        if (std::size_t(kCauses[i].cause) != i)
            return false;
    return true;
}
static_assert(in_declaration_order(), "kCauses[i].cause == BackendCause(i)");

} // namespace

std::string_view to_string(Severity severity) noexcept {
    switch (severity) {
    case Severity::Error:
        return "error";
    case Severity::Warning:
        return "warning";
    case Severity::Info:
        return "info";
    }
    return "error";
}

std::span<const CauseEntry> cause_table() noexcept {
    return kCauses;
}

const CauseEntry& cause_entry(BackendCause cause) noexcept {
    const auto i = std::size_t(cause);
    return i < std::size(kCauses) ? kCauses[i] : kCauses[0];
}

std::string_view to_string(BackendCause cause) noexcept {
    return cause_entry(cause).id;
}

std::optional<BackendCause> backend_cause_from_string(std::string_view id) noexcept {
    for (const auto& row : kCauses)
        if (row.id == id)
            return row.cause;
    return std::nullopt;
}

std::vector<BackendCause> all_backend_causes() {
    std::vector<BackendCause> out;
    for (const auto& row : kCauses)
        out.push_back(row.cause);
    return out;
}

void to_json(nlohmann::json& j, BackendCause cause) {
    j = std::string(to_string(cause));
}

void from_json(const nlohmann::json& j, BackendCause& cause) {
    cause = jsonread::Value(j, "cause").id_as("backend cause", backend_cause_from_string);
}

} // namespace switchyard
