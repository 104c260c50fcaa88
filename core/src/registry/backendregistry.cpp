// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/diagnosis/loadsim.h>
#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/devicebackends.h>

#include "util/difflib.h"
#include "util/textutil.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <unordered_set>

namespace switchyard {

std::string_view to_string(BackendState state) noexcept {
    switch (state) {
    case BackendState::Discovered:
        return "discovered";
    case BackendState::Invalid:
        return "invalid";
    case BackendState::Unavailable:
        return "unavailable";
    case BackendState::Loaded:
        return "loaded";
    case BackendState::Failed:
        return "failed";
    case BackendState::Shadowed:
        return "shadowed";
    }
    return "invalid";
}

std::vector<std::string> BackendInfo::missing_dependencies() const {
    std::vector<std::string> out;
    for (const auto& d : dependencies)
        if (!d.found)
            out.push_back(d.dependency.name);
    return out;
}

bool BackendInfo::is_available() const {
    return state == BackendState::Loaded || state == BackendState::Discovered;
}

namespace {

// The transitions the state table in backendregistry.h allows.
bool transition_allowed(BackendState from, BackendState to, bool failed_at_discovery) {
    using S = BackendState;
    if (from == to)
        return true;
    switch (from) {
    case S::Discovered:
        return to == S::Loaded || to == S::Failed || to == S::Unavailable || to == S::Shadowed;
    case S::Unavailable:
        return to == S::Discovered || to == S::Loaded || to == S::Shadowed;
    case S::Loaded:
        return to == S::Unavailable;
    case S::Failed:
        return to == S::Shadowed || (to == S::Loaded && failed_at_discovery);
    case S::Invalid:
        return to == S::Shadowed;
    case S::Shadowed:
        return true; // the name given back: the plugin's own state again
    }
    return false;
}

} // namespace

/// One backend the registry knows. `info` is its description; its stored state (`info.state`,
/// `info.cause`, `info.error`), `failure`, `diagnostics` and `library_report` are guarded by
/// `state_mutex` (a leaf lock); loads are serialised by `load_mutex`.
struct BackendRegistry::Entry {
    BackendInfo info;
    BackendSpec spec;                          // registered and built-in backends
    std::shared_ptr<BackendProvider> provider; // plugins
    std::mutex load_mutex;
    std::atomic<bool> loaded{false};
    mutable std::mutex state_mutex;
    std::exception_ptr failure; // a failed load, rethrown until rescan
    std::vector<std::string> diagnostics;
    bool inspected = false; // library_report read (details())
    std::optional<ElfDependencyReport> library_report;
    std::vector<std::string> device_kinds; // providers it published into the device registry

    bool is_plugin() const { return info.source == BackendSource::Plugin; }

