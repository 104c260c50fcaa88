// SPDX-License-Identifier: MIT
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/worker/protocol.h>

#include "util/jsonread.h"

#include <algorithm>
#include <array>
#include <set>

namespace switchyard::protocol {

namespace {

// A request's ceiling cache: {"folder", "fresh", "max_age_days"}.
nlohmann::json ceiling_cache_json(const std::string& folder, const CeilingCachePolicy& policy) {
    return {{"folder", folder}, {"fresh", policy.fresh}, {"max_age_days", policy.max_age_days}};
}
void read_ceiling_cache(const jsonread::Value& c, std::string& folder, CeilingCachePolicy& policy) {
    c.expect(jsonread::Kind::Object);
    folder = c.str("folder");
    policy.fresh = c.boolean("fresh", false);
    policy.max_age_days = c.num("max_age_days", kDefaultCeilingsMaxAgeDays);
}

constexpr std::array<std::pair<Event, std::string_view>, 9> kNames = {{
    {Event::Context, "context"},
    {Event::Plan, "plan"},
    {Event::RowStart, "row_start"},
    {Event::Progress, "progress"},
    {Event::Row, "row"},
    {Event::Done, "done"},
    {Event::Fatal, "fatal"},
    {Event::Control, "control"},
    {Event::Turn, "turn"},
}};

nlohmann::json event(Event e) {
    return {{"event", std::string(to_string(e))}};
}

void read_body(const jsonread::Value& v, Message& m) {
    switch (m.event) {
    case Event::Context:
        if (const auto c = v.find("context"))
            m.context = RunContext::from_json(c->expect(jsonread::Kind::Object).raw());
        if (const auto p = v.find("peaks"))
            m.peaks = CpuPeaks::from_json(p->raw());
        break;
    case Event::Plan: {
        const auto rows = v.at("rows").expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < rows.size(); ++i)
            m.plan.push_back(rows[i].get<RowSpec>());
        break;
    }
    case Event::RowStart:
        m.index = v.integer("index");
        m.pass = v.integer("pass", 0, 0);
        break;
    case Event::Progress:
        m.index = v.integer("index", -1, -1);
        m.phase = v.str("phase", std::string());
        m.samples = v.integer("samples", 0);
        break;
    case Event::Row:
        m.row = v.get<ProfileRow>("row");
        m.pass = v.integer("pass", 0, 0);
        break;
    case Event::Control:
        m.phase = v.str("when");
        m.median = v.num("median");
        break;
    case Event::Turn:
        m.index = v.integer("index");
        m.median = v.num("median");
        m.samples = v.integer("samples", 0, 0);
        m.last = v.boolean("last", false);
        break;
    case Event::Done:
        if (v.contains("rows"))
            m.rows_total = v.integer("rows");
        if (v.contains("not_ok"))
            m.not_ok = v.integer("not_ok");
        break;
    case Event::Fatal:
        m.message = v.str("message", std::string("the worker failed"));
        m.usage = v.boolean("usage", false);
        break;
    }
}

} // namespace

std::string_view to_string(Event e) noexcept {
    for (const auto& [event, name] : kNames)
        if (event == e)
            return name;
    return "done";
}

std::optional<Event> event_from_string(std::string_view name) noexcept {
    for (const auto& [event, n] : kNames)
        if (n == name)
            return event;
    return std::nullopt;
}

nlohmann::json context_message(const RunContext* context, const CpuPeaks* peaks) {
    auto j = event(Event::Context);
    if (context)
        j["context"] = context->to_json();
    if (peaks)
        j["peaks"] = peaks->to_json();
    return j;
}

nlohmann::json plan_message(const std::vector<RowSpec>& plan) {
    auto j = event(Event::Plan);
    j["rows"] = plan;
    return j;
}

nlohmann::json row_start_message(std::int64_t index, std::int64_t pass) {
    auto j = event(Event::RowStart);
    j["index"] = index;
    if (pass > 0)
        j["pass"] = pass;
    return j;
}

nlohmann::json progress_message(std::int64_t index, const std::string& phase,
                                std::int64_t samples) {
    auto j = event(Event::Progress);
    j["index"] = index;
    j["phase"] = phase;
    j["samples"] = samples;
    return j;
}

nlohmann::json row_message(const ProfileRow& row, std::int64_t pass) {
    auto j = event(Event::Row);
    j["row"] = row;
    if (pass > 0)
        j["pass"] = pass;
    return j;
}

nlohmann::json control_message(const std::string& when, double median) {
    auto j = event(Event::Control);
    j["when"] = when;
    j["median"] = median;
    return j;
}

