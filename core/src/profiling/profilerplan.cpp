// SPDX-License-Identifier: MIT
// Planning: the rows of a run (ops x sizes x devices x cells), Profiler::plan.
#include <switchyard/profiling/profiler.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/devicebackends.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/registry/suggest.h>
#include <switchyard/sdk/registries.h>

#include "profiling/profilerdetail.h"
#include "util/textutil.h"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

namespace {

std::string suggest(std::string_view what, std::string_view name,
                    const std::vector<std::string>& known) {
    return unknown_name(what, name, known);
}

// The ops named in the settings (every op when none is named), each once, in order.
// Throws std::invalid_argument for an unknown op, also as a key of --sizes.
std::vector<const OpInfo*> resolve_ops(const ProfileSettings& st) {
    std::vector<std::string> op_names;
    for (const auto& op : ops())
        op_names.emplace_back(op.name);
    std::vector<const OpInfo*> op_list;
    if (st.ops.empty()) {
        for (const auto& op : ops())
            op_list.push_back(&op);
    } else {
        for (const auto& name : st.ops) {
            const auto* op = find_op(name);
            if (!op)
                throw std::invalid_argument(suggest("op", name, op_names));
            if (std::find(op_list.begin(), op_list.end(), op) == op_list.end())
                op_list.push_back(op);
        }
    }
    for (const auto& [key, list] : st.sizes)
        if (key != "*" && !find_op(key))
            throw std::invalid_argument(suggest("op", key, op_names) + " in --sizes");
    return op_list;
}

// The devices matching `wanted` (an id such as "cpu" or "opencl:0", or a kind), each once,
// in order; every device when `wanted` is empty. Throws std::invalid_argument for a name
// that matches no device.
std::vector<std::shared_ptr<Device>>
resolve_devices(const std::vector<std::shared_ptr<Device>>& all_devices,
                const std::vector<std::string>& wanted,
                const std::vector<std::pair<std::string, std::string>>& errors) {
    if (wanted.empty())
        return all_devices;
    std::vector<std::string> known;
    for (const auto& d : all_devices) {
        known.push_back(d->info().id);
        if (d->info().kind != d->info().id)
            known.push_back(d->info().kind);
    }
    std::vector<std::shared_ptr<Device>> devices;
    for (const auto& want : wanted) {
        bool any = false;
        for (const auto& d : all_devices)
            if (d->info().id == want || d->info().kind == want) {
                any = true;
                if (std::find(devices.begin(), devices.end(), d) == devices.end())
                    devices.push_back(d);
            }
        if (!any) {
            // A provider that failed to list its devices says why ("cuda:0": the cuda one).
            std::string why;
            for (const auto& [kind, message] : errors)
                if (want == kind || want.starts_with(kind + ":"))
                    why += "; the " + kind + " backend could not list its devices: " + message;
            throw std::invalid_argument(suggest("device", want, known) + why);
        }
    }
    return devices;
}

// The sizes of `op`: its own --sizes entry, else the "*" entry, else the defaults for a
// cache of `llc` bytes. Throws std::invalid_argument for a malformed size.
std::vector<Dims> sizes_for(const OpInfo& op, const ProfileSettings& st, std::int64_t llc) {
    auto it = st.sizes.find(std::string(op.name));
    if (it == st.sizes.end())
        it = st.sizes.find("*");
    if (it == st.sizes.end())
        return default_sizes(op, llc);
    std::vector<Dims> sizes;
    for (const auto& text : it->second) {
        std::string error;
        auto d = parse_dims(op, text, &error);
        if (!d)
            throw std::invalid_argument(error);
        sizes.push_back(*d);
    }
    return sizes;
}

// A cell to run for a device, and the device it runs on (the host CPU when the chain fell
// through to the terminal rung).
struct CellOnDevice {
    KernelRegistry::CellPtr cell;
    std::string run_on;
    bool resolved = false;  // the cell dispatch picks for this op on this device
    std::string tuned_from; // the chain's pick, where a tuning picked `cell` instead
};

// What the fallback chain of `op` for device `info` resolves to (nullptr: nothing).
KernelRegistry::CellPtr resolved_cell(const OpInfo& op, const DeviceInfo& info,
                                      const KernelRegistry& registry, const ProfileSettings& st) {
    std::vector<TupleKey> chain;
    try {
        chain = fallback_chain(op.name, Target{info.kind, info.arch}, st.variant);
    } catch (const std::exception&) {
        chain = fallback_chain(op.name, Target{info.kind, ""}, st.variant);
    }
    return registry.resolve_first(chain);
}

// Whether `key` (op, device kind, arch, variant) is one of the cells `names` asks for:
// "arch/variant", or "variant" of any arch.
bool named_cell(const TupleKey& key, const std::vector<std::string>& names) {
    for (const auto& n : names) {
        const auto slash = n.find('/');
        if (slash == std::string::npos
                ? key[3] == n
                : key[2] == n.substr(0, slash) && key[3] == n.substr(slash + 1))
            return true;
    }
    return false;
}

// Throws std::invalid_argument for a name of `st.cells` that no registered cell of the
// run's ops has (with the close names), or that only cells unavailable here have (with why).
void check_cell_names(const ProfileSettings& st, const std::vector<const OpInfo*>& op_list,
                      const KernelRegistry& registry) {
    if (st.cells.empty())
        return;
    std::vector<KernelRegistry::ManifestEntry> entries; // the cells of the run's ops
    std::vector<std::string> known;                     // their "arch/variant"s, once each
    for (const auto& entry : registry.manifest()) {
        const auto& key = entry.cell->key;
        if (std::none_of(op_list.begin(), op_list.end(),
                         [&](const OpInfo* op) { return key[0] == op->name; }))
            continue;
        entries.push_back(entry);
        const std::string arch_variant = cell_name(key);
        if (std::find(known.begin(), known.end(), arch_variant) == known.end())
            known.push_back(arch_variant);
    }
    for (const auto& name : st.cells) {
        std::vector<std::string> unavailable;
        bool available = false;
        for (const auto& entry : entries) {
            const auto& key = entry.cell->key;
            if (!named_cell(key, {name}))
                continue;
            if (entry.available)
                available = true;
            else
                unavailable.push_back(key.to_string());
        }
        if (available)
            continue;
        if (unavailable.empty())
            throw std::invalid_argument("--cells: " + suggest("cell", name, known));
        throw std::invalid_argument("--cells: '" + name + "' is not available on this machine (" +
                                    text::join(unavailable) +
                                    "); `switchyard-cli matrix` and `show` say why");
    }
}

// The cells of `op` for device `info`: those named by --cells, or every available one with
// --all-variants, else the first of its fallback chain (none when nothing resolves).
std::vector<CellOnDevice> cells_for(const OpInfo& op, const Dims& dims, const DeviceInfo& info,
                                    const KernelRegistry& registry, const ProfileSettings& st,
                                    const Profiler::TunedPicker& picker) {
    std::vector<CellOnDevice> cells;
    auto cell = resolved_cell(op, info, registry, st);
    std::string tuned_from;
    if (cell && picker)
        if (auto tuned = picker(op, dims, info, *cell)) {
            tuned_from = cell_name(cell->key);
            cell = std::move(tuned);
        }
    if (st.all_variants || !st.cells.empty()) {
        for (const auto& entry : registry.manifest()) {
            const auto& key = entry.cell->key;
            if (key[0] == op.name && key[1] == info.kind && entry.available &&
                (st.cells.empty() || named_cell(key, st.cells)))
                cells.push_back({entry.cell, info.id, cell && cell->key == key,
                                 cell && cell->key == key ? tuned_from : std::string()});
        }
        return cells;
    }
    if (!cell)
        return cells;
    // The terminal rung runs on the host CPU whatever device asked.
    std::string run_on = cell->key[1] == info.kind ? info.id : std::string("cpu");
    cells.push_back({std::move(cell), std::move(run_on), true, std::move(tuned_from)});
    return cells;
}

// The cell whose code `cell` runs on `device`, by the cell's meta "runs_as": an object from
// the device's type (its "device_type" property, as OpenCL devices state it: "CPU", "GPU")
// to a variant of the same (op, device kind, arch), "arch/variant" when it names the arch;
// empty when the cell says nothing for that type. Malformed meta names nothing.
std::string runs_as(const KernelCell& cell, const DeviceInfo& device) {
    const Value* m = cell.meta.find("runs_as");
    const Value* t = device.properties.find("device_type");
    if (!m || !t || !t->is_text())
        return {};
    const std::string name = m->text_or(t->as_text(), std::string());
    if (name.empty())
        return {};
    return name.find('/') == std::string::npos ? cell.key[2] + "/" + name : name;
}

// The rows of a plan, each (op, size, device, cell) once, numbered in order.
class RowList {
public:
    RowList(BackendRegistry& backends, bool resolved_apart)
        : m_backends(backends), m_resolved_apart(resolved_apart) {}

