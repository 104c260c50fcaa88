// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/cudafatbin.h>
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/plugins/pluginprovider.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/sdk/plugin.h>

#include "util/safefile.h"
#include "util/textutil.h"

#include <cerrno>
#include <cstring>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace {

using text::basename_of;
using text::dirname_of;
using text::join;

// The folder, the manifest and the library must not be writable by other users.
std::string check_trust(const std::string& manifest_path, const std::string& library_path) {
    if (auto why = untrusted_reason(dirname_of(manifest_path), "plugin folder"); !why.empty())
        return why;
    if (auto why = untrusted_reason(manifest_path, "manifest"); !why.empty())
        return why;
    if (::access(library_path.c_str(), F_OK) == 0)
        if (auto why = untrusted_reason(library_path, "library"); !why.empty())
            return why;
    return {};
}

} // namespace

PluginProvider::PluginProvider(std::string manifest_path)
    : m_manifest_path(std::move(manifest_path)), m_manifest(PluginManifest::read(m_manifest_path)) {
    if (m_manifest.is_valid())
        m_untrusted = check_trust(m_manifest_path, library_path());
    else
        m_untrusted = check_trust(m_manifest_path, {});
}

PluginProvider::PluginProvider(std::string manifest_path, PluginManifest manifest,
                               std::string untrusted_reason,
                               std::shared_ptr<LibraryInspections> inspections)
    : m_manifest_path(std::move(manifest_path)), m_manifest(std::move(manifest)),
      m_untrusted(std::move(untrusted_reason)), m_inspections(std::move(inspections)) {}

std::optional<ElfDependencyReport> LibraryInspections::get(const std::string& library,
                                                           const struct stat& st) {
    Key key{library,
            static_cast<unsigned long long>(st.st_dev),
            static_cast<unsigned long long>(st.st_ino),
            static_cast<unsigned long long>(st.st_size),
            static_cast<long long>(st.st_mtim.tv_sec),
            static_cast<long long>(st.st_mtim.tv_nsec)};
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_reports.find(key); it != m_reports.end())
            return it->second;
    }
    auto report = diagnose_library(library); // reads files: outside the lock
    std::lock_guard lock(m_mutex);
    return m_reports.emplace(std::move(key), std::move(report)).first->second;
}

PluginProvider::~PluginProvider() = default; // the library stays mapped (RTLD_NODELETE)

std::string PluginProvider::library_path() const {
    const auto& library = m_manifest.library;
    if (library.empty())
        return {};
    // A value the manifest reader refused (a path, "..") is shown as the manifest wrote it,
    // never joined to the folder: such a manifest is invalid and its library never opened.
    if (library.find('/') != std::string::npos || library == "." || library == "..")
        return library;
    return dirname_of(m_manifest_path) + "/" + library;
}

std::string PluginProvider::name() const {
    if (!m_manifest.name.empty())
        return m_manifest.name;
    auto file = basename_of(m_manifest_path);
    if (is_manifest_file_name(file))
        file.resize(file.size() - kManifestSuffix.size());
    return file;
}

BackendInfo PluginProvider::describe() const {
    BackendInfo info;
    info.name = name();
    info.source = BackendSource::Plugin;
    info.manifest_path = m_manifest_path;
    info.library_path = library_path();
    info.extra = m_manifest.extra;
    if (!m_manifest.is_valid()) {
        // Untrusted wins: fixing the manifest would not make such a plugin load.
        info.state = BackendState::Invalid;
        info.cause = m_untrusted.empty() ? BackendCause::InvalidManifest : BackendCause::Untrusted;
        info.error = "invalid manifest " + m_manifest_path + ": " + join(m_manifest.errors, "; ");
        if (!m_untrusted.empty())
            info.error += "; also " + m_untrusted;
        return info;
    }
    info.version = m_manifest.version;
    info.description = m_manifest.description;
    info.tags = m_manifest.tags;
    info.capabilities = m_manifest.capabilities;
    info.declared_kernels = m_manifest.kernels;
    info.declared_components = m_manifest.components;
    info.provides_devices = m_manifest.provides_devices;
    if (!m_untrusted.empty()) {
        info.state = BackendState::Invalid;
        info.cause = BackendCause::Untrusted;
        info.error = "not loaded because " + m_untrusted;
        return info;
    }
    if (is_loaded()) {
        info.state = BackendState::Loaded;
        return info;
    }
    // What can be known without loading: the library file is there and readable.
    if (auto problem = library_file_problem()) {
        info.state = BackendState::Failed;
        info.cause = problem->cause();
        info.error = problem->what();
        return info;
    }
    info.state = BackendState::Discovered;
    return info;
}