    /// Moves to `to` with its cause and message; `state_mutex` held. Throws std::logic_error
    /// on a transition the state table does not allow.
    void transition(BackendState to, BackendCause cause, std::string message) {
        if (!transition_allowed(info.state, to, !failure))
            throw std::logic_error("backend '" + info.name + "': no transition from " +
                                   std::string(to_string(info.state)) + " to " +
                                   std::string(to_string(to)));
        info.state = to;
        info.cause = cause;
        info.error = std::move(message);
    }
    /// Stores a failed load (or a failure details() found): Failed until rescan.
    void fail(std::exception_ptr error, BackendCause cause, std::string message) {
        failure = std::move(error);
        transition(BackendState::Failed, cause, std::move(message));
    }
};

namespace {

std::string describe_owner(const BackendInfo& owner) {
    return owner.name + " (" + std::string(to_string(owner.source)) + ")";
}

std::vector<DependencyStatus> missing_of(const std::vector<DependencyStatus>& deps) {
    std::vector<DependencyStatus> out;
    for (const auto& d : deps)
        if (!d.found)
            out.push_back(d);
    return out;
}

std::string key_list(const std::vector<std::vector<std::string>>& keys) {
    return text::join(keys, ", ", [](const auto& k) { return TupleKey(k).to_string(); });
}

// Throws MissingDependency or ContractMismatch when what the backend declares it needs
// is not met here.
void check_requirements(const BackendInfo& info) {
    auto missing = missing_of(check_dependencies(info.capabilities.optional_deps));
    if (!missing.empty())
        throw MissingDependency(info.name, std::move(missing));
    check_contract(info.capabilities, info.name);
}

struct Problem {
    BackendCause cause = BackendCause::None;
    std::string message;
};

// check_requirements() as a cause and a message (None when they are met).
Problem requirement_problem(const BackendInfo& info) {
    try {
        check_requirements(info);
    } catch (const MissingDependency& e) {
        return {BackendCause::OptionalDependencyMissing, e.what()};
    } catch (const ContractMismatch& e) {
        if (info.capabilities.contract_version > kContractVersion)
            return {BackendCause::ContractTooNew, e.what()};
        return {e.upgrade() == ContractMismatch::Upgrade::Switchyard ? BackendCause::CoreTooOld
                                                                     : BackendCause::CoreTooNew,
                e.what()};
    }
    return {};
}

// Discovered/Loaded <-> Unavailable, as the machine is now; `state_mutex` held.
void refresh_requirements(BackendInfo& info, bool loaded,
                          const std::function<void(BackendState, Problem)>& move) {
    using S = BackendState;
    if (info.state != S::Discovered && info.state != S::Loaded && info.state != S::Unavailable)
        return;
    auto problem = requirement_problem(info);
    if (problem.cause != BackendCause::None)
        move(S::Unavailable, std::move(problem));
    else
        move(loaded ? S::Loaded : S::Discovered, {});
}

// Drops every cell of a batch whose key an earlier cell of the batch has: the first plugin
// (or the first line of a manifest) that declares a key claims it. Key ids are small and
// sequential, so a bit per id finds them.
template <class Cells> void keep_first_of_each_key(Cells& cells) {
    std::uint64_t max_id = 0;
    for (const auto& c : cells)
        max_id = std::max(max_id, c->key.id());
    std::vector<bool> seen(cells.empty() ? 0 : max_id + 1);
    std::erase_if(cells, [&](const auto& c) {
        const auto id = c->key.id();
        if (seen[id])
            return true;
        seen[id] = true;
        return false;
    });
}

} // namespace

BackendRegistry::BackendRegistry(KernelRegistry& kernels, ComponentRegistry& components,
                                 BuiltinBackends builtins)
    : m_kernels(kernels), m_components(components), m_builtins(std::move(builtins)) {}

BackendRegistry::~BackendRegistry() {
    std::set<std::string> names;
    for (const auto& [name, e] : m_entries)
        names.insert(name);
    auto ours = [&](const auto& cell) { return names.count(cell.backend) > 0; };
    m_kernels.erase_if(ours);
    m_components.erase_if(ours);
}

void BackendRegistry::set_plugin_discovery(PluginDiscovery discovery) {
    std::lock_guard lock(m_mutex);
    m_discovery = std::move(discovery);
    m_plugins_discovered = false;
}

void BackendRegistry::set_builtins(BuiltinBackends builtins) {
    std::lock_guard lock(m_mutex);
    m_builtins = std::move(builtins);
}

void BackendRegistry::set_device_registry(DeviceRegistry* devices) {
    std::lock_guard lock(m_mutex);
    m_devices = devices;
}

void BackendRegistry::set_load_observer(LoadObserver observer) {
    std::lock_guard lock(m_mutex);
    m_load_observer = std::move(observer);
}

void BackendRegistry::publish_devices(const CellRegistrar& registrar, Entry& entry) {
    if (!m_devices)
        return;
    for (const auto& provider : registrar.device_providers()) {
        entry.device_kinds.push_back(provider->kind());
        m_devices->add_provider(provider);
    }
}

void BackendRegistry::withdraw_devices(Entry& entry) {
    if (!m_devices)
        return;
    for (const auto& kind : entry.device_kinds)
        m_devices->remove_provider(kind);
    entry.device_kinds.clear();
}

void BackendRegistry::ensure_builtins_locked() {
    if (m_builtins_loaded)
        return;
    m_builtins_loaded = true;
    for (auto& spec : m_builtins ? m_builtins() : std::vector<BackendSpec>{})
        add_spec(std::move(spec), BackendSource::Builtin, /*skip_if_owned=*/true);
}

void BackendRegistry::ensure_initialized() {
    std::lock_guard lock(m_mutex);
    ensure_builtins_locked();
    if (!m_plugins_discovered) {
        m_plugins_discovered = true;
        if (m_discovery)
            adopt_plugins(m_discovery());
    }
}

std::shared_ptr<BackendRegistry::Entry> BackendRegistry::find_entry(std::string_view name) {
    std::lock_guard lock(m_mutex);
    auto it = m_entries.find(name);
    return it == m_entries.end() ? nullptr : it->second;
}

void BackendRegistry::throw_unknown(std::string_view name) {
    throw InvalidBackend(std::string(name),
                         difflib::get_close_matches(name, known_names(), 2, 0.6));
}

void BackendRegistry::add_spec(BackendSpec spec, BackendSource source, bool skip_if_owned) {
    // Run the backend's registration hook first: if it throws, nothing is registered.
    CellRegistrar registrar(spec.name, source);
    if (spec.register_cells)
        spec.register_cells(registrar);

    std::lock_guard lock(m_mutex);
    if (spec.name.empty())
        throw std::invalid_argument("a backend name is required");
    auto existing = m_entries.find(spec.name);
    if (existing != m_entries.end()) {
        auto& owner = *existing->second;
        if (skip_if_owned)
            return; // an explicit registration already owns the built-in's name
        if (!owner.is_plugin() || owner.loaded)
            throw DuplicateBackend(spec.name, owner.is_plugin()
                                                  ? "a loaded plugin"
                                                  : std::string(to_string(owner.info.source)));
        // An explicit registration wins over a plugin that has not been loaded yet.
        auto plugin = existing->second;
        m_entries.erase(existing);
        shadow(*plugin, spec.name + " (" + std::string(to_string(source)) + ")");
        m_kernels.erase_if([&](const KernelCell& c) { return c.backend == spec.name; });
        m_components.erase_if([&](const ComponentCell& c) { return c.backend == spec.name; });
        m_shadowed.push_back(std::move(plugin));
    }

    auto entry = std::make_shared<Entry>();
    entry->info.name = spec.name;
    entry->info.source = source;
    entry->info.state = BackendState::Loaded;
    entry->info.tags = spec.tags;
    entry->info.capabilities = spec.capabilities;
    entry->info.description = spec.description;
    entry->info.version = spec.version;
    for (const auto& k : registrar.pending_kernels())
        entry->info.declared_kernels.push_back({k.key.parts(), k.workspace_bytes});
    for (const auto& c : registrar.pending_components())
        entry->info.declared_components.push_back({c.key.parts(), 0});
    entry->spec = std::move(spec);
    entry->loaded = true;
    registrar.commit(m_kernels, m_components);
    publish_devices(registrar, *entry);
    const std::string name = entry->info.name;
    m_entries.emplace(name, std::move(entry));
}

void BackendRegistry::register_backend(BackendSpec spec) {
    // As in the seed registry: the built-ins are there before any explicit registration is
    // accepted, so claiming a built-in's name ("cpu") raises DuplicateBackend at once.
    std::lock_guard lock(m_mutex);
    ensure_builtins_locked();
    add_spec(std::move(spec), BackendSource::Registered, false);
}

void BackendRegistry::register_debug_backend(BackendSpec spec) {
    spec.tags.push_back("debug");
    register_backend(std::move(spec));
}

void BackendRegistry::register_experimental_backend(BackendSpec spec) {
    spec.tags.push_back("experimental");
    register_backend(std::move(spec));
}

bool BackendRegistry::unregister_backend(std::string_view name) {
    std::lock_guard lock(m_mutex);
    auto it = m_entries.find(name);
    if (it == m_entries.end())
        return false;
    withdraw_devices(*it->second);
    m_entries.erase(it);
    m_kernels.erase_if([&](const KernelCell& c) { return c.backend == name; });
    m_components.erase_if([&](const ComponentCell& c) { return c.backend == name; });
    if (m_default && *m_default == name)
        m_default.reset();
    // A plugin that lost this name to the removed backend gets it back.
    auto shadowed = std::find_if(m_shadowed.begin(), m_shadowed.end(),
                                 [&](const auto& e) { return e->info.name == name; });
    if (shadowed != m_shadowed.end()) {
        auto plugin = *shadowed;
        m_shadowed.erase(shadowed);
        unshadow(*plugin);
        m_entries.emplace(plugin->info.name, plugin);
        publish_placeholders(plugin);
    }
    return true;
}

void BackendRegistry::adopt_plugins(std::vector<std::shared_ptr<BackendProvider>> providers) {
    std::vector<BackendInfo> described;
    described.reserve(providers.size());
    std::size_t kernel_count = 0, component_count = 0;
    for (const auto& provider : providers) {
        described.push_back(provider ? provider->describe() : BackendInfo{});
        kernel_count += described.back().declared_kernels.size();
        component_count += described.back().declared_components.size();
    }
    // Sized once: a batch of 100,000 cells grown by doubling would hold up to twice that.
    Placeholders batch;
    batch.kernels.reserve(kernel_count);
    batch.components.reserve(component_count);
    for (std::size_t i = 0; i < providers.size(); ++i) {
        auto& provider = providers[i];
        if (!provider)
            continue;
        auto entry = std::make_shared<Entry>();
        entry->info = std::move(described[i]);
        entry->info.source = BackendSource::Plugin;
        entry->provider = std::move(provider);
        auto owner = m_entries.find(entry->info.name);
        if (owner != m_entries.end()) {
            // The plugin claims only a name nobody owns yet.
            const auto& holder = *owner->second;
            std::string by = describe_owner(holder.info);
            if (holder.is_plugin() && !holder.info.manifest_path.empty())
                by += " from " + holder.info.manifest_path;
            shadow(*entry, std::move(by));
            m_shadowed.push_back(std::move(entry));
            continue;
        }
        m_entries.emplace(entry->info.name, entry);
        collect_placeholders(entry, batch);
    }
    // One publication for all of them: discovery stays linear in the number of plugins.
    keep_first_of_each_key(batch.kernels);
    keep_first_of_each_key(batch.components);
    m_kernels.put_all(std::move(batch.kernels));
    m_components.put_all(std::move(batch.components));
}

void BackendRegistry::publish_placeholders(const std::shared_ptr<Entry>& entry) {
    Placeholders batch;
    collect_placeholders(entry, batch);
    keep_first_of_each_key(batch.kernels);
    keep_first_of_each_key(batch.components);
    m_kernels.put_all(std::move(batch.kernels));
    m_components.put_all(std::move(batch.components));
}

void BackendRegistry::collect_placeholders(const std::shared_ptr<Entry>& entry,
                                           Placeholders& batch) {
    if (!entry->is_plugin() || entry->info.state == BackendState::Invalid || entry->loaded)
        return; // a Failed plugin keeps its placeholders: they show what it would provide
    const std::string& name = entry->info.name;
    // One hook per plugin name, kept by the registry; its cells' predicate and loader hold
    // only its address, so a std::function stores them in place (no allocation per cell).
    const PlaceholderHook* hook;
    {
        std::lock_guard lock(m_hooks_mutex);
        auto [it, created] = m_hooks.try_emplace(name);
        PlaceholderHook& h = it->second;
        if (created)
            h.registry = this;
        h.entry.store(entry);
        h.answer.store(0, std::memory_order_relaxed);
        hook = &h;
    }
    // Usable as far as can be told without loading: not failed, dependencies present,
    // contract acceptable. Asked once per plugin while a registry lists its cells.
    const auto available = [hook]() {
        const std::uint64_t epoch = detail::availability_epoch();
        if (epoch != 0)
            if (const auto a = hook->answer.load(std::memory_order_relaxed); (a >> 1) == epoch)
                return (a & 1) != 0;
        auto e = hook->entry.load().lock();
        const bool usable = e && is_usable(*e);
        if (epoch != 0)
            hook->answer.store((epoch << 1) | (usable ? 1 : 0), std::memory_order_relaxed);
        return usable;
    };
    const auto loader = [hook]() {
        if (auto e = hook->entry.load().lock())
            hook->registry->load_entry(e);
    };
    // A cell another backend declared stays theirs (one an earlier plugin of this batch
    // declared too: keep_first_of_each_key()).
    auto claim = [&](const TupleKey& key, const auto& registry) {
        auto existing = registry.lookup(key);
        return !existing || existing->backend == name;
    };
    auto declare = [&](const DeclaredCells& declared, const auto& registry, auto& out,
                       bool kernel) {
        const std::size_t arity = registry.key_fields().size();
        for (std::size_t i = 0; i < declared.size(); ++i) {
            const DeclaredCell& d = declared[i];
            if (d.key.size() != arity)
                continue;
            using Cell =
                std::remove_const_t<typename std::decay_t<decltype(out)>::value_type::element_type>;
            Cell cell;
            cell.key = declared.key(i); // interned when the manifest was read
            if (!claim(cell.key, registry))
                continue;
            cell.available = available;
            cell.loader = loader;
            cell.source = CellSource::Plugin;
            cell.backend = name;
            if (kernel) { // the matrix always shows a kernel's workspace
                cell.meta["workspace_bytes"] = d.workspace_bytes;
                cell.workspace_bytes = d.workspace_bytes;
            }
            out.push_back(std::make_shared<const Cell>(std::move(cell)));
        }
    };
    declare(entry->info.declared_kernels, m_kernels, batch.kernels, true);
    declare(entry->info.declared_components, m_components, batch.components, false);
}

bool BackendRegistry::mark_failed(std::string_view name, BackendCause cause,
                                  const std::string& reason) {
    ensure_initialized();
    const auto entry = find_entry(name);
    if (!entry || !entry->is_plugin() || entry->loaded)
        return false;
    std::lock_guard load_lock(entry->load_mutex);
    std::lock_guard lock(entry->state_mutex);
    if (entry->loaded || entry->info.state != BackendState::Discovered)
        return false;
    const BackendLoadError error(entry->info.name, cause, reason);
    entry->fail(std::make_exception_ptr(error), cause, error.what());
    return true;
}

namespace {

// The x86-64 level this machine runs, as detected and capped (SWITCHYARD_MAX_ISA): 1 for the
// baseline, 2..4 for x86-64-v2..v4; 0 on other architectures (nothing is judged).
int machine_isa_level() {
#if defined(__x86_64__)
    int level = 1;
    for (const auto& l : cpu_isa_levels())
        if (l.rfind("x86-64-v", 0) == 0)
            level = std::max(level, std::atoi(l.c_str() + 8));
    return level;
#else
    return 0;
#endif
}

} // namespace

std::pair<BackendCause, std::string> predict_load_failure(const ElfDependencyReport& r) {
    // The file itself refused (another architecture, not ELF, not a shared library, cut off):
    // its dependencies were never read.
    if (!r.dependencies_read && !r.load_problems.empty())
        return {r.load_problems.front().cause, "its library " + r.load_problems.front().message};
    for (const auto& p : r.load_problems)
        if (p.cause == BackendCause::WrongArchitecture)
            return {p.cause, "its library " + p.message};
    if (!r.readable)
        return {BackendCause::LibraryNotElf, r.error};
    if (const auto missing = r.unresolved_with_requester(); !missing.empty())
        return {BackendCause::LibraryDependencyMissing,
                missing_libraries_message(r.library, missing)};
    if (!r.load_problems.empty()) {
        std::vector<std::string> lines;
        for (const auto& p : r.load_problems)
            lines.push_back(p.message);
        return {r.load_problems.front().cause,
                "its library " + r.library + " would not load: " + text::join(lines, "; ")};
    }
    if (const int machine = machine_isa_level(); machine > 0 && r.isa_level_needed > machine)
        return {BackendCause::IsaUnsupported,
                "its library " + r.library + " is marked as needing " +
                    isa_level_name(r.isa_level_needed) + " (GNU_PROPERTY_X86_ISA_1_NEEDED); " +
                    "this CPU reaches " + isa_level_name(machine) +
                    (cpu_isa_cap().level.empty()
                         ? ""
                         : " (capped by SWITCHYARD_MAX_ISA=" + cpu_isa_cap().level + ")") +
                    ", so it is refused rather than run into an illegal instruction"};
    return {BackendCause::None, {}};
}

void BackendRegistry::load_entry(const std::shared_ptr<Entry>& entry) {
    if (entry->loaded)
        return;
    std::lock_guard load_lock(entry->load_mutex);
    if (entry->loaded)
        return;
    check_preconditions(*entry); // before any plugin code runs
    const auto& info = entry->info;
    if (!entry->provider) // registered and built-in backends are Loaded from the start
        throw std::logic_error("backend '" + info.name + "' has no loader");

    // The observer hears of the load before the plugin's code runs and after it returned or
    // threw, once the load lock is released (declared before it, destroyed after it).
    LoadObserver observer;
    {
        std::lock_guard lock(m_mutex);
        observer = m_load_observer;
    }
    struct Told {
        const LoadObserver* observer; // null: nobody to tell
        const std::string& name;
        ~Told() {
            if (!observer)
                return;
            try {
                (*observer)(name, false);
            } catch (...) {
                // What the observer does never changes how the load ended.
            }
        }
    };
    // The static load simulation's prediction (no library opened): a library built for an
    // x86-64 level this CPU does not reach is refused here, never run into SIGILL, and a
    // cut-off file never mapped (the loader dies of SIGBUS on it); every other prediction is
    // compared with what the loader says.
    const auto report = entry->provider->inspect_library();
    const auto [predicted, why] =
        report ? predict_load_failure(*report) : std::pair<BackendCause, std::string>{};
    if (predicted == BackendCause::IsaUnsupported || predicted == BackendCause::LibraryTruncated) {
        const BackendLoadError error(info.name, predicted, why);
        std::lock_guard lock(entry->state_mutex);
        // The report it was refused by, so the cause reads with its facts (where it is cut).
        if (!entry->inspected) {
            entry->inspected = true;
            entry->library_report = report;
        }
        entry->fail(std::make_exception_ptr(error), predicted, error.what());
        throw error;
    }
    if (observer)
        observer(info.name, true);
    const Told told{observer ? &observer : nullptr, info.name};
    CellRegistrar registrar(info.name, CellSource::Plugin);
    try {
        entry->provider->load(registrar);
    } catch (...) {
        // Roll back: nothing the hook registered was published; close the library.
        entry->provider->unload();
        std::exception_ptr failure = std::current_exception();
        BackendCause cause = BackendCause::RegisterHookThrew;
        std::string text;
        try {
            throw;
        } catch (const BackendLoadError& e) {
            cause = e.cause();
            text = e.what();
        } catch (const std::exception& e) {
            const BackendLoadError error(info.name, BackendLoadError::Cause::RegisterHookThrew,
                                         "its register hook threw: " + text::untrusted(e.what()));
            text = error.what();
            failure = std::make_exception_ptr(error);
        } catch (...) {
            const BackendLoadError error(info.name, BackendLoadError::Cause::RegisterHookThrew,
                                         "its register hook threw a non-standard exception");
            text = error.what();
            failure = std::make_exception_ptr(error);
        }
        // Prediction and truth: a load failure the simulation did not foresee (or foresaw
        // as another cause) is said, never silently.
        if (report && predicted != cause &&
            (cause == BackendCause::SymbolVersionMissing ||
             cause == BackendCause::UndefinedSymbol || cause == BackendCause::WrongArchitecture ||
             cause == BackendCause::LibraryLoadFailed ||
             cause == BackendCause::LibraryDependencyMissing ||
             cause == BackendCause::LibraryNotElf || cause == BackendCause::LibraryNotLoadable ||
             cause == BackendCause::LibraryTruncated || cause == BackendCause::StaticTlsExhausted))
            text += " [the static load simulation predicted " +
                    (predicted == BackendCause::None ? std::string("that it loads")
                                                     : std::string(to_string(predicted))) +
                    "; the loader disagrees]";
        std::lock_guard lock(entry->state_mutex);
        entry->fail(failure, cause, std::move(text));
        std::rethrow_exception(failure);
    }
    if (predicted != BackendCause::None) {
        std::lock_guard lock(entry->state_mutex);
        entry->diagnostics.push_back("the static load simulation predicted " +
                                     std::string(to_string(predicted)) + " (" + why +
                                     "), but the library loaded");
    }

    // Compare what the library registered with what its manifest declared.
    std::vector<std::string> diagnostics;
    auto compare = [&](const std::vector<DeclaredCell>& declared, auto& pending, auto& registry,
                       const char* what) {
        std::set<std::vector<std::string>> declared_keys, registered_keys;
        for (const auto& d : declared)
            declared_keys.insert(d.key);
        for (const auto& c : pending)
            registered_keys.insert(c.key.parts());
        std::vector<std::vector<std::string>> only_declared, only_registered, taken;
        for (const auto& k : declared_keys)
            if (!registered_keys.count(k))
                only_declared.push_back(k);
        for (const auto& k : registered_keys)
            if (!declared_keys.count(k))
                only_registered.push_back(k);
        std::erase_if(pending, [&](const auto& c) {
            auto existing = registry.lookup(c.key);
            if (existing && existing->backend != info.name) {
                taken.push_back(c.key.parts());
                return true;
            }
            return false;
        });
        if (!only_declared.empty())
            diagnostics.push_back(std::string("manifest declares ") + what +
                                  " the library did not register: " + key_list(only_declared));
        if (!only_registered.empty())
            diagnostics.push_back(std::string("library registered ") + what +
                                  " its manifest does not declare: " + key_list(only_registered));
        if (!taken.empty())
            diagnostics.push_back(std::string("ignored ") + what +
                                  " that another backend owns: " + key_list(taken));
    };
    auto kernels = registrar.pending_kernels();
    auto components = registrar.pending_components();
    compare(info.declared_kernels, kernels, m_kernels, "kernels");
    compare(info.declared_components, components, m_components, "components");

    // Publish: the placeholders give way to the real cells in one step.
    const std::string name = info.name;
    m_kernels.replace_if([&](const KernelCell& c) { return c.backend == name && !c.is_loaded(); },
                         std::move(kernels));
    m_components.replace_if(
        [&](const ComponentCell& c) { return c.backend == name && !c.is_loaded(); },
        std::move(components));
    publish_devices(registrar, *entry);
    // The state and `loaded` change together, under the state lock: a reader re-checking the
    // requirements meanwhile (a placeholder's predicate, lookup()) must never see Loaded with
    // `loaded` still false, or it would move the backend back to Discovered, a transition
    // the state machine refuses (it threw in such a reader when a resolve raced this load).
    std::lock_guard lock(entry->state_mutex);
    entry->diagnostics = std::move(diagnostics);
    entry->transition(BackendState::Loaded, BackendCause::None, {});
    entry->loaded = true;
}

void BackendRegistry::check_preconditions(Entry& entry) {
    BackendInfo info;
    {
        std::lock_guard lock(entry.state_mutex);
        if (entry.failure)
            std::rethrow_exception(entry.failure);
        if (entry.info.state == BackendState::Invalid)
            throw BackendLoadError(entry.info.name,
                                   entry.info.cause == BackendCause::Untrusted
                                       ? BackendLoadError::Cause::Untrusted
                                       : BackendLoadError::Cause::InvalidManifest,
                                   entry.info.error);
        info = entry.info;
    }
    // A Failed found at discovery (library file missing or unreadable) is not rethrown
    // here: the provider's load() checks the file again and throws with its cause.
    check_requirements(info);
}

bool BackendRegistry::is_usable(Entry& entry) {
    std::lock_guard lock(entry.state_mutex);
    refresh_requirements(entry.info, entry.loaded, [&](BackendState to, Problem p) {
        entry.transition(to, p.cause, std::move(p.message));
    });
    return entry.info.state == BackendState::Discovered || entry.info.state == BackendState::Loaded;
}

void BackendRegistry::inspect(Entry& entry) {
    if (!entry.provider)
        return;
    {
        std::lock_guard lock(entry.state_mutex);
        if (entry.inspected)
            return;
    }
    auto report = entry.provider->inspect_library(); // reads files: outside the lock
    std::lock_guard lock(entry.state_mutex);
    if (entry.inspected)
        return;
    entry.inspected = true;
    entry.library_report = std::move(report);
    if (!entry.library_report || entry.loaded || entry.info.state != BackendState::Discovered)
        return;
    const auto& r = *entry.library_report;
    const auto& name = entry.info.name;
    // What the loader would do, predicted without loading: the first cause it would stop at.
    auto [cause, why] = predict_load_failure(r);
    if (cause == BackendCause::None)
        return;
    if (cause == BackendCause::LibraryNotElf)
        why = "its library " + r.library +
              " is not a shared library this machine can load: " + r.error +
              ". Reinstall the plugin.";
    const BackendLoadError error(name, cause, why);
    entry.fail(std::make_exception_ptr(error), cause, error.what());
}

BackendInfo BackendRegistry::snapshot_info(Entry& entry, bool with_report) {
    std::lock_guard lock(entry.state_mutex);
    refresh_requirements(entry.info, entry.loaded, [&](BackendState to, Problem p) {
        entry.transition(to, p.cause, std::move(p.message));
    });
    BackendInfo info = entry.info;
    info.dependencies = check_dependencies(info.capabilities.optional_deps);
    info.diagnostics.insert(info.diagnostics.end(), entry.diagnostics.begin(),
                            entry.diagnostics.end());
    if (with_report) {
        info.library_report = entry.library_report;
    } else if (entry.library_report &&
               (!entry.library_report->ok() || entry.library_report->isa_level_needed > 0)) {
        // What names the problem (the unresolved libraries, the load problems), not the
        // whole walk: `list` of 1,000 plugins sharing one library copies no walk 1,000 times.
        const auto& r = *entry.library_report;
        ElfDependencyReport slim;
        slim.library = r.library;
        slim.readable = r.readable;
        slim.error = r.error;
        slim.dependencies_read = r.dependencies_read;
        slim.load_problems = r.load_problems;
        slim.isa_level_needed = r.isa_level_needed;
        for (const auto& d : r.dependencies)
            if (!d.found())
                slim.dependencies.push_back(d);
        info.library_report = std::move(slim);
    }
    return info;
}

void BackendRegistry::shadow(Entry& entry, std::string owner) {
    std::lock_guard lock(entry.state_mutex);
    entry.info.shadowed_by = std::move(owner);
    entry.transition(BackendState::Shadowed, BackendCause::Shadowed,
                     "the name '" + entry.info.name + "' is owned by " + entry.info.shadowed_by +
                         "; this plugin is not used");
}

void BackendRegistry::unshadow(Entry& entry) {
    const BackendInfo described = entry.provider ? entry.provider->describe() : entry.info;
    std::lock_guard lock(entry.state_mutex);
    entry.info.shadowed_by.clear();
    entry.transition(described.state, described.cause, described.error);
    if (entry.failure) // a load that failed before it lost its name
        entry.transition(BackendState::Failed, entry.info.cause, entry.info.error);
}

std::vector<std::shared_ptr<BackendRegistry::Entry>> BackendRegistry::owners() const {
    std::lock_guard lock(m_mutex);
    std::vector<std::shared_ptr<Entry>> out;
    out.reserve(m_entries.size());
    for (const auto& [name, e] : m_entries)
        out.push_back(e);
    return out;
}

std::vector<std::string> BackendRegistry::list(const ListOptions& options) {
    ensure_initialized();
    const auto entries = owners();
    std::vector<std::string> names; // m_entries is ordered by name: so is this
    names.reserve(entries.size());
    for (const auto& e : entries) {
        if (options.excludes(e->info.tags))
            continue;
        if (!options.include_unavailable && !is_usable(*e))
            continue;
        names.push_back(e->info.name);
    }
    return names;
}

std::vector<std::string> BackendRegistry::known_names() {
    ensure_initialized();
    std::lock_guard lock(m_mutex);
    std::vector<std::string> names;
    names.reserve(m_entries.size());
    for (const auto& [name, e] : m_entries)
        names.push_back(name);
    return names;
}

std::vector<BackendInfo> BackendRegistry::infos(InfoDetail detail) {
    ensure_initialized();
    auto entries = owners();
    {
        std::lock_guard lock(m_mutex);
        entries.insert(entries.end(), m_shadowed.begin(), m_shadowed.end());
    }
    std::vector<BackendInfo> out;
    out.reserve(entries.size());
    for (const auto& e : entries) {
        if (detail != InfoDetail::Summary)
            inspect(*e);
        out.push_back(snapshot_info(*e, detail != InfoDetail::States));
    }
    std::stable_sort(out.begin(), out.end(), [](const BackendInfo& a, const BackendInfo& b) {
        if (a.name != b.name)
            return a.name < b.name;
        return (a.state != BackendState::Shadowed) > (b.state != BackendState::Shadowed);
    });
    return out;
}

BackendInfo BackendRegistry::info(std::string_view name) {
    ensure_initialized();
    auto entry = find_entry(name);
    if (!entry)
        throw_unknown(name);
    return snapshot_info(*entry);
}

BackendInfo BackendRegistry::details(std::string_view name) {
    ensure_initialized();
    auto entry = find_entry(name);
    if (!entry)
        throw_unknown(name);
    inspect(*entry);
    return snapshot_info(*entry);
}

BackendInfo BackendRegistry::lookup(std::string_view name) {
    ensure_initialized();
    auto entry = find_entry(name);
    if (!entry)
        throw_unknown(name);
    if (entry->loaded)
        check_preconditions(*entry); // a usable registered backend may still lack a dependency
    else
        load_entry(entry);
    return snapshot_info(*entry);
}

void BackendRegistry::load(std::string_view name) {
    ensure_initialized();
    auto entry = find_entry(name);
    if (!entry)
        throw_unknown(name);
    load_entry(entry);
}

namespace {

bool wanted_kind(const std::string& kind, const std::vector<std::string>& kinds) {
    if (device_kind(kind) == DeviceKind::Cpu)
        return false;
    if (kinds.empty())
        return true;
    return std::any_of(kinds.begin(), kinds.end(), [&](const std::string& w) {
        return w == kind || w.rfind(kind + ":", 0) == 0;
    });
}

// Every kind some backend's manifest says it provides.
std::set<std::string> claimed_kinds(const std::vector<BackendInfo>& all) {
    std::set<std::string> claimed;
    for (const auto& b : all)
        if (b.provides_devices)
            claimed.insert(b.provides_devices->begin(), b.provides_devices->end());
    return claimed;
}

std::vector<std::string> provided_kinds(const BackendInfo& info,
                                        const std::set<std::string>& claimed) {
    std::set<std::string> kinds;
    if (info.provides_devices) {
        kinds.insert(info.provides_devices->begin(), info.provides_devices->end());
    } else {
        auto add = [&](const DeclaredCells& cells) {
            for (const auto& c : cells)
                if (c.key.size() > 1 && !claimed.count(c.key[1]))
                    kinds.insert(c.key[1]);
        };
        add(info.declared_kernels);
        add(info.declared_components);
    }
    kinds.erase("cpu");
    return {kinds.begin(), kinds.end()};
}

} // namespace

std::vector<std::string> provided_device_kinds(const BackendInfo& info,
                                               const std::vector<BackendInfo>& all) {
    return provided_kinds(info, claimed_kinds(all));
}

std::vector<std::string> device_backends(const std::vector<BackendInfo>& infos,
                                         const std::vector<std::string>& kinds) {
    const auto claimed = claimed_kinds(infos);
    std::vector<std::string> out;
    for (const auto& info : infos) {
        if (info.state != BackendState::Discovered || !info.is_available())
            continue;
        const auto provided = provided_kinds(info, claimed);
        if (std::any_of(provided.begin(), provided.end(),
                        [&](const std::string& k) { return wanted_kind(k, kinds); }))
            out.push_back(info.name);
    }
    return out;
}

void BackendRegistry::load_device_backends(const std::vector<std::string>& kinds) {
    for (const auto& name : device_backends(infos(), kinds)) {
        try {
            load(name);
        } catch (const std::exception&) {
            // Stored with the backend's state and cause.
        }
    }
}

bool BackendRegistry::is_loaded(std::string_view name) {
    auto entry = find_entry(name);
    return entry && entry->loaded;
}

void BackendRegistry::set_default_backend(std::optional<std::string> name) {
    if (name)
        lookup(*name);
    std::lock_guard lock(m_mutex);
    m_default = std::move(name);
}

std::string BackendRegistry::default_backend() const {
    std::lock_guard lock(m_mutex);
    return m_default.value_or("cpu");
}

void BackendRegistry::reset_backends() {
    for (const auto& e : owners()) {
        if (!e->loaded)
            continue;
        if (e->spec.reset)
            e->spec.reset();
        if (e->provider)
            e->provider->reset();
    }
}

void BackendRegistry::rescan() {
    std::lock_guard lock(m_mutex);
    clear_dependency_cache();
    if (!m_builtins_loaded) {
        ensure_initialized();
        return;
    }
    // Plugins that were never loaded are forgotten and rediscovered; loaded ones stay.
    std::vector<std::string> dropped;
    std::erase_if(m_entries, [&](const auto& item) {
        const auto& e = item.second;
        if (e->is_plugin() && !e->loaded) {
            dropped.push_back(e->info.name);
            return true;
        }
        return false;
    });
    m_shadowed.clear();
    auto is_dropped = [&](const auto& cell) {
        return std::find(dropped.begin(), dropped.end(), cell.backend) != dropped.end();
    };
    m_kernels.erase_if(is_dropped);
    m_components.erase_if(is_dropped);
    m_plugins_discovered = true;
    // What the rescan retired is freed once no reader holds it (sdk/tupleregistry.h, CellRef).
    struct Reclaim {
        BackendRegistry& r;
        ~Reclaim() {
            r.m_kernels.reclaim();
            r.m_components.reclaim();
        }
    } reclaim{*this};
    if (!m_discovery)
        return;
    auto providers = m_discovery();
    // A loaded plugin found again at the same place is the same plugin.
    std::erase_if(providers, [&](const auto& p) {
        if (!p)
            return true;
        const auto described = p->describe();
        auto it = m_entries.find(described.name);
        return it != m_entries.end() && it->second->is_plugin() && it->second->loaded &&
               it->second->info.manifest_path == described.manifest_path;
    });
    adopt_plugins(std::move(providers));
}

void BackendRegistry::clear() {
    std::lock_guard lock(m_mutex);
    for (auto& [name, entry] : m_entries)
        withdraw_devices(*entry);
    m_entries.clear();
    m_shadowed.clear();
    m_kernels.clear();
    m_components.clear();
    m_default.reset();
    m_builtins_loaded = false;
    m_plugins_discovered = false;
    clear_dependency_cache();
}

} // namespace switchyard