    void add(const OpInfo& op, const Dims& dims, const KernelCell& cell,
             const std::string& device_id, const std::string& resolved_for, bool resolved,
             const DeviceInfo* device = nullptr, const std::string& tuned_from = {}) {
        RowSpec r;
        r.op = std::string(op.name);
        r.dims = dims;
        r.size = dims_to_string(op, dims);
        r.device = device_id;
        r.device_kind = cell.key[1];
        r.arch = cell.key[2];
        r.variant = cell.key[3];
        r.backend = cell.backend;
        r.source = std::string(to_string(cell.source));
        r.workspace_bytes = detail::workspace_of(cell);
        r.resolved = resolved;
        r.tuned_from = tuned_from;
        if (device && device->id == device_id)
            r.runs_as = runs_as(cell, *device);
        if (device_kind(r.device_kind) == DeviceKind::Cpu)
            r.threads = detail::stated_threads(cell);
        if (resolved_for != device_id)
            r.resolved_for = resolved_for;
        r.code = identity(cell);
        auto id = r.op + "|" + r.size + "|" + r.device + "|" + cell.key.to_string();
        if (resolved && m_resolved_apart)
            id += "|resolved";
        if (const auto [it, added] = m_seen.emplace(id, m_rows.size()); added) {
            r.index = std::int64_t(m_rows.size());
            m_rows.push_back(std::move(r));
        } else if (resolved) {
            // Planned already (the reference rung; a tuning that chose the reference).
            m_rows[it->second].resolved = true;
            if (!tuned_from.empty())
                m_rows[it->second].tuned_from = tuned_from;
        }
    }
    std::vector<RowSpec> take() { return std::move(m_rows); }

private:
    // One identity per backend (reading a plugin's build ID reads its file).
    const CodeIdentity& identity(const KernelCell& cell) {
        const auto key = cell.backend + "|" + std::string(to_string(cell.source));
        if (auto it = m_identities.find(key); it != m_identities.end())
            return it->second;
        return m_identities.emplace(key, code_identity(m_backends, cell)).first->second;
    }