nlohmann::json turn_message(std::int64_t index, double median, std::int64_t samples, bool last) {
    auto j = event(Event::Turn);
    j["index"] = index;
    j["median"] = median;
    j["samples"] = samples;
    if (last)
        j["last"] = true;
    return j;
}

nlohmann::json turn_command(bool go) {
    return {{"turn", go ? "go" : "stop"}};
}

bool turn_command_from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "command");
    v.expect(jsonread::Kind::Object);
    const auto what = v.str("turn");
    if (what != "go" && what != "stop")
        throw std::runtime_error("command.turn: expected \"go\" or \"stop\", got \"" + what + "\"");
    return what == "go";
}

nlohmann::json done_message() {
    return event(Event::Done);
}

nlohmann::json done_message(std::int64_t rows_total, std::int64_t not_ok) {
    auto j = event(Event::Done);
    j["rows"] = rows_total;
    j["not_ok"] = not_ok;
    return j;
}

nlohmann::json fatal_message(const std::string& message, bool usage) {
    auto j = event(Event::Fatal);
    if (usage)
        j["usage"] = true;
    j["message"] = message;
    return j;
}

std::string to_line(const nlohmann::json& message) {
    return jsonread::dump(message) + "\n";
}

std::optional<Message> parse(const nlohmann::json& j) {
    if (!j.is_object())
        return std::nullopt;
    const auto it = j.find("event");
    if (it == j.end() || !it->is_string())
        return std::nullopt;
    const auto e = event_from_string(it->get<std::string>());
    if (!e)
        return std::nullopt;
    Message m;
    m.event = *e;
    read_body(jsonread::Value::at_path(j, ""), m);
    return m;
}

// --- The inspection worker ---

namespace {

constexpr std::array<std::pair<InspectEvent, std::string_view>, 9> kInspectNames = {{
    {InspectEvent::Loading, "loading"},
    {InspectEvent::Backend, "backend"},
    {InspectEvent::Resolution, "resolution"},
    {InspectEvent::ResolutionError, "resolution_error"},
    {InspectEvent::Listing, "listing"},
    {InspectEvent::Probing, "probing"},
    {InspectEvent::Devices, "devices"},
    {InspectEvent::Fatal, "fatal"},
    {InspectEvent::Done, "done"},
}};

nlohmann::json event(InspectEvent e) {
    return {{"event", std::string(to_string(e))}};
}

std::optional<BackendState> state_from_string(std::string_view id) {
    for (const auto state :
         {BackendState::Discovered, BackendState::Invalid, BackendState::Unavailable,
          BackendState::Loaded, BackendState::Failed, BackendState::Shadowed})
        if (to_string(state) == id)
            return state;
    return std::nullopt;
}

nlohmann::json to_json(const ResolveRequest& r) {
    return {{"op", r.op}, {"target", r.target}, {"variant", r.variant}};
}

ResolveRequest read_resolve(const jsonread::Value& v) {
    v.expect(jsonread::Kind::Object);
    return {v.str("op"), v.str("target", std::string("cpu")),
            v.str("variant", std::string("default"))};
}

nlohmann::json to_json(const InspectedBackend& b) {
    nlohmann::json j = {{"state", std::string(to_string(b.state))},
                        {"cause", b.cause},
                        {"error", b.error},
                        {"diagnostics", b.diagnostics},
                        {"device_kinds", b.device_kinds}};
    if (!b.load_error.empty())
        j["load_error"] = b.load_error;
    return j;
}

InspectedBackend read_backend(const jsonread::Value& v) {
    v.expect(jsonread::Kind::Object);
    InspectedBackend b;
    b.state = v.at("state").id_as("backend state", state_from_string);
    b.cause = v.at("cause").id_as("backend cause", backend_cause_from_string);
    b.error = v.str("error", std::string());
    b.diagnostics = v.strings("diagnostics");
    b.device_kinds = v.strings("device_kinds");
    b.load_error = v.str("load_error", std::string());
    return b;
}

void read_inspect_body(const jsonread::Value& v, InspectMessage& m) {
    switch (m.event) {
    case InspectEvent::Loading:
        m.backend = v.str("backend");
        break;
    case InspectEvent::Backend:
        m.backend = v.str("backend");
        m.info = read_backend(v.at("info"));
        break;
    case InspectEvent::Resolution:
        m.resolution =
            resolution_from_json(v.at("resolution").expect(jsonread::Kind::Object).raw());
        break;
    case InspectEvent::ResolutionError:
        m.op = v.str("op", std::string());
        m.message = v.str("message", std::string());
        break;
    case InspectEvent::Listing:
        m.kind = v.str("kind");
        break;
    case InspectEvent::Probing:
        m.kind = v.str("kind");
        m.device = v.str("device", std::string("?"));
        break;
    case InspectEvent::Devices: {
        const auto devices = v.at("devices").expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < devices.size(); ++i) {
            try {
                m.devices.push_back(devices[i].raw().get<DeviceInfo>());
            } catch (const std::exception& e) {
                // A device the worker could not describe is not listed; the error says why.
                const auto& raw = devices[i].raw();
                std::string kind = "?";
                if (raw.is_object() && raw.contains("kind") && raw["kind"].is_string())
                    kind = raw["kind"].get<std::string>();
                m.listing_errors.emplace_back(
                    kind, std::string("a device it listed could not be read: ") + e.what());
            }
        }
        if (const auto errors = v.find("errors")) {
            errors->expect(jsonread::Kind::Array);
            for (std::size_t i = 0; i < errors->size(); ++i) {
                const auto row = (*errors)[i];
                m.listing_errors.emplace_back(row.str("kind"), row.str("message"));
            }
        }
        break;
    }
    case InspectEvent::Fatal:
        m.message = v.str("message", std::string("the inspection worker failed"));
        m.usage = v.boolean("usage", false);
        break;
    case InspectEvent::Done:
        break;
    }
}

} // namespace

