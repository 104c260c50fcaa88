// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/sdk/capabilities.h>
#include <switchyard/sdk/errors.h>
#include <switchyard/sdk/registries.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace switchyard {

/// Where a backend came from, in priority order (an earlier source wins a name): the same
/// enum as its cells' source (sdk/tupleregistry.h), with the same to_string() ids.
using BackendSource = CellSource;

/// A backend's lifecycle state, stored by the registry with its BackendCause and message
/// (docs/plugins.md has the table of states, causes and fixes).
///
// clang-format off
/// | state       | meaning                                                          | causes                                                               |
/// |-------------|------------------------------------------------------------------|----------------------------------------------------------------------|
/// | Discovered  | manifest read, library present, not opened yet                   | none                                                                 |
/// | Invalid     | manifest unreadable or wrong, or its files writable by others    | invalid_manifest, untrusted                                          |
/// | Unavailable | optional dependencies missing, or the contract/core range refused | optional_dependency_missing, contract_too_new, core_too_new, core_too_old |
/// | Loaded      | usable (registered and built-in backends start here)             | none                                                                 |
/// | Failed      | installed but broken; nothing it registered remains              | library_*, entry_*, register_hook_threw, hook_*                      |
/// | Shadowed    | a plugin whose name a registered, built-in or earlier backend owns | shadowed                                                           |
// clang-format on
///
/// Transitions (each checked; anything else is a logic error):
/// - discovery: a plugin starts Discovered, Invalid (manifest, trust) or Failed (library
///   file missing or unreadable); registered and built-in backends start Loaded;
/// - Discovered -> Loaded (load succeeded) or Failed (load failed, or details() found a
///   missing DT_NEEDED or a library that is not ELF);
/// - Discovered/Loaded <-> Unavailable: re-checked whenever the backend is described or
///   used, since a dependency can be installed or removed while the process runs;
/// - Failed (found at discovery) -> Loaded: the library appeared before the first load;
/// - any unloaded state -> Shadowed (another backend took the name), and back to the
///   plugin's own state when the owner is unregistered.
enum class BackendState { Discovered, Invalid, Unavailable, Loaded, Failed, Shadowed };
SWITCHYARD_CORE_EXPORT std::string_view to_string(BackendState state) noexcept;

/// Everything known about one backend, as plain data. Fields marked (plugin) are empty
/// for registered and built-in backends.
///
/// Valid in every state: name, source, state, cause, tags, manifest_path, library_path.
/// `error` is empty exactly when `cause` is None (Discovered, Loaded). Invalid with cause
/// invalid_manifest: only the fields above and `extra` are filled (the manifest could not
/// be read). `diagnostics`: Loaded only. `shadowed_by`: Shadowed only. `library_report`:
/// only from BackendRegistry::details() (or infos(InfoDetail::Full)) for a plugin whose
/// library file exists.
struct SWITCHYARD_CORE_EXPORT BackendInfo {
    std::string name;
    BackendSource source = BackendSource::Registered;
    BackendState state = BackendState::Loaded;
    BackendCause cause = BackendCause::None; // why, stored with the state
    std::string error; // the human message for `cause`: Invalid / Unavailable / Failed / Shadowed
    std::vector<std::string> tags;
    BackendCapabilities capabilities;
    std::string description;
    std::string version;
    std::vector<DependencyStatus> dependencies; // every optional dependency, checked here
    DeclaredCells declared_kernels;             // copies share one list
    DeclaredCells declared_components;
    /// (plugin) The device kinds the manifest says the backend provides (devices listed by
    /// its DeviceProviders), from its "provides_devices" key; nullopt when the manifest has
    /// no such key (device_backends() then infers them, see registry/devicebackends.h).
    std::optional<std::vector<std::string>> provides_devices;
    std::vector<std::string> diagnostics; // e.g. declared cells that differ from registered ones
    std::string manifest_path;            // (plugin)
    std::string library_path;             // (plugin)
    std::string shadowed_by;              // (plugin, Shadowed) the owner's name and source
    nlohmann::json extra = nlohmann::json::object();   // (plugin) unknown manifest keys, kept
    std::optional<ElfDependencyReport> library_report; // (plugin) its DT_NEEDED, resolved

