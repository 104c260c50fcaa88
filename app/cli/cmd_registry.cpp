// SPDX-License-Identifier: MIT
// list, show, matrix, resolve: what is installed, what each backend can do, what resolves.
#include "command.h"

#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/registry/manifestrows.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/report/csv.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/tuning/tunedresolve.h>
#include <switchyard/worker/inspect.h>
#include <switchyard/worker/protocol.h>
#include <switchyard/worker/workermain.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

namespace switchyard::cli {
namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& items, const std::string& sep = ",") {
    std::string out;
    for (const auto& i : items)
        out += (out.empty() ? "" : sep) + i;
    return out;
}

std::string first_line(const std::string& text) {
    const auto nl = text.find('\n');
    return nl == std::string::npos ? text : text.substr(0, nl) + " ...";
}

// Why a backend cannot be used, in one line: the cause table's summary and, for an invalid
// or failed backend, the short reason the stored message gives (`show` adds the fix and the
// whole message).
std::string why_not(const BackendInfo& info) {
    const auto why = explain(info);
    if (why.summary.empty())
        return untrusted(info.error);
    return why.reason.empty() ? why.summary : why.summary + ": " + why.reason;
}

int run_list(bool all, bool include_unavailable, const std::vector<std::string>& exclude_tags,
             bool exclude_set, bool as_json, bool inspect) {
    auto& registry = default_backends();
    ListOptions options;
    if (all)
        options.exclude_tags.clear();
    if (exclude_set)
        options.exclude_tags = exclude_tags;
    options.include_unavailable = include_unavailable;
    // registry.list() semantics, plus the plugins that lost their name (shadowed), which
    // are unavailable by definition and listed with their owner.
    std::vector<BackendInfo> infos;
    // Full: each plugin library's ELF files are read (shared per library, nothing loaded), so
    // a load the loader would refuse (a missing library, symbol version or symbol, another
    // architecture or ISA level) shows as Failed with its reason before anything runs.
    for (auto& info : registry.infos(inspect ? InfoDetail::States : InfoDetail::Summary)) {
        if (options.excludes(info.tags) || (!include_unavailable && !info.is_available()))
            continue;
        infos.push_back(std::move(info));
    }
    if (as_json) {
        json rows = json::array();
        for (const auto& i : infos)
            rows.push_back(summary_json(i));
        std::cout << json_text(envelope("list", {{"backends", rows}}), 2) << "\n";
        return Ok;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& i : infos)
        rows.push_back({i.name, std::string(to_string(i.source)), std::string(to_string(i.state)),
                        join(i.tags), first_line(i.is_available() ? i.description : why_not(i))});
    std::cout << format_table({"NAME", "SOURCE", "STATE", "TAGS", "DESCRIPTION / WHY NOT"}, rows);
    if (!include_unavailable || !all)
        std::cout
            << "\n(hidden: " << (all ? "" : "tags debug/experimental; ")
            << (include_unavailable ? "" : "unavailable backends; ")
            << "use --all --include-unavailable to see everything; `show NAME` explains one)\n";
    return Ok;
}

int run_show(const std::string& name, bool as_json, double load_timeout) {
    auto& registry = default_backends();
    // Described in detail without running any of its code: the library's ELF dependencies
    // are read (and a problem they show is stored). Throws InvalidBackend.
    BackendInfo info = registry.details(name);
    std::string load_error;
    if (info.source == BackendSource::Plugin) {
        // "show" loads a plugin so its registered cells can be compared, in a worker: a
        // hook that exits, aborts, hangs or crashes the loader costs that worker only.
        InspectOptions options;
        options.timeout_s = load_timeout;
        const auto inspected = inspect_backend(info.name, options);
        record_failed_loads(registry, inspected);
        if (!inspected.failed.empty()) {
            info = registry.details(name);
        } else if (const auto it = inspected.backends.find(info.name);
                   it != inspected.backends.end()) {
            apply_inspection(info, it->second);
            load_error = it->second.load_error;
        } else if (!inspected.fatal.empty()) {
            load_error = inspected.fatal;
        }
    } else {
        try {
            registry.lookup(name); // built-in or registered: vetted code
        } catch (const InvalidBackend&) {
            throw;
        } catch (const std::exception& e) {
            load_error = e.what();
        }
        info = registry.details(name);
    }
    if (as_json) {
        json j = envelope("show", detail_json(info));
        if (!load_error.empty() && j["error"].get<std::string>().empty())
            j["error"] = load_error;
        std::cout << json_text(j, 2) << "\n";
        return info.is_available() ? Ok : Failure;
    }
    std::cout << render_text(info);
    if (info.error.empty() && !load_error.empty())
        std::cout << "\nProblem:\n  " << load_error << "\n";
    return info.is_available() ? Ok : Failure;
}