    BackendRegistry& m_backends;
    bool m_resolved_apart;
    std::vector<RowSpec> m_rows;
    std::map<std::string, std::size_t> m_seen; // row id -> position
    std::map<std::string, CodeIdentity> m_identities;
};

// A device `want` names that is not among `devices`: every device backend is loaded to
// list what is here, and a kind the core knows or a backend provides says why it is not
// (each backend of that kind with its cause, as doctor gives it). Throws
// std::invalid_argument; returns when, with every backend loaded, the device is there.
void explain_missing_device(BackendRegistry& backends, DeviceRegistry& registry,
                            const std::string& want) {
    backends.load_device_backends({});
    const auto devices = registry.devices();
    std::vector<std::string> here;
    for (const auto& d : devices) {
        if (d->info().id == want || d->info().kind == want)
            return;
        here.push_back(d->info().id);
    }
    const std::string kind = want.substr(0, want.find(':'));
    const auto infos = backends.infos();
    std::string why;
    bool provided = device_kind(kind) != DeviceKind::Other;
    for (const auto& info : infos) {
        const auto kinds = provided_device_kinds(info, infos);
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            continue;
        provided = true;
        const auto cause = explain(info);
        if (cause.empty())
            continue;
        why += "; backend '" + info.name + "' is " + std::string(to_string(info.state)) + ": " +
               cause.summary;
        if (const auto fix = cause.fix.substr(0, cause.fix.find('\n')); !fix.empty())
            why += " (" + fix + ")";
    }
    for (const auto& [k, message] : registry.enumeration_errors())
        if (k == kind)
            why += "; the " + k + " backend could not list its devices: " + message;
    if (!provided) {
        std::vector<std::string> known = here;
        for (const auto& d : devices)
            if (std::find(known.begin(), known.end(), d->info().kind) == known.end())
                known.push_back(d->info().kind);
        // A provider of that kind that failed to list its devices still says why.
        throw std::invalid_argument(suggest("device", want, known) + why);
    }
    if (why.empty())
        why = std::any_of(infos.begin(), infos.end(),
                          [&](const BackendInfo& info) {
                              const auto k = provided_device_kinds(info, infos);
                              return std::find(k.begin(), k.end(), kind) != k.end();
                          })
                  ? "; its backend lists no such device here"
                  : "; no installed backend provides " + kind +
                        " devices (`switchyard-cli list "
                        "--include-unavailable`)";
    throw std::invalid_argument("device '" + text::untrusted(want) + "' is not available here" +
                                why + " (devices here: " + text::join(here) + ")");
}

} // namespace