    std::vector<std::string> missing_dependencies() const;
    /// Usable here: loadable state, no missing dependency, contract satisfied.
    bool is_available() const;
};

/// What the static load simulation (diagnosis/loadsim.h) predicts the loader does with a
/// plugin library, from its dependency report, in the loader's order: the file itself refused
/// (wrong_architecture, library_not_elf, library_not_loadable, library_truncated), a missing
/// DT_NEEDED (library_dependency_missing), a missing symbol version, static TLS or a symbol
/// (symbol_version_missing, static_tls_exhausted, undefined_symbol), then an x86-64 level
/// above this CPU's, as detected and capped by SWITCHYARD_MAX_ISA (isa_unsupported). None
/// (and "") when it would load. A load predicted isa_unsupported or library_truncated is
/// refused before dlopen().
SWITCHYARD_CORE_EXPORT std::pair<BackendCause, std::string>
predict_load_failure(const ElfDependencyReport& report);

/// How much BackendRegistry::infos() finds out: Summary reads what is stored; Full also
/// reads each plugin library's ELF dependencies (no library is opened) and stores what it
/// finds (Discovered -> Failed on a missing DT_NEEDED or a library that is not ELF).
/// States: Full's reading of the libraries (the states and causes the loader's refusal
/// would give), with only what names a problem of each library report copied into its
/// BackendInfo (`list`).
enum class InfoDetail { Summary, Full, States };

/// A backend compiled into the process or registered through the API.
struct SWITCHYARD_CORE_EXPORT BackendSpec {
    std::string name;
    std::vector<std::string> tags;
    BackendCapabilities capabilities;
    std::string description;
    std::string version;
    /// Declares the backend's cells; runs at registration (explicit and built-in backends).
    std::function<void(CellRegistrar&)> register_cells;
    /// Releases process-wide state (pools, caches); called by reset_backends().
    std::function<void()> reset;
};

/// A backend that can describe itself without loading code and load itself on demand:
/// the seam plugins plug into (see plugin.h).
class SWITCHYARD_CORE_EXPORT BackendProvider {
public:
    virtual ~BackendProvider() = default;
    /// Everything known without opening any library. Must not throw.
    virtual BackendInfo describe() const = 0;
    /// Opens the code and runs its register hook into `registrar`. Called with the
    /// backend's load lock held, only after dependencies and contract were checked, and
    /// never again once it succeeded. Throws BackendLoadError with the cause.
    virtual void load(CellRegistrar& registrar) = 0;
    /// Undoes a failed load (closes the library). Must not throw.
    virtual void unload() noexcept {}
    /// Releases the loaded backend's process-wide state.
    virtual void reset() {}
    /// What its library's ELF file says without opening it (DT_NEEDED resolved like the
    /// loader); nullopt when there is no library file to read. Must not throw.
    virtual std::optional<ElfDependencyReport> inspect_library() const { return std::nullopt; }
};

/// Told around each run of plugin code that loads a backend (BackendProvider::load): `begin`
/// true just before it (its preconditions passed), false once it returned or threw, after the
/// backend's load lock is released. Called on the loading thread.
using LoadObserver = std::function<void(const std::string& backend, bool begin)>;

using PluginDiscovery = std::function<std::vector<std::shared_ptr<BackendProvider>>()>;
/// The built-in backends, asked for once, lazily (runtime.h wires the process's own).
using BuiltinBackends = std::function<std::vector<BackendSpec>()>;

struct SWITCHYARD_CORE_EXPORT ListOptions {
    std::vector<std::string> exclude_tags = {"debug", "experimental"};
    bool include_unavailable = false;