// A string as json::dump() writes it: printable ASCII without quotes or backslashes as it is,
// anything else through nlohmann's own escaping.
void append_json_string(std::string& text, std::string_view s) {
    for (const unsigned char c : s)
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            text += json_text(json(std::string(s)));
            return;
        }
    text += '"';
    text += s;
    text += '"';
}

// manifest_row(registry, m).dump(2), every line indented by four more spaces, appended to
// `text` without building the row as JSON. False (nothing appended) for a row whose metadata
// holds an array or an object, which the caller writes the general way.
// A member of a matrix row: its key, and a string to escape or the text of a scalar.
struct MatrixMember {
    std::string_view key;
    const std::string* string = nullptr;
    std::string scalar;
};

// `members`: the caller's, reused from row to row (no allocation per row).
template <class Registry>
bool append_matrix_row(std::string& text, const Registry& registry,
                       const typename Registry::ManifestEntry& m,
                       std::vector<MatrixMember>& members, const std::string* tuning) {
    using Member = MatrixMember;
    members.clear();
    auto set = [&](std::string_view key, Member value) { // row[key] = value: the last one wins
        value.key = key;
        for (auto& existing : members)
            if (existing.key == key) {
                existing = std::move(value);
                return;
            }
        members.push_back(std::move(value));
    };
    const auto& fields = registry.key_fields();
    for (std::size_t i = 0; i < fields.size(); ++i)
        set(fields[i], {{}, &m.cell->key[i], {}});
    set("available", {{}, nullptr, m.available ? "true" : "false"});
    const std::string source(to_string(m.cell->source));
    set("source", {{}, &source, {}});
    set("backend", {{}, &m.cell->backend, {}});
    if (m.cell->meta.is_object())
        for (const auto& [key, value] : m.cell->meta.members()) {
            if (value.is_array() || value.is_object())
                return false;
            if (value.is_text())
                set(key, {{}, &value.as_text(), {}});
            else
                set(key, {{}, nullptr, json(value).dump()});
        }
    if (tuning)
        set("tuning", {{}, tuning, {}});
    std::sort(members.begin(), members.end(),
              [](const Member& a, const Member& b) { return a.key < b.key; });
    text += "{";
    for (std::size_t i = 0; i < members.size(); ++i) {
        text += i ? ",\n      " : "\n      ";
        append_json_string(text, members[i].key);
        text += ": ";
        if (members[i].string)
            append_json_string(text, *members[i].string);
        else
            text += members[i].scalar;
    }
    text += "\n    }";
    return true;
}

// `matrix --json`, written row by row: the same text as envelope(...).dump(2) of the whole
// manifest_json() (registry/manifestrows.h), without holding every row as JSON (100,000 cells would
// take hundreds of MB). The envelope's keys are in dump()'s (sorted) order.
// "op|device|arch|variant" -> what the tuning files do to that cell here (matrix's TUNING).
using TuningMarks = std::map<std::string, std::string>;

std::string cell_id(const std::vector<std::string>& key) {
    std::string id;
    for (const auto& part : key)
        id += (id.empty() ? "" : "|") + part;
    return id;
}