std::map<std::string, std::vector<std::string>>
parse_size_tokens(const std::vector<std::string>& tokens, const std::vector<std::string>& ops) {
    std::vector<std::string> known;
    for (const auto& op : switchyard::ops())
        known.emplace_back(op.name);
    auto op_named = [&](const std::string& name) {
        const auto* op = find_op(name);
        if (!op)
            throw std::invalid_argument(suggest("op", name, known));
        return op;
    };
    std::map<std::string, std::vector<std::string>> sizes;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const auto& token = tokens[i];
        const auto colon = token.find(':');
        const std::string key = colon == std::string::npos ? "*" : token.substr(0, colon);
        const std::string size = colon == std::string::npos ? token : token.substr(colon + 1);
        // "1,024" is the sizes 1 and 024 to a comma-separated list: a number that starts with
        // 0 is refused, since it is most likely the rest of a thousands separator.
        for (std::size_t at = 0; at < size.size();) {
            if (size[at] == '0' && at + 1 < size.size() && size[at + 1] >= '0' &&
                size[at + 1] <= '9') {
                const std::string joined = i > 0 ? tokens[i - 1] + "," + token : token;
                throw std::invalid_argument(
                    "size '" + text::untrusted(token) + "' starts with 0: is '" +
                    text::untrusted(joined) +
                    "' one number with a thousands separator? A comma separates sizes; write "
                    "the number without one (1024, or 1K)");
            }
            const auto x = size.find('x', at);
            if (x == std::string::npos)
                break;
            at = x + 1;
        }
        std::vector<const OpInfo*> targets;
        if (key != "*") {
            targets.push_back(op_named(key));
            if (!ops.empty() && std::find(ops.begin(), ops.end(), key) == ops.end())
                throw std::invalid_argument(
                    "size '" + text::untrusted(token) + "' is for op '" + key +
                    "', which is not in this run (ops: " + text::join(ops) +
                    "); add it to the ops, or give '" + text::untrusted(size) + "' without the op");
        } else if (!ops.empty())
            for (const auto& name : ops)
                targets.push_back(op_named(name));
        else
            for (const auto& op : switchyard::ops())
                targets.push_back(&op);
        for (const auto* op : targets) {
            std::string error;
            const auto dims = parse_dims(*op, size, &error);
            if (!dims)
                throw std::invalid_argument(error);
            try {
                Workload::check_fits_in_memory(*op, *dims);
            } catch (const std::length_error& e) {
                throw std::invalid_argument(e.what());
            }
        }
        sizes[key].push_back(size);
    }
    return sizes;
}