    /// Whether a backend with these tags is hidden by exclude_tags.
    bool excludes(const std::vector<std::string>& tags) const {
        for (const auto& t : tags)
            for (const auto& x : exclude_tags)
                if (t == x)
                    return true;
        return false;
    }
};

/// The backend registry (the seeds' backend registry and idempotent loader). Sources in priority
/// order: explicit registration, built-ins (registered lazily, once, by
/// register_builtin_backends()), plugins from discovery (they claim only names nobody owns).
/// Thread-safe.
class SWITCHYARD_CORE_EXPORT BackendRegistry {
public:
    /// Over `kernels` and `components`; `builtins` are added lazily, once (none if empty).
    BackendRegistry(KernelRegistry& kernels, ComponentRegistry& components,
                    BuiltinBackends builtins = {});
    ~BackendRegistry();
    BackendRegistry(const BackendRegistry&) = delete;
    BackendRegistry& operator=(const BackendRegistry&) = delete;

    /// Explicit registration. Throws DuplicateBackend when a registered or built-in backend
    /// owns the name; a plugin owning it is shadowed (an already loaded plugin is not).
    void register_backend(BackendSpec spec);
    void register_debug_backend(BackendSpec spec);
    void register_experimental_backend(BackendSpec spec);
    /// Removes a backend and every cell it registered. Returns false if unknown.
    bool unregister_backend(std::string_view name);

    /// Sorted names (seed list_backends).
    std::vector<std::string> list(const ListOptions& options = {});
    /// Every known name, whatever its tags or availability.
    std::vector<std::string> known_names();
    /// Every backend, including shadowed plugins, sorted by name then priority.
    std::vector<BackendInfo> infos(InfoDetail detail = InfoDetail::Summary);
    /// What is known about `name` without loading it. Throws InvalidBackend.
    BackendInfo info(std::string_view name);
    /// info() plus the library's ELF dependencies, read without loading it; a missing
    /// DT_NEEDED or a library that is not ELF is stored (Failed). Throws InvalidBackend.
    BackendInfo details(std::string_view name);

    /// Resolves a backend for use: loads a plugin if needed, then checks dependencies and
    /// contract. Throws InvalidBackend, MissingDependency, ContractMismatch or BackendLoadError.
    BackendInfo lookup(std::string_view name);
    /// Loads a plugin's library (idempotent, as the seed's loader): InvalidBackend when no such
    /// backend is installed, BackendLoadError when it is installed but broken. A failed load leaves
    /// nothing it registered behind.
    void load(std::string_view name);
    bool is_loaded(std::string_view name);
    /// Records that loading the plugin `name` in another process (an inspection worker,
    /// worker/inspect.h) failed with `cause` (hook_exited, hook_crashed, ...): it becomes
    /// Failed as if its load had failed here, and nothing loads it in this process until
    /// rescan. Only for a plugin that is Discovered (not loaded); false otherwise.
    bool mark_failed(std::string_view name, BackendCause cause, const std::string& reason);
    /// Loads every loadable plugin (Discovered and available) that provides a device kind
    /// other than the CPU named by `kinds` ("opencl", or a device id such as "opencl:1";
    /// empty: every kind; device_backends() is the rule), so that its device providers are
    /// published before devices are listed. Never throws: a failed load is stored (info() and
    /// `show` say why) and that backend contributes no device.
    void load_device_backends(const std::vector<std::string>& kinds = {});

    /// The default backend: "cpu" unless set. Setting validates the name through lookup();
    /// nullopt restores "cpu".
    void set_default_backend(std::optional<std::string> name);
    std::string default_backend() const;

    /// Calls reset() on every loaded backend that has one.
    void reset_backends();
    /// Re-runs plugin discovery: new manifests appear, removed ones that were never loaded
    /// disappear, loaded plugins stay.
    void rescan();
    /// Forgets everything (tests): backends, their cells, default; built-ins and plugins
    /// are loaded again lazily on next use.
    void clear();