InspectedBackend InspectedBackend::of(const BackendInfo& info, std::string load_error) {
    InspectedBackend b;
    b.state = info.state;
    b.cause = info.cause;
    b.error = info.error;
    b.diagnostics = info.diagnostics;
    std::set<std::string> kinds;
    if (info.provides_devices) {
        kinds.insert(info.provides_devices->begin(), info.provides_devices->end());
    } else {
        for (const auto* cells : {&info.declared_kernels, &info.declared_components})
            for (const auto& c : *cells)
                if (c.key.size() > 1)
                    kinds.insert(c.key[1]);
    }
    kinds.erase("cpu");
    b.device_kinds.assign(kinds.begin(), kinds.end());
    b.load_error = std::move(load_error);
    return b;
}

nlohmann::json to_json(const InspectRequest& r) {
    nlohmann::json failed = nlohmann::json::array();
    for (const auto& f : r.failed)
        failed.push_back({{"name", f.backend}, {"cause", f.cause}, {"reason", f.reason}});
    nlohmann::json j = {{"load", r.load}, {"failed", failed}};
    if (!r.plugin_dirs.empty())
        j["plugin_dirs"] = r.plugin_dirs;
    if (r.resolve)
        j["resolve"] = to_json(*r.resolve);
    if (!r.resolve_all.empty()) {
        auto all = nlohmann::json::array();
        for (const auto& q : r.resolve_all)
            all.push_back(to_json(q));
        j["resolve_all"] = std::move(all);
    }
    if (r.devices) {
        j["devices"] = {{"probe", r.probe}};
        if (!r.ceiling_cache.empty())
            j["devices"]["ceiling_cache"] = ceiling_cache_json(r.ceiling_cache, r.ceiling_policy);
    }
    return j;
}

InspectRequest inspect_request_from_json(const nlohmann::json& j) {
    const jsonread::Value v(j);
    v.expect(jsonread::Kind::Object);
    InspectRequest r;
    r.load = v.at("load").strings();
    if (const auto failed = v.find("failed")) {
        failed->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < failed->size(); ++i) {
            const auto f = (*failed)[i];
            r.failed.push_back({f.str("name"),
                                f.at("cause").id_as("backend cause", backend_cause_from_string),
                                f.str("reason", std::string())});
        }
    }
    r.plugin_dirs = v.strings("plugin_dirs");
    if (const auto one = v.find("resolve"))
        r.resolve = read_resolve(*one);
    if (const auto all = v.find("resolve_all")) {
        all->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < all->size(); ++i)
            r.resolve_all.push_back(read_resolve((*all)[i]));
    }
    if (const auto devices = v.find("devices")) {
        devices->expect(jsonread::Kind::Object);
        r.devices = true;
        r.probe = devices->boolean("probe", false);
        if (const auto c = devices->find("ceiling_cache"))
            read_ceiling_cache(*c, r.ceiling_cache, r.ceiling_policy);
    }
    return r;
}

std::string_view to_string(InspectEvent e) noexcept {
    for (const auto& [event, name] : kInspectNames)
        if (event == e)
            return name;
    return "done";
}

nlohmann::json loading_message(const std::string& backend) {
    auto j = event(InspectEvent::Loading);
    j["backend"] = backend;
    return j;
}