// The marks of the entries that apply here ("tuned for 4096 to 65536 (over x86-64-v2/tunable)"
// on the chosen cell, "tuned away for ... (to generic/tunable)" on the one it overrides), and
// why each other entry does not apply.
TuningMarks tuning_marks(BackendRegistry& registry, std::vector<std::string>& ignored) {
    TuningMarks marks;
    const auto set = load_tunings(tuning_paths());
    ignored = set.problems;
    auto add = [&](const std::string& id, const std::string& text) {
        auto& mark = marks[id];
        mark += (mark.empty() ? "" : "; ") + text;
    };
    for (const auto& s : tuning_standings(registry, set)) {
        ignored.insert(ignored.end(), s.ignored.begin(), s.ignored.end());
        if (!s.applies)
            continue;
        const auto& e = s.entry;
        auto id = [&](const TunedCell& cell) {
            return cell_id({e.op, e.device, cell.arch(), cell.variant()});
        };
        add(id(e.chosen), "tuned for " + e.sizes_text() + " (over " + e.overrides.cell + ")");
        add(id(e.overrides), "tuned away for " + e.sizes_text() + " (to " + e.chosen.cell + ")");
    }
    return marks;
}

template <class Registry>
const std::string* mark_of(const TuningMarks& marks, const typename Registry::ManifestEntry& m) {
    if (marks.empty())
        return nullptr;
    const auto it = marks.find(cell_id(m.cell->key.parts()));
    return it == marks.end() ? nullptr : &it->second;
}

template <class Registry>
void write_matrix_json(std::ostream& out, const Registry& registry, const char* which,
                       const TuningMarks& marks) {
    const auto entries = registry.manifest();
    std::string text = "{\n  \"cells\": [";
    bool first = true;
    std::vector<MatrixMember> members;
    for (const auto& m : entries) {
        text += first ? "\n    " : ",\n    ";
        first = false;
        const auto* mark = mark_of<Registry>(marks, m);
        if (!append_matrix_row(text, registry, m, members, mark)) {
            auto row_json = manifest_row(registry, m);
            if (mark)
                row_json["tuning"] = *mark;
            const std::string row = json_text(row_json, 2);
            for (char c : row) {
                text += c;
                if (c == '\n')
                    text += "    ";
            }
        }
        if (text.size() > (std::size_t(1) << 16)) {
            out << text;
            text.clear();
        }
    }
    text += first ? "]" : "\n  ]";
    const json tail = envelope("matrix", {{"registry", which}});
    text += ",\n  \"format\": " + tail["format"].dump() +
            ",\n  \"format_version\": " + tail["format_version"].dump() +
            ",\n  \"registry\": " + tail["registry"].dump() + "\n}\n";
    out << text;
}

int run_matrix(bool as_json, bool as_csv, bool show_components, bool no_tuning) {
    auto& registry = default_backends();
    registry.ensure_initialized();
    // The kernel cells the tuning files choose or override here (components are not tuned).
    std::vector<std::string> ignored;
    const auto marks =
        show_components || no_tuning ? TuningMarks{} : tuning_marks(registry, ignored);
    if (as_json) {
        if (show_components)
            write_matrix_json(std::cout, registry.component_registry(), "components", marks);
        else
            write_matrix_json(std::cout, registry.kernel_registry(), "kernels", marks);
        return Ok;
    }
    json rows = show_components ? manifest_json(registry.component_registry())
                                : manifest_json(registry.kernel_registry());
    if (!marks.empty())
        for (auto& r : rows)
            if (const auto it = marks.find(cell_id({r.value("op", ""), r.value("device", ""),
                                                    r.value("arch", ""), r.value("variant", "")}));
                it != marks.end())
                r["tuning"] = it->second;
    std::vector<std::string> fields =
        show_components ? std::vector<std::string>{"kind",      "device", "variant",
                                                   "available", "source", "backend"}
                        : std::vector<std::string>{
                              "op",     "device",          "arch",   "variant", "available",
                              "source", "workspace_bytes", "backend"};
    if (!marks.empty())
        fields.push_back("tuning");
    auto text = [](const json& v) {
        if (v.is_string())
            return v.get<std::string>();
        return v.dump();
    };
    if (as_csv) {
        std::cout << csv_line(fields);
        for (const auto& r : rows) {
            std::vector<std::string> cells;
            for (const auto& f : fields)
                cells.push_back(r.contains(f) ? text(r[f]) : "");
            std::cout << csv_line(cells);
        }
        return Ok;
    }
    std::vector<std::string> header;
    for (const auto& f : fields)
        header.push_back(f == "workspace_bytes" ? "WORKSPACE" : [&] {
            std::string u = f;
            for (auto& c : u)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            return u;
        }());
    std::vector<std::vector<std::string>> table;
    for (const auto& r : rows) {
        std::vector<std::string> cells;
        for (const auto& f : fields)
            cells.push_back(f == "available" ? (r[f].get<bool>() ? "yes" : "no")
                                             : (r.contains(f) ? text(r[f]) : ""));
        table.push_back(std::move(cells));
    }
    std::cout << format_table(header, table);
    for (const auto& why : ignored)
        std::cout << "note: tuning ignored: " << untrusted(why) << "\n";
    return Ok;
}