    void set_plugin_discovery(PluginDiscovery discovery);
    /// Where the built-in backends come from (none unless set). Takes effect on the next
    /// lazy initialisation (after construction or clear()).
    void set_builtins(BuiltinBackends builtins);
    /// Where backends' device providers go (none unless set: they are then ignored).
    void set_device_registry(DeviceRegistry* devices);
    /// Who is told about each plugin load (the inspection worker names the plugin it is
    /// loading before its code runs, so a load that ends the worker is blamed on it). One
    /// observer; an empty one removes it.
    void set_load_observer(LoadObserver observer);
    /// Runs the lazy initialisation (built-ins, plugin discovery) now; idempotent.
    void ensure_initialized();

    KernelRegistry& kernel_registry() noexcept { return m_kernels; }
    ComponentRegistry& component_registry() noexcept { return m_components; }

private:
    struct Entry;
    std::shared_ptr<Entry> find_entry(std::string_view name);
    std::vector<std::shared_ptr<Entry>> owners() const;
    [[noreturn]] void throw_unknown(std::string_view name);
    void ensure_builtins_locked();
    void add_spec(BackendSpec spec, BackendSource source, bool skip_if_owned);
    void adopt_plugins(std::vector<std::shared_ptr<BackendProvider>> providers);
    void load_entry(const std::shared_ptr<Entry>& entry);
    struct Placeholders {
        std::vector<std::shared_ptr<const KernelCell>> kernels; // made shared once
        std::vector<std::shared_ptr<const ComponentCell>> components;
        std::unordered_set<std::uint64_t> claimed; // interned key ids
    };
    /// What a plugin's placeholder cells call back into (see collect_placeholders()).
    /// One per plugin name, reused by each rediscovery of that name (a rescan), so rescans
    /// do not pile hooks up; the entry is swapped while older placeholders may still call.
    struct PlaceholderHook {
        BackendRegistry* registry = nullptr;
        std::atomic<std::weak_ptr<Entry>> entry;
        // The last answer of its cells' predicate: (epoch << 1) | usable, for the epoch of
        // one listing (detail::availability_epoch()), so a listing asks once per plugin.
        mutable std::atomic<std::uint64_t> answer{0};
    };
    void publish_placeholders(const std::shared_ptr<Entry>& entry);
    void collect_placeholders(const std::shared_ptr<Entry>& entry, Placeholders& batch);
    BackendInfo snapshot_info(Entry& entry, bool with_report = true);
    /// Reads the library's ELF dependencies once and stores a failure they show.
    static void inspect(Entry& entry);
    /// Throws what using `entry` now would throw, before any of its code runs: a remembered
    /// failed load, an invalid manifest, missing dependencies, a contract mismatch.
    static void check_preconditions(Entry& entry);
    static bool is_usable(Entry& entry); // snapshot_info(entry).is_available(), without the copy
    static void shadow(Entry& entry, std::string owner);
    static void unshadow(Entry& entry);

    KernelRegistry& m_kernels;
    ComponentRegistry& m_components;
    mutable std::recursive_mutex m_mutex;
    std::map<std::string, std::shared_ptr<Entry>, std::less<>> m_entries; // owners, by name
    std::vector<std::shared_ptr<Entry>> m_shadowed; // plugins that lost their name
    PluginDiscovery m_discovery;
    BuiltinBackends m_builtins;
    DeviceRegistry* m_devices = nullptr;
    LoadObserver m_load_observer; // guarded by m_mutex; copied before it is called
    void publish_devices(const CellRegistrar& registrar, Entry& entry);
    void withdraw_devices(Entry& entry);
    bool m_builtins_loaded = false;
    bool m_plugins_discovered = false;
    std::optional<std::string> m_default;
    std::mutex m_hooks_mutex;
    // By plugin name; a map never moves its elements: stable addresses, freed with the registry.
    std::map<std::string, PlaceholderHook, std::less<>> m_hooks;
};

} // namespace switchyard