std::optional<BackendLoadError> PluginProvider::library_file_problem() const {
    const auto library = library_path();
    struct stat st {};
    if (::stat(library.c_str(), &st) != 0)
        return BackendLoadError(
            name(), BackendLoadError::Cause::LibraryMissing,
            "its library " + m_manifest.library + " is missing: " + library + " (named by " +
                m_manifest_path +
                ") does not exist. Reinstall the plugin, or remove its manifest.");
    if (!S_ISREG(st.st_mode))
        return BackendLoadError(name(), BackendLoadError::Cause::LibraryUnreadable,
                                "its library " + library + " is " + safefile::kind_of(st.st_mode) +
                                    ", not a regular file. Reinstall the plugin.");
    if (::access(library.c_str(), R_OK) != 0)
        return BackendLoadError(name(), BackendLoadError::Cause::LibraryUnreadable,
                                "its library " + library +
                                    " cannot be read: " + std::strerror(errno) +
                                    ". Reinstall the plugin, or fix the file's permissions.");
    return std::nullopt;
}

std::optional<ElfDependencyReport> PluginProvider::inspect_library() const {
    const auto library = library_path();
    struct stat st {};
    // Only a regular file is read: a FIFO or a device named as the library never blocks us.
    if (library.empty() || ::stat(library.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt;
    if (m_inspections)
        return m_inspections->get(library, st);
    return diagnose_library(library);
}

void PluginProvider::fail(BackendLoadError::Cause cause, const std::string& reason) const {
    throw BackendLoadError(name(), cause, reason);
}

void PluginProvider::load(CellRegistrar& registrar) {
    std::lock_guard lock(m_mutex);
    if (is_loaded())
        return;
    if (!m_manifest.is_valid())
        fail(BackendLoadError::Cause::InvalidManifest,
             "its manifest " + m_manifest_path + " is invalid: " + join(m_manifest.errors, "; "));
    const auto library = library_path();
    // Checked again now: the files may have changed since discovery.
    const auto untrusted =
        m_untrusted.empty() ? check_trust(m_manifest_path, library) : m_untrusted;
    if (!untrusted.empty())
        fail(BackendLoadError::Cause::Untrusted, "it is not loaded because " + untrusted);
    // Never run plugin code for a contract or core range this core refuses.
    check_contract(m_manifest.capabilities, name());

    if (auto problem = library_file_problem())
        throw *problem;

    if (!m_handle) {
        ::dlerror();
        void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!handle) {
            const char* raw = ::dlerror();
            const std::string dl = raw ? raw : "unknown dlopen error";
            // Tell a missing dependency apart from a broken library, by reading the ELF
            // dependencies the way the loader does.
            const auto report = diagnose_library(library);
            const auto classified = classify_dlopen_error(dl, library);
            // Another architecture first: its dependencies resolve to nothing here, and
            // naming them would send the user after libraries that are not the problem.
            if (classified == BackendCause::WrongArchitecture)
                fail(*classified,
                     "its library " + library + " fails to load: " +
                         (report.load_problems.empty() ? std::string("it is not for this machine")
                                                       : report.load_problems.front().message) +
                         ". Reason: " + dl);
            auto missing = report.unresolved_with_requester();
            if (missing.empty() && dl.find("cannot open shared object file") != std::string::npos &&
                dl.rfind(library, 0) != 0)
                missing.push_back(dl.substr(0, dl.find(':')));
            if (!missing.empty())
                fail(BackendLoadError::Cause::LibraryDependencyMissing,
                     missing_libraries_message(library, missing) + " Reason: " + dl);
            // The loader's message, typed: a missing symbol version, an undefined symbol,
            // another architecture or ISA level each have their own cause and fix; the
            // simulation's reading of the same files says what exactly is missing where.
            if (const auto cause = classified) {
                std::string what;
                for (const auto& p : report.load_problems)
                    if (p.cause == *cause)
                        what += (what.empty() ? "" : "; ") + p.message;
                fail(*cause, "its library " + library + " fails to load: " +
                                 (what.empty() ? std::string(to_string(*cause)) : what) +
                                 ". Reason: " + dl);
            }
            fail(BackendLoadError::Cause::LibraryLoadFailed,
                 "its library " + library + " fails to load. Reason: " + dl);
        }
        ::dlerror();
        void* symbol = ::dlsym(handle, kPluginEntrySymbol);
        if (!symbol) {
            ::dlclose(handle);
            fail(BackendLoadError::Cause::EntryMissing,
                 "its library " + library + " exports no '" + std::string(kPluginEntrySymbol) +
                     "' symbol: it is not a Switchyard plugin, or was built without "
                     "SWITCHYARD_PLUGIN(...)");
        }
        const auto entry_fn = reinterpret_cast<SwitchyardPluginEntryFn>(symbol);
        const PluginEntry* entry = entry_fn();
        if (!entry || entry->struct_size < offsetof(PluginEntry, reset) || !entry->register_cells) {
            ::dlclose(handle);
            fail(BackendLoadError::Cause::EntryMissing,
                 "its entry symbol '" + std::string(kPluginEntrySymbol) + "' in " + library +
                     " returned no register hook");
        }
        if (entry->contract_version > kContractVersion) {
            ::dlclose(handle);
            fail(BackendLoadError::Cause::EntryContractTooNew,
                 "its library was built for backend-contract revision " +
                     std::to_string(entry->contract_version) +
                     " but this Switchyard core implements up to revision " +
                     std::to_string(kContractVersion) + " (its manifest declares " +
                     std::to_string(m_manifest.capabilities.contract_version) +
                     "); upgrade Switchyard, and fix the manifest's capabilities.contract_version");
        }
        if (entry->contract_version < kMinBinaryContractVersion) {
            ::dlclose(handle);
            fail(BackendLoadError::Cause::EntryContractTooOld,
                 "its library was built against backend-contract revision " +
                     std::to_string(entry->contract_version) +
                     ", whose SDK layout this Switchyard no longer reads (it loads libraries "
                     "built for revision " +
                     std::to_string(kMinBinaryContractVersion) + " to " +
                     std::to_string(kContractVersion) +
                     "); rebuild the plugin against this Switchyard");
        }
        m_handle = handle;
        m_entry = entry;
    }

    PluginContext context(registrar, name(), dirname_of(library), m_manifest_path);
    m_register_count.fetch_add(1);
    try {
        m_entry->register_cells(context);
    } catch (const std::exception& e) {
        // A CUDA runtime's refusal, typed: a driver older than the plugin's runtime (not an
        // absent driver, which says the same), or no code for this GPU.
        if (const auto cause = classify_cuda_error(e.what());
            cause && (*cause != BackendCause::DriverTooOld ||
                      check_dependency_cached({"libcuda.so.1", DependencyKind::Library, {}}).found))
            fail(*cause, std::string("its register hook failed: ") + e.what());
        fail(BackendLoadError::Cause::RegisterHookThrew,
             std::string("its register hook threw: ") + e.what());
    } catch (...) {
        fail(BackendLoadError::Cause::RegisterHookThrew,
             "its register hook threw a non-standard exception");
    }
    m_loaded.store(true, std::memory_order_release);
}

void PluginProvider::unload() noexcept {
    std::lock_guard lock(m_mutex);
    m_loaded.store(false, std::memory_order_release);
    // The handle is kept: dlclose of an RTLD_NODELETE library changes nothing, and a later
    // load() reuses it instead of opening the file again.
}

void PluginProvider::reset() {
    const PluginEntry* entry = nullptr;
    {
        std::lock_guard lock(m_mutex);
        if (!is_loaded())
            return;
        entry = m_entry;
    }
    if (entry && entry->struct_size > offsetof(PluginEntry, reset) && entry->reset)
        entry->reset();
}

} // namespace switchyard