nlohmann::json backend_message(const std::string& backend, const InspectedBackend& info) {
    auto j = event(InspectEvent::Backend);
    j["backend"] = backend;
    j["info"] = to_json(info);
    return j;
}

nlohmann::json resolution_message(const Resolution& resolution) {
    auto j = event(InspectEvent::Resolution);
    j["resolution"] = to_json(resolution);
    return j;
}

nlohmann::json resolution_error_message(const std::string& op, const std::string& message) {
    auto j = event(InspectEvent::ResolutionError);
    j["op"] = op;
    j["message"] = message;
    return j;
}

nlohmann::json listing_message(const std::string& kind) {
    auto j = event(InspectEvent::Listing);
    j["kind"] = kind;
    return j;
}

nlohmann::json probing_message(const std::string& kind, const std::string& device) {
    auto j = event(InspectEvent::Probing);
    j["kind"] = kind;
    j["device"] = device;
    return j;
}

nlohmann::json devices_message(const std::vector<DeviceInfo>& devices,
                               const std::vector<std::pair<std::string, std::string>>& errors) {
    auto j = event(InspectEvent::Devices);
    auto list = nlohmann::json::array();
    for (const auto& d : devices)
        list.push_back(d);
    j["devices"] = std::move(list);
    if (!errors.empty()) {
        auto rows = nlohmann::json::array();
        for (const auto& [kind, message] : errors)
            rows.push_back({{"kind", kind}, {"message", message}});
        j["errors"] = std::move(rows);
    }
    return j;
}

std::optional<InspectMessage> parse_inspect(const nlohmann::json& j) {
    if (!j.is_object())
        return std::nullopt;
    const auto it = j.find("event");
    if (it == j.end() || !it->is_string())
        return std::nullopt;
    const auto& name = it->get_ref<const std::string&>();
    const auto found = std::find_if(kInspectNames.begin(), kInspectNames.end(),
                                    [&](const auto& p) { return p.second == name; });
    if (found == kInspectNames.end())
        return std::nullopt;
    InspectMessage m;
    m.event = found->first;
    read_inspect_body(jsonread::Value::at_path(j, ""), m);
    return m;
}

nlohmann::json to_json(const ProfileRequest& request) {
    nlohmann::json j = {{"settings", request.settings.to_json()}, {"start", request.start}};
    if (request.pass > 0)
        j["pass"] = request.pass;
    if (request.peaks)
        j["peaks"] = request.peaks->to_json();
    if (!request.ceiling_cache.empty())
        j["ceiling_cache"] = ceiling_cache_json(request.ceiling_cache, request.ceiling_policy);
    if (!request.skip.empty())
        j["skip"] = request.skip;
    if (request.shared_buffers)
        j["shared_buffers"] = true;
    if (request.shared_at != 0)
        j["shared_at"] = request.shared_at;
    return j;
}

ProfileRequest profile_request_from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "request");
    v.expect(jsonread::Kind::Object);
    ProfileRequest r;
    r.settings = ProfileSettings::from_json(v.at("settings").expect(jsonread::Kind::Object).raw());
    r.start = v.integer("start", 0, 0);
    r.pass = v.integer("pass", 0, 0);
    if (const auto p = v.find("peaks"))
        r.peaks = CpuPeaks::from_json(p->raw());
    if (const auto c = v.find("ceiling_cache"))
        read_ceiling_cache(*c, r.ceiling_cache, r.ceiling_policy);
    if (const auto skip = v.find("skip")) {
        skip->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < skip->size(); ++i)
            r.skip.push_back((*skip)[i].integer());
    }
    r.shared_buffers = v.boolean("shared_buffers", false);
    r.shared_at = std::uint64_t(v.integer("shared_at", 0, 0));
    return r;
}

nlohmann::json to_json(const SliceCommand& command) {
    return {{"index", command.index},
            {"slices", command.slices},
            {"first", command.first},
            {"placement", command.placement},
            {"chunk_s", command.chunk_s}};
}

SliceCommand slice_command_from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "slice");
    v.expect(jsonread::Kind::Object);
    SliceCommand c;
    c.index = v.integer("index", std::nullopt, 0);
    c.slices = v.integer("slices", 1, 1, ProfileSettings::kMaxRepeat);
    c.first = v.boolean("first", true);
    c.placement = v.integer("placement", 0, 0);
    c.chunk_s = v.num("chunk_s", 0.0);
    if (!(c.chunk_s >= 0) || c.chunk_s > 3600)
        throw std::runtime_error("slice.chunk_s: expected 0 - 3600 seconds");
    return c;
}

} // namespace switchyard::protocol