void check_profile_names(const ProfileSettings& st, BackendRegistry& backends, bool here) {
    backends.ensure_initialized();
    const auto op_list = resolve_ops(st);
    std::vector<std::string> op_names;
    for (const auto* op : op_list)
        op_names.emplace_back(op->name);
    for (const auto& [key, list] : st.sizes)
        if (key != "*" && !st.ops.empty() &&
            std::find(op_names.begin(), op_names.end(), key) == op_names.end())
            throw std::invalid_argument("--sizes: op '" + key +
                                        "' is not in this run (ops: " + text::join(op_names) + ")");
    if (!st.sizes.empty())
        for (const auto* op : op_list)
            sizes_for(*op, st, 0);
    // Device ids and kinds: a kind the core knows or some backend provides or declares cells
    // for, alone or with a device number ("cuda:1"). Whether such a device is here is the
    // plan's to say (it lists the devices, loading their backends).
    std::vector<std::string> kinds;
    for (const auto kind : {DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::OpenCl})
        kinds.emplace_back(to_string(kind));
    const auto infos = backends.infos();
    auto add_kind = [&](const std::string& kind) {
        if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            kinds.push_back(kind);
    };
    for (const auto& info : infos)
        for (const auto& kind : provided_device_kinds(info, infos))
            add_kind(kind);
    const auto& registry = backends.kernel_registry();
    for (const auto& entry : registry.manifest())
        add_kind(entry.cell->key[1]);
    for (const auto& want : st.devices) {
        const auto colon = want.find(':');
        const std::string kind = want.substr(0, colon);
        const std::string number = colon == std::string::npos ? "1" : want.substr(colon + 1);
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            throw std::invalid_argument(suggest("device", want, kinds) +
                                        "; give a kind, or KIND:N for one device");
        if (number.empty() || number.size() > 6 ||
            !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
            throw std::invalid_argument("unknown device '" + text::untrusted(want) + "': after '" +
                                        kind + ":' comes a device number (" + kind + ":0)");
    }
    if (here)
        check_cell_names(st, op_list, registry);
    else if (!st.cells.empty()) {
        // Declared on some machine is enough: availability is the nodes' to say.
        std::vector<std::string> known;
        for (const auto& entry : registry.manifest())
            if (std::find(op_names.begin(), op_names.end(), entry.cell->key[0]) != op_names.end())
                known.push_back(cell_name(entry.cell->key));
        std::sort(known.begin(), known.end());
        known.erase(std::unique(known.begin(), known.end()), known.end());
        for (const auto& name : st.cells)
            if (std::none_of(known.begin(), known.end(), [&](const std::string& k) {
                    return k == name || k.substr(k.find('/') + 1) == name;
                }))
                throw std::invalid_argument("--cells: " + suggest("cell", name, known));
    }
    try {
        check_variant(backends, op_names, st.variant);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--variant: " + std::string(e.what()));
    }
}

std::vector<RowSpec> Profiler::plan() const {
    m_backends.ensure_initialized();
    const auto op_list = resolve_ops(m_settings);
    // Device backends publish their providers when loaded: load the plugins that declare
    // kernels for a device kind this run may use before listing the devices.
    m_backends.load_device_backends(m_settings.devices);
    for (const auto& want : m_settings.devices) {
        const auto listed = m_devices.devices();
        if (std::none_of(listed.begin(), listed.end(), [&](const auto& d) {
                return d->info().id == want || d->info().kind == want;
            }))
            explain_missing_device(m_backends, m_devices, want);
    }
    const auto devices =
        resolve_devices(m_devices.devices(), m_settings.devices, m_devices.enumeration_errors());
    const auto llc = cpu_info().last_level_cache_bytes();
    const auto& registry = m_backends.kernel_registry();
    check_cell_names(m_settings, op_list, registry);
    RowList rows(m_backends, m_settings.resolved_apart);
    for (const auto* op : op_list) {
        // Every (op, size) times the CPU reference first, so each row of it has a speedup
        // over the reference (the rows stream in order: the reference is there before them).
        KernelRegistry::CellPtr reference;
        if (m_settings.reference_budget_s > 0)
            reference = registry.resolve_first(
                std::array<TupleKey, 1>{kernel_key(op->name, "cpu", "generic", "reference")});
        for (const auto& dims : sizes_for(*op, m_settings, llc)) {
            if (reference)
                rows.add(*op, dims, *reference, "cpu", "cpu", false);
            for (const auto& dev : devices)
                for (const auto& c :
                     cells_for(*op, dims, dev->info(), registry, m_settings,
                               m_settings.use_tuning ? m_tuned_picker : TunedPicker()))
                    rows.add(*op, dims, *c.cell, c.run_on, dev->info().id, c.resolved, &dev->info(),
                             c.tuned_from);
        }
    }
    return rows.take();
}

} // namespace switchyard
