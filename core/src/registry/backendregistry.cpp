// SPDX-License-Identifier: MIT
#include <switchyard/registry/backendregistry.h>
#include <switchyard/diagnosis/dependencies.h>

#include "util/difflib.h"
#include "util/textutil.h"

#include <algorithm>
#include <atomic>
#include <set>

namespace switchyard {

std::string_view to_string(BackendSource source) noexcept {
    switch (source) {
    case BackendSource::Registered: return "registered";
    case BackendSource::Builtin: return "builtin";
    case BackendSource::Plugin: return "plugin";
    }
    return "registered";
}

std::string_view to_string(BackendState state) noexcept {
    switch (state) {
    case BackendState::Discovered: return "discovered";
    case BackendState::Invalid: return "invalid";
    case BackendState::Unavailable: return "unavailable";
    case BackendState::Loaded: return "loaded";
    case BackendState::Failed: return "failed";
    case BackendState::Shadowed: return "shadowed";
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

/// One backend the registry knows. `info` is its static description; the load state is
/// guarded by `state_mutex` (a leaf lock), loads are serialised by `load_mutex`.
struct BackendRegistry::Entry {
    BackendInfo info;
    BackendSpec spec;                           // registered and built-in backends
    std::shared_ptr<BackendProvider> provider;  // plugins
    std::mutex load_mutex;
    std::atomic<bool> loaded{false};
    mutable std::mutex state_mutex;
    std::exception_ptr failure;                 // a failed load, rethrown until rescan
    std::string failure_text;
    std::vector<std::string> diagnostics;
    std::vector<std::string> device_kinds; // providers it published into the device registry

    bool is_plugin() const { return info.source == BackendSource::Plugin; }
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
    throw InvalidBackend(std::string(name), difflib::get_close_matches(name, known_names(), 2, 0.6));
}

void BackendRegistry::add_spec(BackendSpec spec, BackendSource source, bool skip_if_owned) {
    // Run the backend's registration hook first: if it throws, nothing is registered.
    CellRegistrar registrar(spec.name, std::string(to_string(source)));
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
            throw DuplicateBackend(spec.name, owner.is_plugin() ? "a loaded plugin" : std::string(to_string(owner.info.source)));
        // An explicit registration wins over a plugin that has not been loaded yet.
        auto plugin = existing->second;
        m_entries.erase(existing);
        plugin->info.shadowed_by = spec.name + " (" + std::string(to_string(source)) + ")";
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
        entry->info.declared_kernels.push_back({k.key.parts(), k.meta.value("workspace_bytes", std::int64_t{0})});
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
    // Seed 000: the built-ins are there before any explicit registration is accepted, so
    // claiming a built-in's name ("cpu") raises DuplicateBackend at once.
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
        plugin->info.shadowed_by.clear();
        m_entries.emplace(plugin->info.name, plugin);
        publish_placeholders(plugin);
    }
    return true;
}

void BackendRegistry::adopt_plugins(std::vector<std::shared_ptr<BackendProvider>> providers) {
    Placeholders batch;
    for (auto& provider : providers) {
        if (!provider)
            continue;
        auto entry = std::make_shared<Entry>();
        entry->info = provider->describe();
        entry->info.source = BackendSource::Plugin;
        entry->provider = std::move(provider);
        auto owner = m_entries.find(entry->info.name);
        if (owner != m_entries.end()) {
            // The plugin claims only a name nobody owns yet.
            const auto& holder = *owner->second;
            entry->info.shadowed_by = describe_owner(holder.info);
            if (holder.is_plugin() && !holder.info.manifest_path.empty())
                entry->info.shadowed_by += " from " + holder.info.manifest_path;
            m_shadowed.push_back(std::move(entry));
            continue;
        }
        m_entries.emplace(entry->info.name, entry);
        collect_placeholders(entry, batch);
    }
    // One publication for all of them: discovery stays linear in the number of plugins.
    m_kernels.put_all(std::move(batch.kernels));
    m_components.put_all(std::move(batch.components));
}

void BackendRegistry::publish_placeholders(const std::shared_ptr<Entry>& entry) {
    Placeholders batch;
    collect_placeholders(entry, batch);
    m_kernels.put_all(std::move(batch.kernels));
    m_components.put_all(std::move(batch.components));
}

void BackendRegistry::collect_placeholders(const std::shared_ptr<Entry>& entry, Placeholders& batch) {
    if (!entry->is_plugin() || entry->info.state == BackendState::Invalid || entry->loaded)
        return;
    std::weak_ptr<Entry> weak = entry;
    const std::string name = entry->info.name;
    // Usable as far as can be told without loading: not failed, dependencies present,
    // contract acceptable.
    auto available = [weak]() {
        auto e = weak.lock();
        return e && is_usable(*e);
    };
    auto loader = [this, weak]() {
        if (auto e = weak.lock())
            load_entry(e);
    };
    // A cell another backend (or an earlier plugin of this batch) declared stays theirs.
    auto claim = [&](const TupleKey& key, auto& registry) {
        if (auto existing = registry.lookup(key); existing && existing->backend != name)
            return false;
        return batch.claimed.insert(key.parts()).second;
    };
    auto declare = [&](const std::vector<DeclaredCell>& declared, auto& registry, auto& out, bool kernel) {
        for (const auto& d : declared) {
            typename std::decay_t<decltype(out)>::value_type cell;
            cell.key = TupleKey(d.key);
            if (cell.key.size() != registry.key_fields().size() || !claim(cell.key, registry))
                continue;
            cell.available = available;
            cell.loader = loader;
            cell.source = "plugin";
            cell.backend = name;
            if (kernel) // the matrix always shows a kernel's workspace
                cell.meta["workspace_bytes"] = d.workspace_bytes;
            out.push_back(std::move(cell));
        }
    };
    declare(entry->info.declared_kernels, m_kernels, batch.kernels, true);
    declare(entry->info.declared_components, m_components, batch.components, false);
}

void BackendRegistry::load_entry(const std::shared_ptr<Entry>& entry) {
    if (entry->loaded)
        return;
    std::lock_guard load_lock(entry->load_mutex);
    if (entry->loaded)
        return;
    check_preconditions(*entry); // before any plugin code runs
    const auto& info = entry->info;
    if (!entry->provider)
        throw BackendLoadError(info.name, BackendLoadError::Cause::Other, "no loader for this backend");

    CellRegistrar registrar(info.name, "plugin");
    try {
        entry->provider->load(registrar);
    } catch (...) {
        // Roll back: nothing the hook registered was published; close the library.
        entry->provider->unload();
        std::exception_ptr failure = std::current_exception();
        std::string text;
        try {
            throw;
        } catch (const BackendLoadError& e) {
            text = e.what();
        } catch (const std::exception& e) {
            failure = std::make_exception_ptr(
                BackendLoadError(info.name, BackendLoadError::Cause::RegisterHookThrew,
                                 std::string("its register hook threw: ") + e.what()));
            text = std::string("Cannot load backend '") + info.name + "': its register hook threw: " + e.what();
        } catch (...) {
            failure = std::make_exception_ptr(BackendLoadError(
                info.name, BackendLoadError::Cause::RegisterHookThrew, "its register hook threw a non-standard exception"));
            text = "Cannot load backend '" + info.name + "': its register hook threw a non-standard exception";
        }
        std::lock_guard lock(entry->state_mutex);
        entry->failure = failure;
        entry->failure_text = text;
        std::rethrow_exception(failure);
    }

    // Compare what the library registered with what its manifest declared.
    std::vector<std::string> diagnostics;
    auto compare = [&](const std::vector<DeclaredCell>& declared, auto& pending, auto& registry, const char* what) {
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
            diagnostics.push_back(std::string("manifest declares ") + what + " the library did not register: " +
                                  key_list(only_declared));
        if (!only_registered.empty())
            diagnostics.push_back(std::string("library registered ") + what + " its manifest does not declare: " +
                                  key_list(only_registered));
        if (!taken.empty())
            diagnostics.push_back(std::string("ignored ") + what + " that another backend owns: " + key_list(taken));
    };
    auto kernels = registrar.pending_kernels();
    auto components = registrar.pending_components();
    compare(info.declared_kernels, kernels, m_kernels, "kernels");
    compare(info.declared_components, components, m_components, "components");

    // Publish: the placeholders give way to the real cells in one step.
    const std::string name = info.name;
    m_kernels.replace_if([&](const KernelCell& c) { return c.backend == name && !c.is_loaded(); }, std::move(kernels));
    m_components.replace_if([&](const ComponentCell& c) { return c.backend == name && !c.is_loaded(); },
                            std::move(components));
    {
        std::lock_guard lock(entry->state_mutex);
        entry->diagnostics = std::move(diagnostics);
    }
    publish_devices(registrar, *entry);
    entry->loaded = true;
}

void BackendRegistry::check_preconditions(const Entry& entry) {
    {
        std::lock_guard lock(entry.state_mutex);
        if (entry.failure)
            std::rethrow_exception(entry.failure);
    }
    if (entry.info.state == BackendState::Invalid)
        throw BackendLoadError(entry.info.name, BackendLoadError::Cause::InvalidManifest, entry.info.error);
    check_requirements(entry.info);
}

bool BackendRegistry::is_usable(const Entry& entry) {
    if (!entry.info.shadowed_by.empty())
        return false;
    try {
        check_preconditions(entry);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

BackendInfo BackendRegistry::snapshot_info(const Entry& entry) {
    BackendInfo info = entry.info;
    info.dependencies = check_dependencies(info.capabilities.optional_deps);
    {
        std::lock_guard lock(entry.state_mutex);
        info.diagnostics.insert(info.diagnostics.end(), entry.diagnostics.begin(), entry.diagnostics.end());
        if (entry.failure) {
            info.state = BackendState::Failed;
            info.error = entry.failure_text;
            return info;
        }
    }
    if (!info.shadowed_by.empty()) {
        info.state = BackendState::Shadowed;
        info.error = "the name '" + info.name + "' is owned by " + info.shadowed_by + "; this plugin is not used";
        return info;
    }
    if (info.state == BackendState::Invalid)
        return info;
    try {
        check_requirements(info);
    } catch (const Error& e) {
        info.state = BackendState::Unavailable;
        info.error = e.what();
        return info;
    }
    info.state = entry.loaded ? BackendState::Loaded : BackendState::Discovered;
    info.error.clear();
    return info;
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

std::vector<BackendInfo> BackendRegistry::infos() {
    ensure_initialized();
    auto entries = owners();
    {
        std::lock_guard lock(m_mutex);
        entries.insert(entries.end(), m_shadowed.begin(), m_shadowed.end());
    }
    std::vector<BackendInfo> out;
    out.reserve(entries.size());
    for (const auto& e : entries)
        out.push_back(snapshot_info(*e));
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