// Whether any tuning has an entry for (op, device, variant).
bool mentions(const TuningSet& set, const std::string& op, const std::string& device,
              const std::string& variant) {
    for (const auto& t : set.tunings)
        for (const auto& e : t.entries)
            if (e.op == op && e.device == device && e.variant == variant)
                return true;
    return false;
}

// What the tuning files say of this resolution (tuning/tunedresolve.h): nothing is read or
// measured beyond the files unless one of them has an entry for this op and device.
TuningDecision tuned_choice(const Resolution& r, const std::string& op, const Target& target,
                            const std::string& variant, const std::string& size) {
    TuningQuery q{op, target.device, variant};
    q.size = size;
    if (!size.empty()) {
        const OpInfo* info = find_op(op);
        std::string error;
        const auto dims = info ? parse_dims(*info, size, &error) : std::nullopt;
        if (!dims)
            throw std::invalid_argument("--size: " + (info ? error : "unknown op '" + op + "'"));
        q.size = dims_to_string(*info, *dims);
        q.work = size_work(*dims);
    }
    const auto set = load_tunings(tuning_paths());
    if (!mentions(set, op, target.device, variant))
        return {{}, set.problems};
    if (r.winner) {
        const auto& key = r.rungs[*r.winner].key;
        q.pick = cell_name(key);
    }
    q.machine = this_machine();
    return decide_tuning(default_backends(), set, q);
}

