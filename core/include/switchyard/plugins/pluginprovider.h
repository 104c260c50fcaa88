// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/plugins/manifest.h>
#include <switchyard/registry/backendregistry.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <sys/stat.h>

namespace switchyard {

struct PluginEntry;

/// Library inspections shared by the providers of one discovery: a library that many
/// manifests name has its ELF dependencies read once, while the file is the same (device,
/// inode, size and modification time). A new discovery (a rescan) starts a new one.
class SWITCHYARD_CORE_EXPORT LibraryInspections {
public:
    /// The report of `library` (`st`: its stat), read now or found.
    std::optional<ElfDependencyReport> get(const std::string& library, const struct stat& st);

private:
    struct Key {
        std::string path;
        unsigned long long dev, ino, size;
        long long mtime_sec, mtime_nsec;
        auto operator<=>(const Key&) const = default;
    };
    std::mutex m_mutex;
    std::map<Key, std::optional<ElfDependencyReport>> m_reports;
};

/// A plugin found on disk: its manifest, read at construction, and its library, opened
/// (dlopen) only by load(). The registry decides when to load (the seed loader's semantics live in
/// BackendRegistry: name claiming, dependency and contract checks, rollback).
///
/// States as describe() reports them (with their BackendCause):
/// - Invalid: the manifest is unreadable or wrong (invalid_manifest), or its folder,
///   manifest or library can be written by other users (untrusted; `error` says which;
///   such a plugin is never opened);
/// - Failed: its library file is missing (library_missing) or unreadable
///   (library_unreadable), known without opening it;
/// - Discovered: ready to load; Loaded: load() succeeded.
/// load() throws BackendLoadError with one cause each: LibraryMissing, LibraryUnreadable,
/// LibraryDependencyMissing (naming every unresolved soname), LibraryLoadFailed,
/// EntryMissing, EntryContractTooNew (the entry reports a newer contract than this core),
/// EntryContractTooOld (the library was built against an SDK layout this core no longer
/// reads: kMinBinaryContractVersion), RegisterHookThrew, InvalidManifest, Untrusted.
class SWITCHYARD_CORE_EXPORT PluginProvider final : public BackendProvider {
public:
    /// Reads the manifest at `manifest_path` and checks who can write the plugin's files.
    explicit PluginProvider(std::string manifest_path);
    /// With a manifest already parsed; `untrusted_reason` non-empty refuses the plugin.
    /// `inspections`: shared with the other providers of the same discovery (or none).
    PluginProvider(std::string manifest_path, PluginManifest manifest,
                   std::string untrusted_reason = {},
                   std::shared_ptr<LibraryInspections> inspections = nullptr);
    ~PluginProvider() override;

    BackendInfo describe() const override;
    /// Opens the library (RTLD_NOW | RTLD_LOCAL), checks the entry symbol and its contract,
    /// runs the register hook. Idempotent: once it succeeded, further calls do nothing.
    void load(CellRegistrar& registrar) override;
    /// Forgets a failed load. The library itself stays mapped (RTLD_NODELETE): cells the
    /// hook created may still reference its code until the caller drops them.
    void unload() noexcept override;
    /// Runs the plugin's reset hook, if it has one and is loaded.
    void reset() override;
    /// The library's DT_NEEDED entries resolved like the loader (nothing is opened);
    /// nullopt when the library file does not exist.
    std::optional<ElfDependencyReport> inspect_library() const override;

    bool is_loaded() const noexcept { return m_loaded.load(std::memory_order_acquire); }
    /// How many times this provider ran the register hook (tests: concurrent loads).
    int register_count() const noexcept { return m_register_count.load(); }

    const PluginManifest& manifest() const noexcept { return m_manifest; }
    const std::string& manifest_path() const noexcept { return m_manifest_path; }
    /// The library's absolute path (the manifest's folder + `library`).
    std::string library_path() const;
    /// The name the plugin claims: the manifest's, or the file name without ".plugin.json".
    std::string name() const;

private:
    [[noreturn]] void fail(BackendLoadError::Cause cause, const std::string& reason) const;
    /// LibraryMissing or LibraryUnreadable when the library file cannot be opened.
    std::optional<BackendLoadError> library_file_problem() const;

    std::string m_manifest_path;
    PluginManifest m_manifest;
    std::string m_untrusted;
    std::shared_ptr<LibraryInspections> m_inspections;
    mutable std::mutex m_mutex;
    void* m_handle = nullptr;
    const PluginEntry* m_entry = nullptr;
    std::atomic<bool> m_loaded{false};
    std::atomic<int> m_register_count{0};
};

} // namespace switchyard