int run_resolve(const std::string& op, const std::string& target_text, const std::string& variant,
                const std::string& size, bool use_tuning, bool as_json, double load_timeout) {
    auto& registry = default_backends();
    const Target target = parse_target(target_text);
    registry.ensure_initialized();
    // Where the core's one rule says (worker/inspect.h, resolve_place): a chain that reaches
    // a plugin's cell before it resolves, in a worker, which loads only the plugins whose
    // cells its rungs reach and runs their availability checks (a plugin whose load ends
    // that worker is Failed with its cause, and the rest still resolves); one that resolves
    // at a built-in cell first, here.
    InspectOptions options;
    options.timeout_s = load_timeout;
    InspectResult inspected;
    if (resolve_place(registry, op, target, variant) == ResolvePlace::InProcess)
        inspected.resolution = resolve_kernel(registry, op, target, variant);
    else
        inspected = inspect_resolution({}, op, target_text, variant, options);
    record_failed_loads(registry, inspected);
    for (const auto& f : inspected.failed)
        std::cerr << "switchyard-cli: backend '" << f.backend << "' failed to load ("
                  << to_string(f.cause) << "): " << f.reason << "\n";
    if (!inspected.fatal.empty()) {
        if (inspected.fatal_usage)
            throw std::invalid_argument(inspected.fatal);
        throw std::runtime_error(inspected.fatal);
    }
    if (!inspected.resolution)
        throw std::runtime_error("the inspection worker gave no resolution");
    const Resolution& r = *inspected.resolution;
    const auto tuned = use_tuning ? tuned_choice(r, op, target, variant, size) : TuningDecision{};
    if (as_json) {
        json j = envelope("resolve", to_json(r));
        json tuning = {{"used", use_tuning}, {"applied", nullptr}, {"ignored", tuned.ignored}};
        if (tuned.use)
            tuning["applied"] = {{"file", tuned.use->file},
                                 {"cell", tuned.use->entry.chosen.cell},
                                 {"overrides", tuned.use->entry.overrides.cell},
                                 {"sizes", tuned.use->entry.sizes},
                                 {"speedup", tuned.use->entry.speedup()},
                                 {"explanation", tuned.use->explanation()}};
        j["tuning"] = std::move(tuning);
        json failed = json::array();
        for (const auto& f : inspected.failed)
            failed.push_back({{"backend", f.backend}, {"cause", f.cause}, {"error", f.reason}});
        j["failed_backends"] = failed;
        std::cout << json_text(j, 2) << "\n";
        return r.winner ? Ok : Failure;
    }
    std::cout << "Resolving " << op << " for " << target.device
              << (target.arch.empty() ? "" : ":" + target.arch) << " (variant " << variant
              << "):\n";
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < r.rungs.size(); ++i) {
        const auto& rung = r.rungs[i];
        // With a tuning, "=>" is the tuned cell and the chain's pick says what it was.
        const bool pick = r.winner && *r.winner == i;
        const bool tuned_here = tuned.use && tuned.use->cell->key == rung.key;
        const bool win = tuned.use ? tuned_here : pick;
        const std::string note = tuned_here ? "selected (tuned)"
                                 : win      ? "selected"
                                 : pick     ? "the chain's pick (tuned away)"
                                            : rung.why_not;
        rows.push_back({win ? "=>" : "", std::to_string(i + 1), rung.key.to_string(),
                        rung.declared ? "declared" : "-",
                        rung.declared ? (rung.available ? "available" : "unavailable") : "-",
                        rung.backend, note});
    }
    std::cout << format_table({"", "#", "KEY", "DECLARED", "HERE", "BACKEND", "NOTE"}, rows);
    if (tuned.use) {
        const auto& cell = *tuned.use->cell;
        std::cout << "\nSelected: " << cell.key.to_string() << " from backend '" << cell.backend
                  << "', " << tuned.use->explanation() << "\n  (tuning " << tuned.use->file
                  << "; --no-tuning resolves by the chain alone)\n";
    } else if (r.winner) {
        std::cout << "\nSelected: " << r.rungs[*r.winner].key.to_string() << " from backend '"
                  << r.rungs[*r.winner].backend << "'\n";
    } else {
        std::cout << "\nNothing resolves on this machine.\n";
    }
    if (r.first_declared && (!r.winner || *r.first_declared != *r.winner))
        std::cout << "On hardware that has it, " << r.rungs[*r.first_declared].key.to_string()
                  << " would be selected.\n";
    for (const auto& why : tuned.ignored)
        std::cout << "note: tuning ignored: " << why << "\n";
    return r.winner ? Ok : Failure;
}

} // namespace

// The inspection worker: the request on stdin, the protocol on the real stdout (anything a
// plugin prints goes to stderr).
void add_registry_commands(CLI::App& app, Context& context) {
    {
        // The worker processes (worker/workermain.h): the request on stdin, the protocol on
        // stdout. Hidden.
        auto* worker = app.add_subcommand("__worker", "internal: worker modes");
        worker->group("");
        worker->require_subcommand(1);
        for (const auto mode : {WorkerMode::Profile, WorkerMode::Inspect, WorkerMode::Slices}) {
            auto* sub = worker->add_subcommand(
                std::string(to_string(mode)),
                mode == WorkerMode::Profile ? "run rows of a plan (request on stdin)"
                : mode == WorkerMode::Slices
                    ? "run slices of rows on command (request, then commands, on stdin)"
                    : "load plugins, describe them (request on stdin)");
            sub->callback([&context, mode] {
                context.exit_code =
                    worker_main(mode, {default_backends(), default_devices(),
                                       [](const std::vector<std::string>& dirs) {
                                           default_backends().set_plugin_discovery(
                                               PluginSearchPath::from_dirs(dirs).discovery());
                                       }});
            });
        }
    }
    {
        auto* cmd = app.add_subcommand("list", "List the installed backends (sorted)");
        auto all = std::make_shared<bool>(false);
        auto unavailable = std::make_shared<bool>(false);
        auto json_out = std::make_shared<bool>(false);
        auto tags = std::make_shared<std::vector<std::string>>();
        cmd->add_flag("--all", *all, "Also show backends tagged debug or experimental");
        cmd->add_flag("--include-unavailable", *unavailable,
                      "Also show backends that cannot be used here");
        auto* excl =
            cmd->add_option("--exclude-tags", *tags,
                            "Hide backends with any of these tags (default: debug,experimental)")
                ->delimiter(',');
        cmd->add_flag("--json", *json_out, "Machine-readable output");
        auto no_inspect = std::make_shared<bool>(false);
        cmd->add_flag("--no-inspect", *no_inspect,
                      "Do not read the plugin libraries' ELF files (what the loader would refuse "
                      "is then found only by show, doctor or a load)");
        set_action(cmd, context, [=] {
            return run_list(*all, *unavailable, *tags, excl->count() > 0, *json_out, !*no_inspect);
        });
    }
    {
        auto* cmd = app.add_subcommand(
            "show",
            "Everything known about one backend: capabilities, dependencies, cells, errors");
        auto name = std::make_shared<std::string>();
        auto json_out = std::make_shared<bool>(false);
        cmd->add_option("NAME", *name, "Backend name")->required();
        cmd->add_flag("--json", *json_out, "Machine-readable output");
        auto load_timeout = std::make_shared<double>(InspectOptions{}.timeout_s);
        add_load_timeout_option(cmd, *load_timeout);
        set_action(cmd, context, [=] { return run_show(*name, *json_out, *load_timeout); });
    }
    {
        auto* cmd = app.add_subcommand(
            "matrix", "Every declared kernel cell, available here or not (seed manifest order)");
        auto json_out = std::make_shared<bool>(false);
        auto csv_out = std::make_shared<bool>(false);
        auto comps = std::make_shared<bool>(false);
        auto* j = cmd->add_flag("--json", *json_out, "JSON rows");
        cmd->add_flag("--csv", *csv_out, "CSV rows")->excludes(j);
        cmd->add_flag("--components", *comps,
                      "The component registry instead of the kernel registry");
        auto no_tuning = std::make_shared<bool>(false);
        cmd->add_flag("--no-tuning", *no_tuning,
                      "Leave out the TUNING column: which cells the tuning files choose or "
                      "override on this machine");
        set_action(cmd, context,
                   [=] { return run_matrix(*json_out, *csv_out, *comps, *no_tuning); });
    }
    {
        auto* cmd = app.add_subcommand("resolve",
                                       "Walk the fallback chain of an op and explain every rung");
        auto op = std::make_shared<std::string>();
        auto target = std::make_shared<std::string>("cpu");
        auto variant = std::make_shared<std::string>("default");
        auto json_out = std::make_shared<bool>(false);
        auto size = std::make_shared<std::string>();
        auto no_tuning = std::make_shared<bool>(false);
        cmd->add_option("OP", *op, "Op name (flow_match_step, flow_sde_step, gemm, rms_norm, ...)")
            ->required();
        cmd->add_option("--size", *size,
                        "The size to resolve for (N, BxD, MxNxK): a tuning's entry applies to "
                        "the sizes it was measured for");
        cmd->add_flag("--no-tuning", *no_tuning,
                      "Resolve by the fallback chain alone (ignore the tuning files: "
                      "SWITCHYARD_TUNING, ~/.local/share/switchyard/tuning)");
        cmd->add_option("--target", *target,
                        "DEVICE[:ARCH], e.g. cuda:sm_90, cpu:x86-64-v2, opencl (default: cpu)");
        cmd->add_option("--variant", *variant,
                        "Variant to look for on every rung (default: default)");
        cmd->add_flag("--json", *json_out, "Machine-readable output");
        auto load_timeout = std::make_shared<double>(InspectOptions{}.timeout_s);
        add_load_timeout_option(cmd, *load_timeout);
        set_action(cmd, context, [=] {
            return run_resolve(*op, *target, *variant, *size, !*no_tuning, *json_out,
                               *load_timeout);
        });
    }
}

} // namespace switchyard::cli
